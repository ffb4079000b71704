-- crossfile.keymaps: buffer-local keys that accept or dismiss the ghost text (or pick one of an
-- arena battle's two suggestions), and otherwise do what they did before (the buffer's or the
-- global mapping, else the key's own meaning). One key may serve several actions: <S-Tab> picks
-- suggestion 2 while a battle shows, else accepts a suggestion's first line.

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
  arena_1 = function() require('crossfile').arena_accept(1) end,
  arena_2 = function() require('crossfile').arena_accept(2) end,
}

--- The actions in the order a key serving several tries them: a battle's first.
M.order = { 'arena_1', 'arena_2', 'accept', 'accept_line', 'dismiss', 'trigger' }

-- Whether `action` applies in `buf` now.
local function applies(action, buf)
  if action == 'trigger' then return true end
  if action == 'arena_1' or action == 'arena_2' then return ghost.battle(buf) ~= nil end
  return ghost.get(buf) ~= nil
end

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

-- Maps `lhs` in `buf` to the first of `list` (actions) that applies, else what it did before.
local function map(buf, mode, list, lhs)
  local key = mode .. ' ' .. lhs
  previous[buf] = previous[buf] or {}
  if previous[buf][key] == nil then
    local prev = vim.api.nvim_buf_call(buf, function() return vim.fn.maparg(lhs, mode, false, true) end)
    local ours = type(prev.desc) == 'string' and prev.desc:find('^crossfile:')
    previous[buf][key] = (next(prev) ~= nil and not ours) and prev or false
  end
  vim.keymap.set(mode, lhs, function()
    for _, action in ipairs(list) do
      if applies(action, buf) then
        return keys(('<Cmd>lua require("crossfile.keymaps").run(%q)<CR>'):format(action))
      end
    end
    return fall_through(buf, key, lhs, previous[buf][key] or nil)
  end, { buffer = buf, expr = true, replace_keycodes = false, desc = 'crossfile: ' .. table.concat(list, ', ') })
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
  -- Per mode, per key: its actions, in M.order.
  local by_key = { i = {}, n = {} }
  local lhs_order = {}
  for _, action in ipairs(M.order) do
    local lhs = km[action]
    if type(lhs) == 'string' and lhs ~= '' then
      for _, mode in ipairs({ 'i', 'n' }) do
        if mode == 'i' or (normal and action ~= 'trigger') then
          if not by_key[mode][lhs] then
            by_key[mode][lhs] = {}
            lhs_order[#lhs_order + 1] = { mode, lhs }
          end
          table.insert(by_key[mode][lhs], action)
        end
      end
    end
  end
  for _, ml in ipairs(lhs_order) do map(buf, ml[1], by_key[ml[1]][ml[2]], ml[2]) end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function() previous[buf] = nil end,
  })
end

return M
