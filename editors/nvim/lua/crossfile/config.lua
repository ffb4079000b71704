-- crossfile.config: the options given to setup(), their defaults, and the settings sent to the server.

local M = {}

--- The defaults of setup(); see `:help crossfile-setup`.
M.defaults = {
  cmd = { 'crossfile', 'serve' },
  settings = {},
  filetypes = { 'python', 'java', 'typescript', 'typescriptreact', 'cs' },
  auto_trigger = true,
  -- arena_1 / arena_2: pick suggestion 1 / 2 of an arena battle (tried before the others of a key).
  keymaps = { accept = '<Tab>', accept_line = '<S-Tab>', dismiss = '<C-]>', trigger = '<M-\\>',
    arena_1 = '<Tab>', arena_2 = '<S-Tab>' },
  root_markers = { '.git', 'crossfile.toml', 'pyproject.toml', 'setup.py', 'package.json', 'tsconfig.json',
    'pom.xml', 'build.gradle', '*.csproj', '*.sln' },
  project_settings = '.crossfile.json',
  timeout_ms = 180000,
  replay = { evocodebench_setting = nil },
}

--- The options in force (defaults until setup() runs).
M.options = vim.deepcopy(M.defaults)

--- File extensions the server reads, and their filetypes (used when filetype detection is off).
M.extensions = { py = 'python', java = 'java', ts = 'typescript', tsx = 'typescriptreact', cs = 'cs' }

local function check(name, value, want)
  if type(value) ~= want then
    error(('crossfile: setup: %s must be a %s, got %s'):format(name, want, type(value)), 0)
  end
end

--- Merges `opts` over the defaults; tables merge key by key, except `cmd` and the lists.
function M.apply(opts)
  opts = opts or {}
  check('opts', opts, 'table')
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- Lists replace, never merge by index.
  for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
    if opts[key] ~= nil then merged[key] = vim.deepcopy(opts[key]) end
  end
  if opts.keymaps == false then merged.keymaps = {} end
  check('cmd', merged.cmd, 'table')
  check('settings', merged.settings, 'table')
  check('filetypes', merged.filetypes, 'table')
  check('auto_trigger', merged.auto_trigger, 'boolean')
  check('keymaps', merged.keymaps, 'table')
  check('timeout_ms', merged.timeout_ms, 'number')
  check('replay', merged.replay, 'table')
  local setting = merged.replay.evocodebench_setting
  if setting ~= nil and not vim.tbl_contains({ 'baseline', 'local_completion', 'local_infilling' }, setting) then
    error(('crossfile: setup: replay.evocodebench_setting must be baseline, local_completion or local_infilling, got %s')
      :format(vim.inspect(setting)), 0)
  end
  if merged.trust_workspace ~= nil then check('trust_workspace', merged.trust_workspace, 'boolean') end
  if #merged.cmd == 0 then error('crossfile: setup: cmd is empty', 0) end
  M.options = merged
  return merged
end

--- The filetype of `buf` for the server: its 'filetype', else told from its file name's extension.
function M.filetype(buf)
  local ft = vim.bo[buf].filetype
  if ft ~= '' then return ft end
  local ext = vim.api.nvim_buf_get_name(buf):match('%.(%w+)$')
  return ext and M.extensions[ext:lower()] or nil
end

--- Whether the server completes in buffers of filetype `ft`.
function M.wants(ft)
  return ft ~= nil and vim.tbl_contains(M.options.filetypes, ft)
end

--- Per path: what vim.secure.read gave (text, or false), and what it was given for: the file's
--- stat and the trust database's modification time. Asked again only when either changed.
local secure_answers = {}

local function trust_db_mtime()
  local stat = vim.uv.fs_stat(vim.fs.joinpath(vim.fn.stdpath('state'), 'trust'))
  return stat and (stat.mtime.sec * 1e9 + stat.mtime.nsec) or 0
end

local function file_key(stat)
  return ('%d:%d:%d:%d'):format(stat.ino, stat.size, stat.mtime.sec, stat.mtime.nsec)
end

--- The text of `path` through vim.secure.read, asked once per file per session: again only when
--- the file changed or the trust database did (`:trust`, `:trust ++deny`). Nil when absent or
--- not trusted.
function M.secure_read(path)
  local stat = vim.uv.fs_stat(path)
  if not stat then return nil end
  local key, db = file_key(stat), trust_db_mtime()
  local known = secure_answers[path]
  if known and known.key == key and known.db == db then return known.text or nil end
  local text = vim.secure.read(path)
  -- The answer may have written the trust database: the answers that were current stay so.
  local now = trust_db_mtime()
  for _, a in pairs(secure_answers) do
    if a.db == db then a.db = now end
  end
  secure_answers[path] = { key = key, db = now, text = text or false }
  return text
end

--- Forgets every answer (`:Crossfile trust`): the next settings ask again. Returns how many.
function M.forget_trust()
  local n = vim.tbl_count(secure_answers)
  secure_answers = {}
  return n
end

--- The project's own settings (`<root>/.crossfile.json`), read only through vim.secure.read (once,
--- M.secure_read), so a repository cannot change the settings before the user trusts the file.
--- They never choose the command: that is setup()'s alone. Returns a table (empty when absent,
--- untrusted or bad).
function M.project_settings(root)
  local name = M.options.project_settings
  if not root or not name or name == '' then return {} end
  local text = M.secure_read(vim.fs.joinpath(root, name))
  if not text then return {} end
  local path = vim.fs.joinpath(root, name)
  local ok, decoded = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  if not ok or type(decoded) ~= 'table' then
    vim.notify(('crossfile: %s is not a JSON object, ignored'):format(path), vim.log.levels.WARN)
    return {}
  end
  return decoded
end

--- Whether the server may apply what an untrusted `<root>/crossfile.toml` may not set (endpoints,
--- API-key variables, model files, the cache directory): setup()'s `trust_workspace` when it is a
--- boolean, else whether the user trusts that file through vim.secure (`:trust`).
function M.trusts(root)
  local forced = M.options.trust_workspace
  if type(forced) == 'boolean' then return forced end
  if not root then return false end
  return M.secure_read(vim.fs.joinpath(root, 'crossfile.toml')) ~= nil
end

--- `over` merged over `base` (neither changed): tables key by key, but a non-empty list (e.g.
--- `arena.arms`) replaces the other whole, never merged by index (as Neovim 0.10's
--- vim.tbl_deep_extend would).
function M.merge(base, over)
  if type(over) ~= 'table' then return vim.deepcopy(over) end
  if type(base) == 'table' and next(over) == nil then return vim.deepcopy(base) end
  if type(base) ~= 'table' or (vim.islist(over) and #over > 0) or (vim.islist(base) and #base > 0) then
    return vim.deepcopy(over)
  end
  local out = vim.deepcopy(base)
  for k, v in pairs(over) do out[k] = M.merge(out[k], v) end
  return out
end

--- The settings sent for a workspace root: setup()'s `settings`, then the project's file over them,
--- and the workspace's trust.
function M.settings_for(root)
  local settings = M.merge(M.options.settings, M.project_settings(root))
  if M.trusts(root) then settings.trust = vim.tbl_extend('force', settings.trust or {}, { workspace = true }) end
  -- An empty table would go as a JSON array, which the server refuses.
  if next(settings) == nil then return vim.empty_dict() end
  return settings
end

return M
