-- Shared by the specs: the server binary, small model settings, fixtures, and child Neovims driven
-- over RPC (a real `nvim --embed --headless`, so insert mode and its autocommands run for real).

local H = {}

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then return default end
  return v
end

H.plugin = vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p'))))
H.bin = env('CROSSFILE_BIN') or error('set CROSSFILE_BIN to the crossfile binary (test/run does)')
H.tmp = env('CROSSFILE_TEST_TMP') or vim.fn.tempname()
vim.fn.mkdir(H.tmp, 'p')
H.model = env('CROSSFILE_MODEL')
  or vim.fs.joinpath(env('CROSSFILE_CACHE_DIR', vim.fs.joinpath(env('HOME', '/root'), '.cache', 'crossfile')), 'models',
    'SmolLM2-135M-Instruct.Q4_1.gguf') -- the small model (test/run fetches it)
H.corpus = env('CROSSFILE_CORPUS', vim.fs.joinpath(env('HOME', '/root'), '.cache', 'crossfile-corpus'))
H.bench_repos = env('CROSSFILE_BENCH_REPOS', vim.fs.joinpath(env('HOME', '/root'), '.cache', 'crossfile-bench-repos'))
H.shared = env('CROSSFILE_SHARED', vim.fs.joinpath(H.plugin, '..', '..', '..', 'shared'))
-- The EvoCodeBench environments `crossfile bench setup-env` made (test/run makes them).
H.envs = env('CROSSFILE_ENVS', vim.fs.joinpath(env('HOME', '/root'), '.cache', 'crossfile', 'envs', 'evocodebench'))
H.bench_cases = env('CROSSFILE_BENCH_CASES', vim.fs.joinpath(H.plugin, '..', '..', '..', 'shared', 'bench', 'cceval',
  'python-dev.jsonl'))

--- Settings small enough for quick tests: the user's cached model, a temporary index cache.
function H.settings(extra)
  return vim.tbl_deep_extend('force', {
    index = { cache_dir = vim.fs.joinpath(H.tmp, 'cache') },
    model = { path = H.model, n_ctx = 1024 },
    prompt = { max_new_tokens = 16 },
  }, extra or {})
end

