-- crossfile.inline: asks the server for inline completions (textDocument/inlineCompletion) and shows
-- the answer as ghost text unless it is stale: the buffer changed, the cursor moved, insert mode
-- was left, or a newer request was made. An arena battle (two items whose command is
-- crossfile.arenaVote) shows both suggestions; dismissing it votes "no choice".

local arena = require('crossfile.arena')
local client = require('crossfile.client')
local config = require('crossfile.config')
local ghost = require('crossfile.ghost')
local position = require('crossfile.position')

local M = {}

local uv = vim.uv or vim.loop

--- Per buffer: the request in flight { seq, id, client }.
local pending = {}
local seq = 0

--- What the last answer was: { buf, shown, reason, latency_ms }.
M.last = nil

--- Per buffer: what made its last shown suggestion, as `crossfile.context` names it: { model,
--- retriever }. Cleared when the settings change.
M.made_by = {}

local function emit(data)
  M.last = data
  vim.api.nvim_exec_autocmds('User', { pattern = 'CrossfileSuggestion', data = data, modeline = false })
end

-- The reasons to clear ghost text that dismiss a battle: the server is told "no choice". Typing on
-- (a newer request) or moving the cursor tells it nothing: the server's next request supersedes
-- the battle (and the same text and cursor asked again answer the same battle).
local dismissing = { dismissed = true, ['insert mode left'] = true }

--- Cancels the request in flight for `buf` (its answer, if it comes, is dropped) and clears the
--- ghost text. `reason` is reported with the dropped request (default "dismissed").
function M.cancel(buf, reason)
  reason = reason or 'dismissed'
  local battle = ghost.battle(buf)
  if battle and dismissing[reason] then arena.vote(buf, battle.id, nil) end
  local p = pending[buf]
  pending[buf] = nil
  if p then
    if p.id then pcall(client.call, p.client, 'cancel_request', p.id) end
    emit({ buf = buf, seq = p.seq, shown = false, reason = reason })
  end
  ghost.clear(buf)
end

local function item_text(result)
  if type(result) ~= 'table' then return nil end
  local item = (result.items or result)[1]
  if type(item) ~= 'table' then return nil end
  local text = item.insertText
  if type(text) == 'table' then text = text.value end
  return text, item.range
end

local function in_insert_mode()
  local mode = vim.api.nvim_get_mode().mode
  return mode:sub(1, 1) == 'i' or mode:sub(1, 1) == 'R'
end

