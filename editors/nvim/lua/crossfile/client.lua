-- crossfile.client: starts `crossfile serve` per workspace root, attaches buffers, sends settings,
-- and sends requests without waiting (their answer comes to a callback; `*_sync` forms wait).

local config = require('crossfile.config')

local M = {}

M.name = 'crossfile'

local new_api = vim.fn.has('nvim-0.11') == 1

--- Per client id: what the server said with window/showMessage since its last settings.
local reports = {}
--- Buffers attached by hand (replay): the filetype autocommand leaves them alone.
local manual = {}
--- Called with (client, buf) when a crossfile client attaches to a buffer.
local attach_hooks = {}
--- Per client id: its last `crossfile.status` answer, for statuslines (which must never wait).
local statuses = {}
--- Per client id, per progress token: the server's work under way ($/progress: indexing, a
--- model download), as one line; removed at its end.
local work = {}

--- Calls method `name` of `client` on Neovim 0.11 (`client:name()`) and 0.10 (`client.name()`).
function M.call(client, name, ...)
  if new_api then return client[name](client, ...) end
  return client[name](...)
end

local function stopped(client)
  return client == nil or M.call(client, 'is_stopped')
end

--- Every running crossfile client, or those attached to `buf`; with `starting`, those still
--- starting too (Neovim 0.11 leaves them out unless asked).
function M.clients(buf, starting)
  local clients = vim.lsp.get_clients({ name = M.name, bufnr = buf, _uninitialized = starting })
  return vim.tbl_filter(function(c) return not stopped(c) end, clients)
end

--- The crossfile client attached to `buf`, if any.
function M.for_buf(buf)
  return M.clients(buf)[1]
end

function M.on_attach(hook)
  attach_hooks[#attach_hooks + 1] = hook
end

function M.mark_manual(buf)
  manual[buf] = true
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function() manual[buf] = nil end,
  })
end

function M.is_manual(buf)
  return manual[buf] == true
end

local function glob_pattern(marker)
  return '^' .. vim.pesc(marker):gsub('%%%*', '.*') .. '$'
end

--- The workspace root of `buf`: the nearest directory holding a root marker, else the file's own
--- directory; nil for a buffer with no file name.
function M.root(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' then return nil end
  local markers = config.options.root_markers
  local root = vim.fs.root(buf, function(entry)
    for _, marker in ipairs(markers) do
      if entry == marker or (marker:find('*', 1, true) and entry:match(glob_pattern(marker))) then
        return true
      end
    end
    return false
  end)
  return root or vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(name, ':p')))
end

--- Whether the configured command can be run; a message saying why not otherwise.
function M.executable()
  local cmd = config.options.cmd
  if vim.fn.executable(cmd[1]) == 1 then return true, vim.fn.exepath(cmd[1]) end
  return false, ('the server command %q (setup{cmd}[1]) is not an executable file or is not on PATH')
    :format(cmd[1])
end

local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }

local function on_show_message(_, params, ctx)
  local report = reports[ctx.client_id]
  if report then
    report.messages[#report.messages + 1] = { type = params.type, message = params.message }
  end
  vim.notify('crossfile: ' .. params.message, levels[params.type] or vim.log.levels.INFO)
  return vim.NIL
end

--- What the server said since its last settings: { messages = { {type, message}, ... } }.
function M.report(client)
  return reports[client.id]
end

local function client_config(root)
  local workspace = nil
  if root then workspace = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } } end
  return {
    name = M.name,
    cmd = config.options.cmd,
    root_dir = root,
    workspace_folders = workspace,
    init_options = config.settings_for(root),
    handlers = { ['window/showMessage'] = on_show_message },
    on_init = function(client)
      reports[client.id] = reports[client.id] or { messages = {} }
    end,
    on_exit = function(_, _, id)
      vim.schedule(function()
        reports[id] = nil
        statuses[id] = nil
        work[id] = nil
      end)
    end,
    on_attach = function(client, buf)
      M.refresh_status(client)
      for _, hook in ipairs(attach_hooks) do hook(client, buf) end
    end,
  }
end

local function reuse(client, cfg)
  return client.name == cfg.name and client.root_dir == cfg.root_dir and not stopped(client)
end

