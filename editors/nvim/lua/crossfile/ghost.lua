-- crossfile.ghost: the suggestion shown as ghost text (extmarks), and accepting it. An arena battle
-- shows its two suggestions at once: 1 as the ghost text (labelled "1"), 2 as virtual lines below
-- the cursor line (labelled "2").

local M = {}

M.ns = vim.api.nvim_create_namespace('crossfile.ghost')

--- Per buffer: { row, col, text, tick, cursor = {row, col}, battle? } of the suggestion shown;
--- a battle's `battle` = { id, texts = {1's, 2's}, at = {{row, col}, {row, col}} }, `text` being 1's.
local shown = {}
--- Per buffer: the changedtick right after an accept (its own edit asks for no new completion).
local accepted_tick = {}

vim.api.nvim_set_hl(0, 'CrossfileGhost', { link = 'Comment', default = true })
vim.api.nvim_set_hl(0, 'CrossfileArenaLabel', { link = 'PmenuSel', default = true })

local function display(buf, line)
  -- Tabs in virtual text would show as ^I: shown as spaces, the suggestion itself is unchanged.
  local ts = vim.bo[buf].tabstop
  return (line:gsub('\t', string.rep(' ', ts > 0 and ts or 8)))
end

--- Clears the ghost text of `buf`.
function M.clear(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  shown[buf] = nil
  if vim.api.nvim_buf_is_valid(buf) then vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1) end
end

-- The extmark options of `text` shown at `row` (its first line inline, the others as virtual lines);
-- `label`: the battle's label after the line ("1"); `below`: more virtual lines after its own.
local function ghost_opts(buf, text, label, below)
  local lines = vim.split(text, '\n', { plain = true })
  local first = lines[1]
  local opts = { hl_mode = 'combine', right_gravity = false, priority = 1000 }
  if first ~= '' then
    opts.virt_text = { { display(buf, first), 'CrossfileGhost' } }
    opts.virt_text_pos = 'inline'
  end
  local virt_lines = {}
  for i = 2, #lines do virt_lines[#virt_lines + 1] = { { display(buf, lines[i]), 'CrossfileGhost' } } end
  vim.list_extend(virt_lines, below or {})
  if #virt_lines > 0 then opts.virt_lines = virt_lines end
  return opts, label and { { ' ' .. label .. ' ', 'CrossfileArenaLabel' } } or nil
end

local function remember(buf, row, col, text, battle)
  local cursor = vim.api.nvim_get_current_buf() == buf and vim.api.nvim_win_get_cursor(0) or nil
  shown[buf] = {
    row = row,
    col = col,
    text = text,
    tick = vim.api.nvim_buf_get_changedtick(buf),
    cursor = cursor,
    battle = battle,
  }
end

--- Shows `text` at 0-based `row` and byte column `col` of `buf`: the first line inline at that
--- column, the others as virtual lines below it.
function M.show(buf, row, col, text)
  M.clear(buf)
  if text == nil or text == '' then return end
  vim.api.nvim_buf_set_extmark(buf, M.ns, row, col, (ghost_opts(buf, text)))
  remember(buf, row, col, text)
end

-- The virtual lines of a battle's suggestion 2 starting at display column `width` of its line:
-- labelled "2" at the line's start, its first line under where it goes in, the others as they are.
local function second_lines(buf, text, width)
  local lines = vim.split(text, '\n', { plain = true })
  local label = ' 2 '
  local out = {}
  for i, line in ipairs(lines) do
    if i == 1 then
      local pad = math.max(width - #label, 1)
      out[#out + 1] = { { label, 'CrossfileArenaLabel' }, { string.rep(' ', pad), 'CrossfileGhost' },
        { display(buf, line), 'CrossfileGhost' } }
    else
      out[#out + 1] = { { display(buf, line), 'CrossfileGhost' } }
    end
  end
  return out
end

--- Shows an arena battle in `buf`: `battle` = { id, texts = {1's, 2's}, at = {{row, col}, {row,
--- col}} } (0-based rows, byte columns). Suggestion 1 shows as ghost text labelled "1" after the
--- line, suggestion 2 as virtual lines below (after 1's own), labelled "2"; the arms are never
--- shown (the server does not say them).
function M.show_battle(buf, battle)
  M.clear(buf)
  local row, col = battle.at[1][1], battle.at[1][2]
  local row2, col2 = battle.at[2][1], battle.at[2][2]
  local line2 = vim.api.nvim_buf_get_lines(buf, row2, row2 + 1, false)[1] or ''
  local width = vim.fn.strdisplaywidth(display(buf, line2:sub(1, col2)))
  local below = second_lines(buf, battle.texts[2], width)
  local opts, label = ghost_opts(buf, battle.texts[1], '1', row2 == row and below or nil)
  vim.api.nvim_buf_set_extmark(buf, M.ns, row, col, opts)
  vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, { virt_text = label, virt_text_pos = 'eol', hl_mode = 'combine',
    priority = 1000 })
  if row2 ~= row then vim.api.nvim_buf_set_extmark(buf, M.ns, row2, 0, { virt_lines = below, priority = 1000 }) end
  remember(buf, row, col, battle.texts[1], battle)
end

--- The suggestion shown in `buf` (all its lines), or nil.
function M.get(buf)
  local s = shown[buf]
  if s and s.tick == vim.api.nvim_buf_get_changedtick(buf) then return s end
  return nil
end

--- The battle shown in `buf` (see M.show_battle), or nil.
function M.battle(buf)
  local s = M.get(buf)
  return s and s.battle or nil
end

--- Whether the cursor is still where it was when the ghost text of `buf` was shown.
function M.cursor_unmoved(buf)
  local s = shown[buf]
  if not s or not s.cursor then return true end
  local now = vim.api.nvim_win_get_cursor(0)
  return now[1] == s.cursor[1] and now[2] == s.cursor[2]
end

--- Whether `tick` is the changedtick an accept left in `buf`.
function M.is_accept_tick(buf, tick)
  return accepted_tick[buf] == tick
end

--- Inserts the suggestion of `buf`, or its first `part` of it, and moves the cursor after it; the
--- rest stays shown. In a battle, `which` (1 or 2, default 1) is the suggestion inserted (2 whole).
--- Returns the inserted text, or nil when none shows, and the battle it ends, if any.
function M.accept(buf, part, which)
  buf = buf or vim.api.nvim_get_current_buf()
  local s = M.get(buf)
  if not s then return nil end
  local battle = s.battle
  local full, row, col = s.text, s.row, s.col
  if battle and which == 2 then
    full, row, col, part = battle.texts[2], battle.at[2][1], battle.at[2][2], nil
  end
  local text = part and full:sub(1, #part) == part and part or full
  local rest = full:sub(#text + 1)
  local lines = vim.split(text, '\n', { plain = true })
  M.clear(buf)
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = #lines == 1 and col + #lines[1] or #lines[#lines]
  accepted_tick[buf] = vim.api.nvim_buf_get_changedtick(buf)
  if vim.api.nvim_get_current_buf() == buf then
    pcall(vim.api.nvim_win_set_cursor, 0, { end_row + 1, end_col })
  end
  if rest ~= '' then M.show(buf, end_row, end_col, rest) end
  return text, battle
end

--- The first line of a suggestion to accept with accept_line: up to its first line break, or the
--- line break and the next line when it starts with one.
function M.first_line(text)
  local lead = text:match('^\n') and '\n' or ''
  local body = text:sub(#lead + 1)
  return lead .. (body:match('^[^\n]*') or '')
end

function M.forget(buf)
  shown[buf] = nil
  accepted_tick[buf] = nil
end

return M