--- Requests a suggestion for `buf`. opts.position: the LSP position (default: the cursor's);
--- opts.normal: show it in normal mode too (otherwise an answer arriving after insert mode was
--- left is dropped). Returns the request's sequence number, or nil when no server is attached.
function M.request(buf, opts)
  opts = opts or {}
  buf = buf or vim.api.nvim_get_current_buf()
  local c = client.for_buf(buf)
  if not c then return nil end
  local row, col
  local pos = opts.position
  if pos then
    row, col = position.to_buffer(buf, pos)
  else
    local cursor = vim.api.nvim_win_get_cursor(0)
    row, col = cursor[1] - 1, cursor[2]
    pos = position.to_lsp(buf, row, col)
  end
  M.cancel(buf, 'newer request')
  seq = seq + 1
  local my = seq
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local cursor = vim.api.nvim_get_current_buf() == buf and vim.api.nvim_win_get_cursor(0) or nil
  local insert = in_insert_mode()
  local started = uv.hrtime()
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = pos,
    context = { triggerKind = opts.manual and 1 or 2 },
  }
  local function answer(err, result)
    local latency_ms = (uv.hrtime() - started) / 1e6
    local function drop(reason, extra)
      emit(vim.tbl_extend('force', { buf = buf, seq = my, shown = false, reason = reason, latency_ms = latency_ms },
        extra or {}))
    end
    -- Reported when it was cancelled (a newer request, the cursor moved, insert mode left).
    if not pending[buf] or pending[buf].seq ~= my then return end
    pending[buf] = nil
    if err then
      if err.code == -32800 then return drop('cancelled') end
      vim.notify('crossfile: ' .. (err.message or vim.inspect(err)), vim.log.levels.WARN)
      return drop('error', { error = err.message })
    end
    if not vim.api.nvim_buf_is_valid(buf) then return drop('buffer closed') end
    if vim.api.nvim_buf_get_changedtick(buf) ~= tick then return drop('stale buffer') end
    if cursor and vim.api.nvim_get_current_buf() == buf then
      local now = vim.api.nvim_win_get_cursor(0)
      if now[1] ~= cursor[1] or now[2] ~= cursor[2] then return drop('cursor moved') end
    end
    if insert and not opts.normal and not in_insert_mode() then return drop('insert mode left') end
    local battle = arena.from_answer(result)
    if battle then
      -- Both at the cursor unless an item's range says where.
      battle.at = {}
      for i = 1, 2 do
        local r = battle.ranges[i]
        battle.at[i] = r and r.start and { position.to_buffer(buf, r.start) } or { row, col }
      end
      ghost.show_battle(buf, battle)
      -- No crossfile.context asked: what made a battle's suggestions stays unsaid until the reveal.
      return emit({ buf = buf, seq = my, shown = true, completed = true, text = battle.texts[1], battle = battle.id,
        texts = battle.texts, latency_ms = latency_ms })
    end
    local text, range = item_text(result)
    if text == nil or text == '' then return drop('no suggestion', { completed = true }) end
    local at_row, at_col = row, col
    if range and range.start then at_row, at_col = position.to_buffer(buf, range.start) end
    ghost.show(buf, at_row, at_col, text)
    emit({ buf = buf, seq = my, shown = true, completed = true, text = text, latency_ms = latency_ms })
    -- Which model and retriever answered, for the statusline: the server says (the user's
    -- settings may name neither, and the workspace's crossfile.toml may choose them).
    client.call(c, 'request', 'workspace/executeCommand',
      { command = 'crossfile.context', arguments = { { uri = vim.uri_from_bufnr(buf) } } },
      function(e, context)
        if not e and type(context) == 'table' and type(context.model) == 'string' then
          M.made_by[buf] = { model = context.model, retriever = type(context.retriever) == 'string' and context.retriever or nil }
        end
      end, buf)
  end
  local ok, id = client.call(c, 'request', 'textDocument/inlineCompletion', params, answer, buf)
  if ok then pending[buf] = { seq = my, id = id, client = c } end
  return my
end

--- Whether a request for `buf` is in flight.
function M.busy(buf)
  return pending[buf] ~= nil
end

local function on_text_changed(buf)
  -- An accept's own edit asks for nothing: the suggestion just accepted stays the last one.
  if ghost.is_accept_tick(buf, vim.api.nvim_buf_get_changedtick(buf)) then return end
  if config.options.auto_trigger and M.request(buf) then return end
  -- Typed on with nothing asked: what showed is stale (a battle is left to the server).
  M.cancel(buf, 'typed on')
end

local function on_cursor_moved(buf)
  if (ghost.get(buf) or pending[buf]) and not ghost.cursor_unmoved(buf) then M.cancel(buf, 'cursor moved') end
end

--- Sets up the autocommands of an attached buffer (once per buffer).
function M.attach(buf)
  local group = vim.api.nvim_create_augroup('crossfile.inline.' .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ 'TextChangedI', 'TextChangedP' }, {
    group = group,
    buffer = buf,
    callback = function() on_text_changed(buf) end,
  })
  vim.api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI' }, {
    group = group,
    buffer = buf,
    callback = function() on_cursor_moved(buf) end,
  })
  vim.api.nvim_create_autocmd('InsertLeave', {
    group = group,
    buffer = buf,
    callback = function() M.cancel(buf, 'insert mode left') end,
  })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'BufUnload' }, {
    group = group,
    buffer = buf,
    callback = function()
      pending[buf] = nil
      ghost.forget(buf)
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
end

return M
