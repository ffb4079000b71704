-- crossfile.ghost: the suggestion shown as ghost text (extmarks), and accepting it.

local M = {}

M.ns = vim.api.nvim_create_namespace('crossfile.ghost')

--- Per buffer: { row, col, text, tick, cursor = {row, col} } of the suggestion shown.
local shown = {}
--- Per buffer: the changedtick right after an accept (its own edit asks for no new completion).
local accepted_tick = {}

vim.api.nvim_set_hl(0, 'CrossfileGhost', { link = 'Comment', default = true })

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

--- Shows `text` at 0-based `row` and byte column `col` of `buf`: the first line inline at that
--- column, the others as virtual lines below it.
function M.show(buf, row, col, text)
  M.clear(buf)
  if text == nil or text == '' then return end
  local lines = vim.split(text, '\n', { plain = true })
  local first = lines[1]
  local opts = { hl_mode = 'combine', right_gravity = false, priority = 1000 }
  if first ~= '' then
    opts.virt_text = { { display(buf, first), 'CrossfileGhost' } }
    opts.virt_text_pos = 'inline'
  end
  if #lines > 1 then
    local virt_lines = {}
    for i = 2, #lines do virt_lines[#virt_lines + 1] = { { display(buf, lines[i]), 'CrossfileGhost' } } end
    opts.virt_lines = virt_lines
  end
  vim.api.nvim_buf_set_extmark(buf, M.ns, row, col, opts)
  local cursor = vim.api.nvim_get_current_buf() == buf and vim.api.nvim_win_get_cursor(0) or nil
  shown[buf] = {
    row = row,
    col = col,
    text = text,
    tick = vim.api.nvim_buf_get_changedtick(buf),
    cursor = cursor,
  }
end

--- The suggestion shown in `buf` (all its lines), or nil.
function M.get(buf)
  local s = shown[buf]
  if s and s.tick == vim.api.nvim_buf_get_changedtick(buf) then return s end
  return nil
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
--- rest stays shown. Returns the inserted text, or nil when none shows.
function M.accept(buf, part)
  buf = buf or vim.api.nvim_get_current_buf()
  local s = M.get(buf)
  if not s then return nil end
  local text = part and s.text:sub(1, #part) == part and part or s.text
  local rest = s.text:sub(#text + 1)
  local lines = vim.split(text, '\n', { plain = true })
  M.clear(buf)
  vim.api.nvim_buf_set_text(buf, s.row, s.col, s.row, s.col, lines)
  local end_row = s.row + #lines - 1
  local end_col = #lines == 1 and s.col + #lines[1] or #lines[#lines]
  accepted_tick[buf] = vim.api.nvim_buf_get_changedtick(buf)
  if vim.api.nvim_get_current_buf() == buf then
    pcall(vim.api.nvim_win_set_cursor, 0, { end_row + 1, end_col })
  end
  if rest ~= '' then M.show(buf, end_row, end_col, rest) end
  return text
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