--- Starts (or reuses) the client for `root` (nil: a client with no workspace folder). With `buf`,
--- attaches it. Returns the client, or nil and a message.
function M.start(root, buf)
  local ok, why = M.executable()
  if not ok then return nil, why end
  local cfg = client_config(root)
  for _, client in ipairs(M.clients(nil, true)) do
    if reuse(client, cfg) then
      if buf then vim.lsp.buf_attach_client(buf, client.id) end
      return client
    end
  end
  local id = vim.lsp.start(cfg, { bufnr = buf, attach = buf ~= nil, reuse_client = reuse, silent = true })
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then return nil, ('cannot start %s'):format(table.concat(config.options.cmd, ' ')) end
  reports[client.id] = reports[client.id] or { messages = {} }
  return client
end

local warned_missing = false

--- Attaches `buf` to the client of its workspace root when its filetype is one of setup()'s.
function M.attach(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' or manual[buf] then return end
  if not config.wants(config.filetype(buf)) or M.for_buf(buf) then return end
  local root = M.root(buf)
  if not root then return end
  local client, why = M.start(root, buf)
  if not client and not warned_missing then
    warned_missing = true
    vim.notify('crossfile: ' .. why, vim.log.levels.ERROR)
  end
end

--- The client of `buf`: attached, or started for its workspace root and not ready yet (Neovim
--- attaches a buffer once its client is initialized; requests wait for that).
function M.of_buf(buf)
  local attached = M.for_buf(buf)
  if attached then return attached end
  local root = M.root(buf)
  for _, c in ipairs(M.clients(nil, true)) do
    if root and c.root_dir == root and not c.initialized then return c end
  end
  return nil
end

--- Any running client (preferring the one of `buf`), else a new one with no workspace folder.
function M.any(buf)
  local client = (buf and M.of_buf(buf)) or M.clients(nil, true)[1]
  if client then return client end
  local started, why = M.start(nil, nil)
  if not started then error('crossfile: ' .. why, 0) end
  return started
end

local function not_running(label)
  return ('crossfile: %s: the server exited (see :checkhealth crossfile and the LSP log, '
    .. ':lua vim.cmd.edit(vim.lsp.get_log_path()))'):format(label)
end

-- The server's error `err` as one message naming `label` (the command or method).
local function error_message(label, err)
  local message = type(err) == 'table' and err.message or vim.inspect(err)
  if not message:find(label, 1, true) then message = label .. ': ' .. message end
  return 'crossfile: ' .. message
end

--- Sends `method` to `c` once it has answered `initialize` (pending edits of `buf` go first), and
--- returns at once. `on_done(err, result)` is called once, on the main loop: `err` is nil or a
--- message naming the method (the server's own message, the server exiting, no answer within
--- `timeout_ms`, or "cancelled"). Returns a handle: { label, cancel = function() }; cancel()
--- sends `$/cancelRequest` for a request already sent and reports "cancelled".
function M.request(c, method, params, buf, on_done, timeout_ms)
  timeout_ms = timeout_ms or config.options.timeout_ms
  local label = params and params.command or method
  local handle = { label = label, done = false }
  local timer = assert(vim.uv.new_timer())
  local function finish(err, result)
    if handle.done then return end
    handle.done = true
    timer:stop()
    if not timer:is_closing() then timer:close() end
    on_done(err, result)
  end
  local function send()
    local ok, id = M.call(c, 'request', method, params, function(err, result)
      vim.schedule(function()
        if err then return finish(error_message(label, err)) end
        finish(nil, result)
      end)
    end, buf)
    if not ok then return finish(not_running(label)) end
    handle.id = id
  end
  local started = vim.uv.now()
  -- Polls every 20 ms until the client is ready, then every 200 ms (the server may exit) until
  -- the answer; gives up after timeout_ms.
  timer:start(0, 20, vim.schedule_wrap(function()
    if handle.done then return end
    if stopped(c) then return finish(not_running(label)) end
    if handle.id == nil and c.initialized then
      send()
      if not handle.done then
        timer:set_repeat(200)
        timer:again()
      end
    end
    if vim.uv.now() - started >= timeout_ms and not handle.done then
      if handle.id then pcall(M.call, c, 'cancel_request', handle.id) end
      finish(('crossfile: %s: no answer within %d s'):format(label, timeout_ms / 1000))
    end
  end))
  function handle.cancel()
    if handle.done then return false end
    handle.cancelled = true
    if handle.id then pcall(M.call, c, 'cancel_request', handle.id) end
    finish(('crossfile: %s: cancelled'):format(label))
    return true
  end
  return handle
end

--- Runs a `workspace/executeCommand` command with one argument without waiting (see
--- M.request). opts: { buf, timeout_ms, token (a workDoneToken: progress reported under it) }.
function M.execute(c, command, argument, opts, on_done)
  opts = opts or {}
  local params = { command = command, arguments = argument ~= nil and { argument } or {},
    workDoneToken = opts.token }
  return M.request(c, 'workspace/executeCommand', params, opts.buf, on_done, opts.timeout_ms)
end

--- Waits for `handle` (from M.request / M.execute, whose on_done stored `handle.err`,
--- `handle.result`) for scripts: processes events meanwhile; raises its error.
local function wait(handle, timeout_ms)
  vim.wait(timeout_ms + 1000, function() return handle.done end, 5)
  if not handle.done then handle.cancel() end
  if handle.err then error(handle.err, 0) end
  return handle.result
end

--- The synchronous form, for scripts and checkhealth: sends `method` and waits for its answer
--- (at most `timeout_ms`), processing events meanwhile. Raises the server's message.
function M.request_sync(c, method, params, buf, timeout_ms)
  timeout_ms = timeout_ms or config.options.timeout_ms
  local handle
  handle = M.request(c, method, params, buf, function(err, result)
    handle.err, handle.result = err, result
  end, timeout_ms)
  return wait(handle, timeout_ms)
end

--- Runs a command and waits for its answer (the synchronous form of M.execute).
function M.execute_sync(c, command, argument, buf, timeout_ms)
  local params = { command = command, arguments = argument ~= nil and { argument } or {} }
  return M.request_sync(c, 'workspace/executeCommand', params, buf, timeout_ms)
end

--- The last `crossfile.status` answer of `client`, or nil before the first.
function M.last_status(client)
  return client and statuses[client.id] or nil
end

--- Asks `client` for `crossfile.status` without waiting; the answer replaces the last one.
function M.refresh_status(client)
  if stopped(client) or not client.initialized then return end
  M.call(client, 'request', 'workspace/executeCommand', { command = 'crossfile.status', arguments = {} },
    function(err, result)
      if not err and type(result) == 'table' then statuses[client.id] = result end
    end)
end

--- Sends the settings in force to every running client (workspace/didChangeConfiguration); their
--- status is asked again once the server had a moment to apply them.
function M.send_settings()
  for _, client in ipairs(M.clients()) do
    reports[client.id] = { messages = {} }
    local settings = config.settings_for(client.root_dir)
    client.config.init_options = settings
    M.call(client, 'notify', 'workspace/didChangeConfiguration', { settings = { crossfile = settings } })
    vim.defer_fn(function() M.refresh_status(client) end, 500)
  end
end

--- What `c`'s server reports it is doing (the oldest work under way), or nil.
function M.progress_text(c)
  local texts = c and work[c.id]
  if not texts then return nil end
  for _, text in pairs(texts) do return text end
  return nil
end

--- Takes the server's progress ($/progress, through LspProgress): kept for the statusline, and
--- echoed in the command line when there is a UI. The commands' own progress (our tokens) goes
--- to their views (crossfile.jobs).
function M.on_progress(ev)
  local client = vim.lsp.get_client_by_id(ev.data.client_id)
  if not client or client.name ~= M.name then return end
  local params = ev.data.params or {}
  local value = params.value or {}
  local text = table.concat(vim.tbl_filter(function(s) return s ~= nil and s ~= '' end, {
    value.title, value.message, value.percentage and (value.percentage .. '%') or nil,
  }), ' ')
  local token = tostring(params.token)
  if not token:find('^crossfile%-nvim/') then
    work[client.id] = work[client.id] or {}
    work[client.id][token] = value.kind ~= 'end' and text:gsub('^crossfile:? *', '') or nil
  end
  if value.kind == 'end' then text = text .. ' (done)' end
  if not vim.startswith(text, 'crossfile') then text = 'crossfile: ' .. text end
  if #vim.api.nvim_list_uis() == 0 then return end
  vim.api.nvim_echo({ { text } }, false, {})
end


return M
