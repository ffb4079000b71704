-- crossfile.keymaps: buffer-local keys that accept or dismiss the ghost text, and otherwise do what
-- they did before (the buffer's or the global mapping, else the key's own meaning).

local config = require('crossfile.config')
local ghost = require('crossfile.ghost')

local M = {}

--- Per buffer, per "mode lhs": the mapping the key had before ours (maparg's dict), or false.
local previous = {}

local actions = {
  accept = function() require('crossfile').accept() end,
  accept_line = function() require('crossfile').accept_line() end,
  dismiss = function() require('crossfile').dismiss() end,
  trigger = function() require('crossfile').complete() end,
}

--- Runs `action` (from a <Cmd> mapping, outside the expression's text lock).
function M.run(action)
  actions[action]()
end

--- Runs the mapping `lhs` had before ours in `buf` (a non-expression Lua callback).
function M.fallback(buf, key)
  local prev = previous[buf] and previous[buf][key]
  if prev and prev.callback then prev.callback() end
end

local function keys(s)
  return vim.api.nvim_replace_termcodes(s, true, true, true)
end

-- What the key does when no suggestion shows, returned by our expression mapping.
local function fall_through(buf, key, lhs, prev)
  if not prev then return keys(lhs) end
  if prev.callback then
    if prev.expr == 1 then
      local out = prev.callback()
      return type(out) == 'string' and (prev.replace_keycodes == 1 and keys(out) or out) or ''
    end
    return keys(('<Cmd>lua require("crossfile.keymaps").fallback(%d, %q)<CR>'):format(buf, key))
  end
  local rhs = prev.rhs or ''
  if prev.expr == 1 then rhs = vim.api.nvim_eval(rhs) end
  if prev.noremap == 1 then return keys(rhs) end
  -- A recursive mapping: its keys are mapped again.
  vim.api.nvim_feedkeys(keys(rhs), 'mi', false)
  return ''
end

local function map(buf, mode, action, lhs, always)
  local key = mode .. ' ' .. lhs
  previous[buf] = previous[buf] or {}
  if previous[buf][key] == nil then
    local prev = vim.api.nvim_buf_call(buf, function() return vim.fn.maparg(lhs, mode, false, true) end)
    local ours = type(prev.desc) == 'string' and prev.desc:find('^crossfile:')
    previous[buf][key] = (next(prev) ~= nil and not ours) and prev or false
  end
  vim.keymap.set(mode, lhs, function()
    if always or ghost.get(buf) then
      return keys(('<Cmd>lua require("crossfile.keymaps").run(%q)<CR>'):format(action))
    end
    return fall_through(buf, key, lhs, previous[buf][key] or nil)
  end, { buffer = buf, expr = true, replace_keycodes = false, desc = 'crossfile: ' .. action })
end

--- Maps setup()'s keys in `buf`: in insert mode, and in normal mode too where `normal` (a
--- replayed case, whose ghost text shows in normal mode).
function M.attach(buf, normal)
  local km = config.options.keymaps or {}
  for _, mode in ipairs({ 'i', 'n' }) do
    for _, m in ipairs(vim.api.nvim_buf_get_keymap(buf, mode)) do
      if type(m.desc) == 'string' and m.desc:find('^crossfile:') then
        pcall(vim.keymap.del, mode, m.lhs, { buffer = buf })
      end
    end
  end
  for _, action in ipairs({ 'accept', 'accept_line', 'dismiss', 'trigger' }) do
    local lhs = km[action]
    if type(lhs) == 'string' and lhs ~= '' then
      map(buf, 'i', action, lhs, action == 'trigger')
      if normal and action ~= 'trigger' then map(buf, 'n', action, lhs) end
    end
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function() previous[buf] = nil end,
  })
end

return M
