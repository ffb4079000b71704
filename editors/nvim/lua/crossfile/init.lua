-- crossfile: the Neovim client of `crossfile serve`: setup() and the public Lua API (:help crossfile).
-- The calls that ask the server return at once and answer a callback; `*_sync` forms wait.

local arena = require('crossfile.arena')
local client = require('crossfile.client')
local config = require('crossfile.config')
local ghost = require('crossfile.ghost')
local inline = require('crossfile.inline')
local jobs = require('crossfile.jobs')
local keymaps = require('crossfile.keymaps')
local position = require('crossfile.position')
local recent = require('crossfile.recent')
local replay = require('crossfile.replay')
local views = require('crossfile.views')

local M = {}

local set_up = false
local refresh_context

--- Whether setup() has run.
function M.is_set_up() return set_up end

client.on_attach(function(_, buf)
  inline.attach(buf)
  recent.attach(buf)
  keymaps.attach(buf, client.is_manual(buf))
end)

local function attach_if_wanted(buf)
  if vim.bo[buf].filetype == '' then
    local ft = config.filetype(buf)
    -- Filetype detection is off (e.g. `nvim -u NONE`): told from the extension. Setting it runs
    -- the FileType autocommand, which attaches.
    if ft and config.wants(ft) then
      vim.bo[buf].filetype = ft
      return
    end
  end
  client.attach(buf)
end

-- Sends the settings in force; what made the last suggestions no longer says what is in force.
local function settings_changed()
  inline.made_by = {}
  client.send_settings()
end

--- Sets the plugin up (see :help crossfile-setup). Called again, it applies the new options and
--- sends the new settings to the running servers.
function M.setup(opts)
  config.apply(opts)
  local group = vim.api.nvim_create_augroup('crossfile', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.options.filetypes,
    callback = function(ev) client.attach(ev.buf) end,
  })
  local patterns = {}
  for ext in pairs(config.extensions) do patterns[#patterns + 1] = '*.' .. ext end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    pattern = patterns,
    callback = function(ev) attach_if_wanted(ev.buf) end,
  })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = client.on_progress })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = jobs.on_progress })
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'CrossfileSuggestion',
    callback = function(ev)
      -- A battle's context would tell its arms: the view keeps the last plain completion's.
      if ev.data and ev.data.completed and not ev.data.battle and views.visible('context') then refresh_context() end
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'CrossfileJob',
    callback = function() pcall(vim.cmd.redrawstatus) end,
  })
  require('crossfile.commands').create_deprecated()
  if set_up then
    settings_changed()
    for _, c in ipairs(client.clients()) do
      for buf in pairs(c.attached_buffers) do keymaps.attach(buf, client.is_manual(buf)) end
    end
  end
  set_up = true
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) ~= '' then attach_if_wanted(buf) end
  end
end

--- Replaces the server settings and sends them to the running servers.
function M.set_settings(settings)
  config.options.settings = vim.deepcopy(settings or {})
  settings_changed()
end

-- The synchronous form of async call `start(on_done)`: waits (events processed meanwhile) and
-- returns its value, or raises its error.
local function sync(start)
  local box = {}
  start(function(err, value) box.done, box.err, box.value = true, err, value end)
  vim.wait(config.options.timeout_ms + 5000, function() return box.done end, 5)
  if not box.done then error('crossfile: no answer in time', 0) end
  if box.err then error(box.err, 0) end
  return box.value
end

-- Runs async call `start(on_done)`. Without `on_done` (a script's call, as the API was before it
-- was asynchronous, and as ../shared/checks/nvim_replay.lua calls it) it waits like the *_sync
-- forms; the editor's own commands always give one.
local function call(on_done, start)
  if on_done then return start(on_done) end
  return sync(start)
end

--- Replays a case: {cases = FILE, repos = DIR, case = ID or 0-based INDEX, format?, in_place?,
--- setting?, envs?, max_new_tokens?}. With `on_done`, returns at once (the job) and calls
--- `on_done(err, case)` once the case's buffer is open; its ghost text follows as soon as the
--- server answers. Without, waits and returns the case (as replay_sync).
function M.replay(opts, on_done) return call(on_done, function(done) return replay.replay(opts, done) end) end

function M.next(on_done) return call(on_done, replay.next) end

