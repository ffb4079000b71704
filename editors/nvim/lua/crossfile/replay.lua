-- crossfile.replay: benchmark cases replayed through the server (crossfile.replayCase, nextCase,
-- previousCase, score, listCases), without waiting: when the answer comes, opens the case's buffer
-- at its cursor and asks for a completion. Each call ends with on_done(err, value).

local client = require('crossfile.client')
local config = require('crossfile.config')
local inline = require('crossfile.inline')
local jobs = require('crossfile.jobs')
local keymaps = require('crossfile.keymaps')
local position = require('crossfile.position')

local M = {}

--- The case open now: { client_id, buf, uri, position, cursor, case, score }.
M.current = nil
--- The last cases file and repositories folder replayed (the commands' defaults).
M.last_args = {}

local function absolute(path)
  return vim.fs.normalize(vim.fn.fnamemodify(vim.fs.normalize(path), ':p'))
end

local function replay_client()
  local cur = M.current and vim.lsp.get_client_by_id(M.current.client_id)
  if cur and not client.call(cur, 'is_stopped') then return cur end
  return client.any(vim.api.nvim_get_current_buf())
end

local function need_current()
  local cur = M.current
  if not cur then error('crossfile: no case is being replayed: replay one first (:Crossfile replay)', 0) end
  local c = vim.lsp.get_client_by_id(cur.client_id)
  if not c or client.call(c, 'is_stopped') then error('crossfile: the server that replayed the case has exited', 0) end
  if not vim.api.nvim_buf_is_valid(cur.buf) then error('crossfile: the buffer of the replayed case was closed', 0) end
  return cur, c
end

-- Puts `text` (the case's file as the server has it, lines joined by \n) in `buf`, unless it is there.
local function set_text(buf, text)
  local lines = vim.split(text, '\n', { plain = true })
  local eol = #lines > 1 and lines[#lines] == ''
  if eol then table.remove(lines) end
  local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if not vim.deep_equal(now, lines) or vim.bo[buf].eol ~= eol then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  end
  vim.bo[buf].eol = eol
  vim.bo[buf].fixeol = eol
  vim.bo[buf].fileformat = 'unix'
  -- The replay copy on disk holds this text.
  vim.bo[buf].modified = false
end

-- Opens the case the server answered with, attaches the client and asks for its completion.
local function open(c, answer)
  local buf = vim.uri_to_bufnr(answer.uri)
  local old = M.current and M.current.buf
  client.mark_manual(buf)
  if not vim.api.nvim_buf_is_loaded(buf) then
    vim.bo[buf].swapfile = false
    vim.fn.bufload(buf)
  end
  set_text(buf, answer.text or '')
  if vim.bo[buf].filetype == '' then
    vim.bo[buf].filetype = vim.filetype.match({ buf = buf }) or config.filetype(buf) or ''
  end
  -- Not in a view's split (the answer may come while the user is there).
  if vim.bo.filetype == 'crossfile' then vim.cmd('wincmd p') end
  vim.api.nvim_win_set_buf(0, buf)
  -- The previous case's copy is put back on disk by the server: its buffer goes.
  if old and old ~= buf and vim.api.nvim_buf_is_valid(old) then
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local row, col = position.to_buffer(buf, answer.position)
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
  if not client.for_buf(buf) or client.for_buf(buf).id ~= c.id then
    vim.lsp.buf_attach_client(buf, c.id)
  end
  keymaps.attach(buf, true)
  M.current = {
    client_id = c.id,
    buf = buf,
    uri = vim.uri_from_bufnr(buf),
    position = answer.position,
    cursor = vim.api.nvim_win_get_cursor(0),
    case = answer.case,
  }
  inline.request(buf, { position = answer.position, normal = true, manual = true })
  return answer.case
end

-- on_done(err, value) of a job whose answer `finish(answer)` turns into the value; an error in
-- `finish` is the job's error.
local function then_(on_done, finish)
  return function(err, answer, job)
    if err then return on_done(err, nil, job) end
    local ok, value = pcall(finish, answer)
    if not ok then return on_done(tostring(value), nil, job) end
    on_done(nil, value, job)
  end
end

--- Replays a case: opts.cases (file), opts.repos (folder), opts.case (id, or 0-based index),
--- opts.format ('cceval' | 'repoeval' | 'history' | 'evocodebench', optional), opts.in_place (optional);
--- for EvoCodeBench, opts.setting ('baseline' | 'local_completion' | 'local_infilling'), opts.envs
--- (the environments' folder) and opts.max_new_tokens, all optional. Returns the job at once;
--- `on_done(err, case)` follows once the case is open.
function M.replay(opts, on_done)
  vim.validate({ opts = { opts, 'table' }, on_done = { on_done, 'function' } })
  if type(opts.cases) ~= 'string' or type(opts.repos) ~= 'string' or opts.case == nil then
    error('crossfile: replay needs {cases = FILE, repos = DIR, case = ID or INDEX}', 0)
  end
  local c = replay_client()
  local argument = {
    cases = absolute(opts.cases),
    repos = absolute(opts.repos),
    case = opts.case,
    format = opts.format,
    inPlace = opts.in_place or nil,
    setting = opts.setting,
    envs = opts.envs and absolute(opts.envs) or nil,
    maxNewTokens = opts.max_new_tokens,
  }
  return jobs.run(c, 'crossfile.replayCase', argument, { label = 'replaying case ' .. tostring(opts.case) },
    then_(on_done, function(answer)
      M.last_args = { cases = argument.cases, repos = argument.repos }
      return open(c, answer)
    end))
end

local function step(command, label, on_done)
  local _, c = need_current()
  return jobs.run(c, command, nil, { label = label }, then_(on_done, function(answer) return open(c, answer) end))
end

function M.next(on_done) return step('crossfile.nextCase', 'replaying the next case', on_done) end

function M.prev(on_done) return step('crossfile.previousCase', 'replaying the previous case', on_done) end

--- The server's score of what the case's buffer now holds at its cursor (an EvoCodeBench case's
--- tests report their progress); `on_done(err, answer)`.
function M.score(on_done)
  local cur, c = need_current()
  return jobs.run(c, 'crossfile.score', { caseId = cur.case.id, uri = cur.uri },
    { buf = cur.buf, label = 'scoring case ' .. tostring(cur.case.id), progress = true },
    then_(on_done, function(answer)
      cur.score = answer
      return answer
    end))
end

--- The cases of a cases file, for pickers: `on_done(err, { {id, index, language, repository,
--- path, line, category?}, ... })` (`category`: a case mined from history).
function M.list(cases, format, on_done)
  local c = replay_client()
  return jobs.run(c, 'crossfile.listCases', { cases = absolute(cases), format = format },
    { label = 'reading the cases' }, on_done)
end

--- Whether the case being replayed is an EvoCodeBench one (scored by running its tests).
function M.tested()
  local cur = M.current
  return cur ~= nil and cur.case ~= nil and cur.case.benchmark == 'evocodebench'
end

--- The case's position when `buf` is the replayed case's and the cursor is where replay put it.
function M.case_position(buf)
  local cur = M.current
  if not cur or cur.buf ~= buf or vim.api.nvim_get_current_buf() ~= buf then return nil end
  local now = vim.api.nvim_win_get_cursor(0)
  if now[1] == cur.cursor[1] and now[2] == cur.cursor[2] then return cur.position end
  return nil
end

return M
