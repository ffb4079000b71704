-- crossfile.health: `:checkhealth crossfile`: the server binary, its version and whether it is the
-- plugin's, then for each running server what it resolved (`crossfile.status`: model, backend,
-- cache directory, each folder's index and trust, the arena) and whether it accepted the settings.

local client = require('crossfile.client')
local config = require('crossfile.config')
local plugin_version = require('crossfile.version')

local M = {}

local health = vim.health

-- A JSON string of an answer, else nil (null may come as nil or vim.NIL).
local function str(v) return type(v) == 'string' and v or nil end

local function count(v) return type(v) == 'number' and ('%d'):format(v) or '?' end

--- The arena part of a `crossfile.status` answer (`arena`: null when no folder has it on), as
--- one line.
function M.arena_line(arena)
  if type(arena) ~= 'table' then return 'arena: off' end
  local arms = {}
  for _, a in ipairs(type(arena.arms) == 'table' and arena.arms or {}) do arms[#arms + 1] = tostring(a) end
  local seed = type(arena.seed) == 'number' and (', seed ' .. count(arena.seed)) or ''
  return ('arena: on, arms %s%s; %s battles shown, %s votes recorded, %s failed, %s blank; votes file %s'):format(
    table.concat(arms, ', '), seed, count(arena.battles), count(arena.recorded), count(arena.failed), count(arena.blank),
    str(arena.votes) or '?')
end

--- The server binary's line: `path`, what its `--version` printed (`crossfile X.Y.Z`) and whether
--- that is the plugin's release `plugin`. Returns the health level ('ok' or 'warn'), the message
--- and, for a warning, the advice.
function M.binary_line(path, printed, plugin)
  local server = printed:match('^crossfile%s+(%S+)')
  if server == plugin then
    return 'ok', ('server binary: %s (%s), the plugin\'s release'):format(path, printed), nil
  end
  local said = server and ('crossfile %s, the plugin is %s'):format(server, plugin)
    or ('%q, not "crossfile <version>"; the plugin is %s'):format(printed, plugin)
  return 'warn', ('server binary: %s (%s)'):format(path, said), {
    'The plugin and the server come from one release: install the plugin and the binary of the same one'
      .. ' (scripts/install does both), or point `cmd` at the matching binary.',
  }
end

local function check_binary()
  local cmd = config.options.cmd
  local ok, path_or_why = client.executable()
  if not ok then
    health.error(('server binary not found: %s'):format(path_or_why), {
      'Install crossfile (cargo build --release) and put it on PATH, or give its full path:',
      "require('crossfile').setup({ cmd = { '/path/to/crossfile', 'serve' } })",
    })
    return
  end
  local result = vim.system({ cmd[1], '--version' }, { text = true }):wait(10000)
  local version = vim.trim(result.stdout or '')
  if result.code == 0 and version ~= '' then
    local level, message, advice = M.binary_line(path_or_why, version, plugin_version)
    health[level](message, advice)
  else
    health.warn(('server binary %s does not answer --version (exit %s): %s'):format(path_or_why,
      tostring(result.code), vim.trim(result.stderr or '')))
  end
end

-- A catalogue model's size in MB, as the binary's catalogue lists it (nil when it cannot tell).
local function catalogue_mb(name, cache_dir)
  local result = vim.system({ config.options.cmd[1], 'model', 'list', '--json', '--cache-dir', cache_dir },
    { text = true }):wait(10000)
  local ok, list = pcall(vim.json.decode, result.stdout or '')
  if result.code ~= 0 or not ok or type(list) ~= 'table' then return nil end
  for _, m in ipairs(list.models or {}) do
    if m.name == name and type(m.bytes) == 'number' then return math.floor(m.bytes / 1e6) end
  end
  return nil
end

local function report_model(status)
  local m, embedded = status.model, status.backend.kind == 'embedded'
  -- Any other backend reads at most the file's vocabulary (token budgets), never its weights.
  local use = embedded and '' or ' (its vocabulary only)'
  local state = m.loaded and 'loaded' or 'present, not loaded yet'
  if m.source == 'path' then
    if m.present then return health.ok(('model.path: %s%s: %s'):format(m.file, use, state)) end
    return (embedded and health.error or health.warn)(('model.path: %s: no such file'):format(m.file))
  end
  local name = str(m.name) or m.label
  local what = ('model %s (catalogue)%s'):format(name, use)
  if m.present then return health.ok(('%s: %s: %s'):format(what, m.file, state)) end
  if str(m.downloading) then return health.info(('%s: being fetched: %s'):format(what, m.downloading)) end
  local mb = catalogue_mb(name, status.cacheDir)
  local advice = ('The server fetches it%s when it starts or the model changes, showing its progress; if that'
    .. ' failed (see its messages), run `crossfile model fetch --model-name %s`'):format(mb and (' (%d MB)'):format(mb) or '', name)
  local say = embedded and health.warn or health.info
  say(('%s is not fetched: %s'):format(what, m.file), { advice })
end

local function report_backend(backend)
  if backend.kind == 'embedded' then return health.ok('backend: embedded (in-process)') end
  if not str(backend.endpoint) then return health.info('backend: ' .. backend.kind) end
  local model = str(backend.model) and (', model ' .. backend.model) or ''
  health.warn(('backend: %s: code is sent to %s%s'):format(backend.kind, backend.endpoint, model),
    { 'The workspace\'s code goes to that server with each completion: make sure you trust it' })
end

local function report_folder(f)
  local trust = f.trusted and 'trusted'
    or 'not trusted (its crossfile.toml cannot choose endpoints, model files or the cache directory)'
  if f.index == 'ready' then
    health.ok(('folder %s (%s): index ready, %s files, %s chunks; %s'):format(f.name, f.root, tostring(f.files),
      tostring(f.chunks), trust))
  elseif f.index == 'failed' then
    health.error(('folder %s (%s): index failed: %s; %s'):format(f.name, f.root, str(f.error) or '?', trust))
  else
    health.info(('folder %s (%s): index building; %s'):format(f.name, f.root, trust))
  end
end

-- What server `c` resolved (`crossfile.status`), or why it cannot say.
local function report_status(c)
  local ok, status = pcall(client.execute_sync, c, 'crossfile.status', nil, nil, 5000)
  if not ok or type(status) ~= 'table' then
    health.warn(('server %d did not answer crossfile.status: %s'):format(c.id, tostring(status)))
    return
  end
  health.ok(('server %d: crossfile %s, retriever %s'):format(c.id, status.version, status.retriever))
  report_model(status)
  report_backend(status.backend)
  health.info('cache directory: ' .. status.cacheDir)
  local user = str(status.userConfig)
  health.info(('user config: %s'):format(user and (user .. (status.userConfigExists and '' or ' (none there)')) or 'none'))
  for _, f in ipairs(status.folders or {}) do report_folder(f) end
  health.info(M.arena_line(status.arena))
end

local function check_clients()
  local clients = client.clients(nil, true)
  if #clients == 0 then
    health.info('no crossfile server is running', {
      ('Open a file of type %s: the server starts for its workspace.'):format(table.concat(config.options.filetypes, ', ')),
    })
    return
  end
  for _, c in ipairs(clients) do
    local n = vim.tbl_count(c.attached_buffers or {})
    local state = c.initialized and 'running' or 'starting'
    health.ok(('server %d %s for %s, attached to %d buffer(s)'):format(c.id, state, c.root_dir or '(no workspace folder)', n))
    if c.initialized then report_status(c) end
  end
end

local function check_settings()
  local clients = client.clients()
  if #clients == 0 then
    health.info('settings: no server running to check them')
    return
  end
  for _, c in ipairs(clients) do
    local report = client.report(c) or { messages = {} }
    local errors, warnings = {}, {}
    for _, m in ipairs(report.messages) do
      if m.type == 1 then errors[#errors + 1] = m.message elseif m.type == 2 then warnings[#warnings + 1] = m.message end
    end
    if #errors > 0 then
      health.error(('server %d reported since its last settings: %s'):format(c.id, table.concat(errors, ' | ')),
        { "Fix the key it names in setup({ settings = ... }) or the workspace's crossfile.toml" })
    else
      health.ok(('server %d accepted the settings'):format(c.id))
    end
    for _, w in ipairs(warnings) do health.warn(('server %d: %s'):format(c.id, w)) end
  end
end

function M.check()
  health.start('crossfile')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  elseif vim.fn.has('nvim-0.10') == 1 then
    health.warn('Neovim ' .. tostring(vim.version()) .. ': 0.10 is supported on a best-effort basis; 0.11 is tested')
  else
    health.error('Neovim ' .. tostring(vim.version()) .. ' is too old: crossfile needs 0.10 or later')
  end
  check_binary()
  check_clients()
  check_settings()
end

return M
