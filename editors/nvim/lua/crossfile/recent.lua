-- What the user looks at and yanks, told to the server (`crossfile/recentLines`) for its ring of
-- recent chunks, which the `recent` retriever reads: the lines on screen when a window shows the
-- buffer or scrolls (once it rests), and the lines of each yank. Opening and editing the buffer
-- the server sees already (didOpen, didChange).

local client = require('crossfile.client')

local M = {}

--- How long scrolling rests before the screen is told, in milliseconds.
M.scroll_rest_ms = 300

--- Tells the server of lines `first`..`last` (1-based, inclusive) of `buf`.
local function tell(buf, first, last)
  local c = client.for_buf(buf)
  if not c or first < 1 or last < first then return end
  client.call(c, 'notify', 'crossfile/recentLines', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = first - 1, character = 0 }, ['end'] = { line = last - 1, character = 0 } },
  })
end

--- The lines the current window shows of `buf`, when it shows it.
local function tell_screen(buf)
  if vim.api.nvim_get_current_buf() ~= buf then return end
  tell(buf, vim.fn.line('w0'), vim.fn.line('w$'))
end

--- Sets up the autocommands of an attached buffer (once per buffer).
function M.attach(buf)
  local group = vim.api.nvim_create_augroup('crossfile.recent.' .. buf, { clear = true })
  local rest = assert(vim.uv.new_timer())
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    buffer = buf,
    callback = function() tell_screen(buf) end,
  })
  vim.api.nvim_create_autocmd('WinScrolled', {
    group = group,
    callback = function()
      if vim.api.nvim_get_current_buf() ~= buf then return end
      rest:start(M.scroll_rest_ms, 0, vim.schedule_wrap(function()
        if vim.api.nvim_buf_is_valid(buf) then tell_screen(buf) end
      end))
    end,
  })
  vim.api.nvim_create_autocmd('TextYankPost', {
    group = group,
    buffer = buf,
    callback = function()
      if vim.v.event.operator ~= 'y' then return end
      tell(buf, vim.fn.line("'["), vim.fn.line("']"))
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'BufUnload' }, {
    group = group,
    buffer = buf,
    callback = function()
      rest:stop()
      if not rest:is_closing() then rest:close() end
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  -- The screen it is attached in.
  tell_screen(buf)
end

return M