function M.prev(on_done) return call(on_done, replay.prev) end

--- The synchronous forms, for scripts: they wait for the answer and return the case table.
function M.replay_sync(opts) return sync(function(done) replay.replay(opts, done) end) end

function M.next_sync() return sync(replay.next) end

function M.prev_sync() return sync(replay.prev) end

--- The exact text of the suggestion shown in `buf` (all its lines), or nil.
function M.suggestion(buf)
  if buf == nil or buf == 0 then buf = vim.api.nvim_get_current_buf() end
  local s = ghost.get(buf)
  return s and s.text or nil
end

-- Votes `pick` on the battle an accept ended (nil: none did).
local function voted(buf, text, battle, pick)
  if battle then arena.vote(buf, battle.id, pick) end
  return text
end

--- Inserts the suggestion shown in the current buffer; returns the text inserted, or nil. In an
--- arena battle it is suggestion 1, and the vote says so.
function M.accept()
  local buf = vim.api.nvim_get_current_buf()
  local text, battle = ghost.accept(buf)
  return voted(buf, text, battle, 1)
end

--- Inserts the first line of the suggestion; the rest stays shown (in a battle: of suggestion 1,
--- voted for).
function M.accept_line()
  local buf = vim.api.nvim_get_current_buf()
  local s = ghost.get(buf)
  if not s then return nil end
  local text, battle = ghost.accept(buf, ghost.first_line(s.text))
  return voted(buf, text, battle, 1)
end

--- The arena battle shown in `buf` (default: the current buffer): { id, texts = {1's, 2's} }, or
--- nil.
function M.battle(buf)
  if buf == nil or buf == 0 then buf = vim.api.nvim_get_current_buf() end
  local b = ghost.battle(buf)
  return b and { id = b.id, texts = vim.deepcopy(b.texts) } or nil
end

--- Accepts suggestion `n` (1 or 2) of the battle shown in the current buffer: inserts it whole,
--- as accept() does, and sends the vote (crossfile.arenaVote). Returns the text, or nil when no
--- battle shows.
function M.arena_accept(n)
  if n ~= 1 and n ~= 2 then error('crossfile: arena_accept: 1 or 2, got ' .. vim.inspect(n), 0) end
  local buf = vim.api.nvim_get_current_buf()
  if not ghost.battle(buf) then return nil end
  local text, battle = ghost.accept(buf, nil, n)
  return voted(buf, text, battle, n)
end

--- The server's last recorded battle of this session with its arms revealed
--- (crossfile.arenaReveal: {battle, arms, picked, texts, latencyMs, caseId, metrics, votes}):
--- `on_done(err, answer)`; returns the job (without `on_done`: waits, returns the answer).
function M.arena_reveal(on_done)
  local buf = vim.api.nvim_get_current_buf()
  local c = arena.server(buf)
  return call(on_done, function(done)
    return jobs.run(c, arena.reveal_command, vim.empty_dict(), { buf = client.for_buf(buf) and buf or nil,
      label = 'revealing the last battle' }, done)
  end)
end

function M.arena_reveal_sync() return M.arena_reveal() end

function M.dismiss()
  inline.cancel(vim.api.nvim_get_current_buf())
end

-- The LSP position at the cursor: the replayed case's own while the cursor is where replay put it;
-- in normal mode, on a line's last character, the end of the line.
local function cursor_position(buf)
  local case = replay.case_position(buf)
  if case then return case end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  if mode ~= 'i' and mode ~= 'R' and col + 1 >= #line then col = #line end
  return position.to_lsp(buf, row - 1, col)
end

--- Asks for a suggestion at the cursor now (shown in normal mode too).
function M.complete()
  local buf = vim.api.nvim_get_current_buf()
  if not client.for_buf(buf) then
    error('crossfile: no crossfile server is attached to this buffer', 0)
  end
  return inline.request(buf, { position = cursor_position(buf), normal = true, manual = true })
end

--- The server's score (crossfile.score) of what the replayed case's buffer now holds:
--- `on_done(err, answer)`; returns the job (without `on_done`: waits and returns the answer).
function M.score(on_done) return call(on_done, replay.score) end

function M.score_sync() return sync(replay.score) end

