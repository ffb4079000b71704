-- plugin/crossfile.lua: what exists before setup(), so a plugin manager can load on command or
-- key: `:Crossfile {subcommand}` with its completion, and the <Plug>(crossfile-…) mappings.
-- Nothing is required until one of them is used.

if vim.g.loaded_crossfile then return end
vim.g.loaded_crossfile = true

vim.api.nvim_create_user_command('Crossfile', function(opts)
  require('crossfile.commands').run(opts)
end, {
  nargs = '*',
  complete = function(lead, line) return require('crossfile.commands').complete(lead, line) end,
  desc = 'crossfile: replay | next | prev | score | compare [SPEC ...] | context | arena reveal | cancel | trust | health',
})

-- Each runs the API's action when a suggestion shows (arena: a battle; trigger: always), and
-- nothing otherwise.
local plugs = {
  ['crossfile-accept'] = { 'accept' },
  ['crossfile-accept-line'] = { 'accept_line' },
  ['crossfile-dismiss'] = { 'dismiss' },
  ['crossfile-trigger'] = { 'complete' },
  ['crossfile-arena-1'] = { 'arena_accept', 1 },
  ['crossfile-arena-2'] = { 'arena_accept', 2 },
}
for name, action in pairs(plugs) do
  vim.keymap.set({ 'i', 'n' }, ('<Plug>(%s)'):format(name), function()
    local ok, err = pcall(require('crossfile')[action[1]], action[2])
    if not ok then vim.notify(tostring(err), vim.log.levels.ERROR) end
  end, { desc = 'crossfile: ' .. action[1] .. (action[2] and (' ' .. action[2]) or '') })
end