--- The same settings as a crossfile.toml (for the CLI).
function H.toml(settings)
  local out = {}
  local function value(v)
    if type(v) == 'string' then return vim.json.encode(v) end
    return tostring(v)
  end
  for section, keys in pairs(settings) do
    out[#out + 1] = '[' .. section .. ']'
    for k, v in pairs(keys) do out[#out + 1] = k .. ' = ' .. value(v) end
  end
  return table.concat(out, '\n') .. '\n'
end

--- A copy of the click corpus workspace (once per run) whose line 1275 of src/click/core.py is cut
--- after `formatter.`. Returns the copy's root.
function H.click()
  local dest = vim.fs.joinpath(H.tmp, 'click')
  if not vim.uv.fs_stat(dest) then
    local src = vim.fs.joinpath(H.corpus, 'click')
    assert(vim.uv.fs_stat(src), 'no ' .. src .. ' (../shared/corpus/fetch click)')
    local r = vim.system({ 'cp', '-r', src, dest }):wait()
    assert(r.code == 0, r.stderr)
    local core = vim.fs.joinpath(dest, 'src', 'click', 'core.py')
    local lines = vim.fn.readfile(core, 'b')
    local line = lines[1275]
    local at = assert(line:find('formatter.', 1, true), line)
    lines[1275] = line:sub(1, at + #'formatter.' - 1)
    vim.fn.writefile(lines, core, 'b')
  end
  return dest
end

H.core_line = '        formatter.'

--- The first `n` DEV CrossCodeEval cases, every 6th record (as ../shared/checks/editors takes them),
--- written to a temporary cases file. Returns the file and the case ids.
function H.dev_cases(n)
  local file = vim.fs.joinpath(H.tmp, 'dev' .. n .. '.jsonl')
  local out, ids = {}, {}
  for i, line in ipairs(vim.fn.readfile(H.bench_cases)) do
    if (i - 1) % 6 == 0 and #out < n then
      out[#out + 1] = line
      ids[#ids + 1] = vim.json.decode(line).metadata.task_id
    end
  end
  vim.fn.writefile(out, file)
  return file, ids
end

--- A child Neovim with the plugin on its runtimepath. Methods: lua(code, ...) runs a chunk there
--- (its `...` are the arguments) and returns its result; input(keys) types keys; wait_for(ms, code,
--- ...) repeats lua(code, ...) until it returns a true value; stop(). opts.startup: start as a
--- user's Neovim loads plugins (`-u NORC`, the plugin on 'runtimepath' from `--cmd`) instead of
--- `-u NONE` and sourcing plugin/crossfile.lua by hand; opts.env: more environment.
function H.nvim(opts)
  opts = opts or {}
  local args = { vim.v.progpath, '--embed', '--headless', '-u', 'NONE', '-i', 'NONE', '-n' }
  if opts.startup then
    args = { vim.v.progpath, '--embed', '--headless', '-u', 'NORC', '-i', 'NONE', '-n', '--cmd',
      'set rtp^=' .. vim.fn.fnameescape(H.plugin) }
  end
  local ch = vim.fn.jobstart(args,
    { rpc = true, env = vim.tbl_extend('force', { CROSSFILE_TEST_CHILD = '1' }, opts.env or {}) })
  assert(ch > 0, 'cannot start a child Neovim')
  local child = { ch = ch }
  function child.lua(code, ...)
    return vim.rpcrequest(ch, 'nvim_exec_lua', code, { ... })
  end
  function child.input(keys)
    vim.rpcrequest(ch, 'nvim_input', keys)
    -- A request after the keys is answered once they are read.
    return vim.rpcrequest(ch, 'nvim_eval', '1')
  end
  function child.wait_for(ms, code, ...)
    local deadline = vim.uv.now() + ms
    while true do
      local result = child.lua(code, ...)
      if result and result ~= vim.NIL then return result end
      if vim.uv.now() > deadline then return nil end
      vim.wait(100)
    end
  end
  function child.stop()
    pcall(vim.rpcrequest, ch, 'nvim_exec_lua', [[
      for _, c in ipairs(vim.lsp.get_clients({ name = 'crossfile' })) do c:stop() end
      vim.wait(3000, function() return #vim.lsp.get_clients({ name = 'crossfile' }) == 0 end, 20)
    ]], {})
    pcall(vim.rpcnotify, ch, 'nvim_command', 'qa!')
    if vim.fn.jobwait({ ch }, 5000)[1] == -1 then vim.fn.jobstop(ch) end
  end
  if not opts.startup then
    -- As Neovim's startup does for a plugin on the runtimepath (-u NONE skips it).
    child.lua('vim.opt.rtp:prepend(...); vim.cmd.runtime("plugin/crossfile.lua")', H.plugin)
  end
  return child
end

--- In a child: setup() with the server binary, settings and more options; records vim.notify
--- messages in package.loaded.crossfile_notes.
function H.setup(child, settings, opts)
  child.lua([[
    local bin, settings, opts = ...
    local notes = {}
    package.loaded.crossfile_notes = notes
    -- Recorded only: an error message inside an RPC request would fail the request.
    vim.notify = function(msg, level)
      notes[#notes + 1] = { msg = msg, level = level }
    end
    require('crossfile').setup(vim.tbl_extend('force', { cmd = { bin, 'serve' }, settings = settings }, opts or {}))
  ]], H.bin, settings, opts or vim.empty_dict())
end

--- A workspace of two Python files (app.py uses shapes.py's Box) and a pyproject.toml under H.tmp/`name`, with
--- `files` (name → lines) added. Returns its root.
function H.tiny(name, files)
  local root = vim.fs.joinpath(H.tmp, name)
  vim.fn.mkdir(root, 'p')
  vim.fn.writefile({ 'from shapes import Box', '', 'def area(box):', '    return box.width * box.height' },
    vim.fs.joinpath(root, 'app.py'))
  vim.fn.writefile({ 'class Box:', '    def __init__(self, width, height):', '        self.width = width',
    '        self.height = height' }, vim.fs.joinpath(root, 'shapes.py'))
  -- Its own root marker (H.tmp holds the specs' crossfile.toml).
  vim.fn.writefile({ '[project]', 'name = "' .. name .. '"' }, vim.fs.joinpath(root, 'pyproject.toml'))
  for file, lines in pairs(files or {}) do vim.fn.writefile(lines, vim.fs.joinpath(root, file)) end
  return root
end

--- Code for child.lua: records the notifications the crossfile clients send from now on, in
--- package.loaded.crossfile_sent ({method, params}).
H.record_sent = [[
  local sent = {}
  package.loaded.crossfile_sent = sent
  for _, c in ipairs(vim.lsp.get_clients({ name = 'crossfile' })) do
    local notify = c.rpc.notify
    c.rpc.notify = function(method, params)
      sent[#sent + 1] = { method = method, params = params }
      return notify(method, params)
    end
  end
]]

--- Code for child.lua: true once a crossfile server is attached to the current buffer and ready.
H.ready_code = [[
  local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
  return c ~= nil and c.initialized == true
]]

--- The crossfile clients of the child's current buffer: { {id, root, initialized}, ... }.
H.clients_code = [[
  local out = {}
  for _, c in ipairs(vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })) do
    out[#out + 1] = { id = c.id, root = c.root_dir or vim.NIL, initialized = c.initialized == true }
  end
  return out
]]

return H