-- The buffer and server of a request at the cursor; raises when no server is attached.
local function attached()
  local buf = vim.api.nvim_get_current_buf()
  local c = client.of_buf(buf)
  if not c then error('crossfile: no crossfile server is attached to this buffer', 0) end
  return buf, c
end

--- The default retrievers of compare.
M.compare_default = { 'none', 'identifiers', 'bm25', 'bm25-cceval-rg1', 'oracle' }

--- The server's crossfile.compare answer at the cursor for retriever specs `specs` (a list or a
--- string): `on_done(err, answer)`; returns the job (without `on_done`: waits, returns the answer).
function M.compare(specs, on_done)
  specs = specs or M.compare_default
  if type(specs) == 'string' then specs = vim.split(specs, '[%s,]+', { trimempty = true }) end
  local buf, c = attached()
  return call(on_done, function(done)
    return jobs.run(c, 'crossfile.compare',
      { uri = vim.uri_from_bufnr(buf), position = cursor_position(buf), retrievers = specs },
      { buf = buf, label = 'comparing ' .. table.concat(specs, ', '), progress = true }, done)
  end)
end

function M.compare_sync(specs) return M.compare(specs) end

--- The server's crossfile.context answer for the current buffer (nil before its first
--- completion): `on_done(err, answer)`; returns the job (without `on_done`: waits, returns it).
function M.context(on_done)
  local buf, c = attached()
  return call(on_done, function(done)
    return jobs.run(c, 'crossfile.context', { uri = vim.uri_from_bufnr(buf) },
      { buf = buf, label = 'reading the context' }, done)
  end)
end

function M.context_sync() return M.context() end

-- Updates the context view from the last buffer that asked for a completion.
refresh_context = function()
  local last = inline.last and inline.last.buf
  local c = last and vim.api.nvim_buf_is_valid(last) and client.for_buf(last)
  if not c then return end
  client.execute(c, 'crossfile.context', { uri = vim.uri_from_bufnr(last) }, { buf = last }, function(err, result)
    if not err and views.visible('context') and not views.is_pending('context') then
      views.render('context', views.context_text(result), false)
    end
  end)
end

--- Cancels every command waiting for the server ($/cancelRequest); returns how many.
function M.cancel() return jobs.cancel() end

--- A short status for a statusline: `crossfile · <model> · <retriever> · <latency> ms · case 3/30 ·
--- ES 71.4`, or ''. The model and retriever are what made the buffer's last suggestion, else what
--- the server last said it runs with (`crossfile.status`, asked on attach and after a settings
--- change): never a request of its own. After an arena battle, `crossfile · arena · <latency> ms`.
function M.status()
  local buf = vim.api.nvim_get_current_buf()
  local c = client.for_buf(buf)
  local waiting = jobs.status()
  if not c then return waiting and ('crossfile · ' .. waiting) or '' end
  local parts = { 'crossfile' }
  local last = inline.last
  local battle = last and last.buf == buf and last.shown and last.battle
  if battle then
    -- An arena battle: its arms (their retriever, maybe their model) stay unsaid until the reveal.
    parts[#parts + 1] = 'arena'
  else
    local made_by = inline.made_by[buf] or {}
    local server = client.last_status(c) or {}
    local model = made_by.model or vim.tbl_get(server, 'model', 'label')
    if model then parts[#parts + 1] = model end
    local retriever = made_by.retriever or server.retriever
    if retriever then parts[#parts + 1] = retriever end
  end
  if last and last.buf == buf and last.shown then parts[#parts + 1] = ('%d ms'):format(last.latency_ms) end
  local cur = replay.current
  if cur and cur.buf == buf and cur.case then
    parts[#parts + 1] = ('case %d/%d'):format((cur.case.index or 0) + 1, cur.case.count or 0)
    -- A case mined from history: its line's category, as the server names it.
    if type(cur.case.category) == 'string' then parts[#parts + 1] = cur.case.category end
    local es = cur.score and vim.tbl_get(cur.score, 'metrics', 'es')
    if es then parts[#parts + 1] = ('ES %.1f'):format(es) end
  end
  local work = client.progress_text(c)
  if work then parts[#parts + 1] = work end
  if waiting then parts[#parts + 1] = waiting end
  return table.concat(parts, ' · ')
end

return M
