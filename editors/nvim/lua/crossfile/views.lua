-- crossfile.views: the scratch splits that show the server's compare, context and arena reveal
-- answers as text,
-- and a pending state while the answer is on its way (<C-c> there cancels it). <CR> on a chunk's
-- line opens the chunk's file at its first line.

local M = {}

local ns = vim.api.nvim_create_namespace('crossfile.views')

vim.api.nvim_set_hl(0, 'CrossfileTitle', { link = 'Title', default = true })
vim.api.nvim_set_hl(0, 'CrossfileUpperBound', { link = 'WarningMsg', default = true })
vim.api.nvim_set_hl(0, 'CrossfileDelete', { link = 'DiffDelete', default = true })
vim.api.nvim_set_hl(0, 'CrossfileInsert', { link = 'DiffAdd', default = true })
vim.api.nvim_set_hl(0, 'CrossfileChunk', { link = 'Directory', default = true })

--- Per view name: { buf, links = { [line] = {uri, line} }, job?, timer? (while pending) }.
local views = {}
local stop_pending

-- A text builder: lines, highlights and chunk links.
local function builder()
  local b = { lines = {}, marks = {}, links = {} }
  function b.add(text, hl)
    for _, line in ipairs(vim.split(text or '', '\n', { plain = true })) do
      b.lines[#b.lines + 1] = line
      if hl then b.marks[#b.marks + 1] = { #b.lines - 1, 0, #line, hl } end
    end
  end
  function b.block(text, indent)
    for _, line in ipairs(vim.split(text or '', '\n', { plain = true })) do b.add(indent .. line) end
  end
  return b
end

local function number(v)
  if type(v) ~= 'number' then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 1e15 then return ('%d'):format(v) end
  return ('%.2f'):format(v)
end

local function metrics_line(metrics)
  if type(metrics) ~= 'table' then return nil end
  if metrics.error then return 'error: ' .. tostring(metrics.error) end
  local keys = vim.tbl_keys(metrics)
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. ' ' .. number(metrics[k]) end
  return table.concat(parts, ' · ')
end

local function tokens_line(t)
  if type(t) ~= 'table' then return '' end
  return ('crossfile %s · left %s · right %s · total %s'):format(number(t.crossfile), number(t.left),
    number(t.right), number(t.total))
end

local function chunks(b, list, with_text)
  if not list or #list == 0 then
    b.add('    (none)')
    return
  end
  for _, ch in ipairs(list) do
    local lines = ch.startLine and (':%d-%d'):format(ch.startLine, ch.endLine) or ''
    -- compare's chunks say where they come from: same_file, same_dir, imported or elsewhere.
    local origin = type(ch.origin) == 'string' and (' · ' .. ch.origin) or ''
    -- a mix's chunks name the source that gave them.
    local source = type(ch.source) == 'string' and (' · ' .. ch.source) or ''
    b.add(('    %s%s%s%s  %s'):format(ch.path or '?', lines, origin, source, number(ch.score)), 'CrossfileChunk')
    if ch.uri then b.links[#b.lines] = { uri = ch.uri, line = ch.startLine or 1 } end
    if with_text and ch.text then b.block(ch.text, '      │ ') end
  end
end

-- The diff runs as one text whose deleted runs are [-…-] and inserted runs {+…+}, highlighted.
local function diff(b, runs)
  local text, spans = '', {}
  for _, run in ipairs(runs) do
    local piece = run.text or ''
    if run.op == 'delete' then piece = '[-' .. piece .. '-]' elseif run.op == 'insert' then piece = '{+' .. piece .. '+}' end
    local hl = run.op == 'delete' and 'CrossfileDelete' or run.op == 'insert' and 'CrossfileInsert' or nil
    spans[#spans + 1] = { #text, #text + #piece, hl }
    text = text .. piece
  end
  local first = #b.lines
  local offsets, at = {}, 0
  for i, line in ipairs(vim.split(text, '\n', { plain = true })) do
    offsets[i] = at
    at = at + #line + 1
    b.add('    ' .. line)
  end
  for _, s in ipairs(spans) do
    if s[3] then
      -- Highlight each line the run covers.
      for i, off in ipairs(offsets) do
        local line_end = off + #b.lines[first + i] - 4
        local from, to = math.max(s[1], off), math.min(s[2], line_end)
        if from < to then b.marks[#b.marks + 1] = { first + i - 1, from - off + 4, to - off + 4, s[3] } end
      end
    end
  end
end

local function where(answer)
  local path = answer.uri and vim.uri_to_fname(answer.uri) or '?'
  path = vim.fn.fnamemodify(path, ':~:.')
  local pos = answer.position or {}
  local at = ('%s:%s:%s'):format(path, (pos.line or 0) + 1, (pos.character or 0) + 1)
  if answer.caseId then at = at .. ' (case ' .. answer.caseId .. ')' end
  return at
end

--- An EvoCodeBench body's tests (a score or compare answer's `outcome`) into builder `b`.
local function outcome(b, o, indent)
  if type(o) ~= 'table' then return end
  local recall = type(o.recall) == 'number' and (' · recall ' .. number(o.recall)) or ''
  b.add(indent .. 'tests: ' .. tostring(o.status) .. recall, o.passed and 'CrossfileInsert' or 'CrossfileDelete')
  if type(o.message) == 'string' then b.add(indent .. '  ' .. o.message) end
  for _, t in ipairs(o.tests or {}) do
    b.add(('%s  %s: %s (%s s)'):format(indent, t.id, t.status, number(t.secs)))
    if t.status ~= 'pass' then b.block(t.output or '', indent .. '    ') end
  end
end

--- The lines of a crossfile.compare answer (and its highlights and links).
function M.compare_text(answer)
  local b = builder()
  b.add('Crossfile compare at ' .. where(answer), 'CrossfileTitle')
  if answer.reference then
    b.add('  reference:')
    b.block(answer.reference, '    ')
  end
  for _, r in ipairs(answer.results or {}) do
    b.add('')
    -- At a replayed case: the share of the reference's identifiers the chunks hold.
    local overlap = type(r.overlap) == 'number' and ('  · overlap ' .. ('%.2f'):format(r.overlap)) or ''
    b.add('## ' .. r.retriever .. (r.upperBound and '  [upper bound: it sees the reference]' or '') .. overlap,
      r.upperBound and 'CrossfileUpperBound' or 'CrossfileTitle')
    if r.error then
      b.add('  error: ' .. r.error)
    else
      b.add('  chunks:')
      chunks(b, r.chunks, false)
      b.add('  prompt tokens: ' .. tokens_line(r.promptTokens))
      b.add('  suggestion:')
      b.block(r.suggestion or '', '    ')
      if r.diff then
        b.add('  diff against the reference ([-only in the reference-] {+only in the suggestion+}):')
        diff(b, r.diff)
      end
      b.add('  latency: ' .. number(r.latencyMs) .. ' ms')
      local m = metrics_line(r.metrics)
      if m then b.add('  metrics: ' .. m) end
      if r.body then
        b.add('  body tested:')
        b.block(r.body, '    ')
      end
      outcome(b, r.outcome, '  ')
    end
  end
  return b
end

--- The lines of a crossfile.score answer for an EvoCodeBench case: the body and its tests.
function M.outcome_text(answer)
  local b = builder()
  b.add(('Crossfile tests of case %s (scored %s)'):format(answer.caseId, answer.scored or '?'), 'CrossfileTitle')
  b.add('  body tested:')
  b.block(answer.prediction or '', '    ')
  outcome(b, answer.outcome, '  ')
  return b
end

--- The lines of a crossfile.context answer (nil: no completion yet).
function M.context_text(answer)
  local b = builder()
  if type(answer) ~= 'table' then
    b.add('Crossfile context: no completion in this buffer yet', 'CrossfileTitle')
    return b
  end
  b.add('Crossfile context of the last completion at ' .. where(answer), 'CrossfileTitle')
  b.add('  retriever: ' .. tostring(answer.retriever) .. (answer.upperBound and '  [upper bound]' or ''),
    answer.upperBound and 'CrossfileUpperBound' or nil)
  b.add('  latency: ' .. number(answer.latencyMs) .. ' ms')
  local t = answer.timingsMs
  if type(t) == 'table' then
    b.add(('  timings: retrieve %s · prompt %s · generate %s · postprocess %s · first token %s ms'):format(
      number(t.retrieve), number(t.prompt), number(t.generate), number(t.postprocess), number(t.firstToken)))
  end
  b.add('  prompt tokens: ' .. tokens_line(answer.promptTokens))
  b.add('  suggestion:')
  b.block(answer.suggestion or '', '    ')
  if answer.rawSuggestion and answer.rawSuggestion ~= answer.suggestion then
    b.add('  raw model output:')
    b.block(answer.rawSuggestion, '    ')
  end
  b.add('')
  b.add('## chunks', 'CrossfileTitle')
  chunks(b, answer.chunks, true)
  b.add('')
  b.add('## prompt', 'CrossfileTitle')
  b.block(answer.prompt or '', '')
  return b
end

--- The lines of a crossfile.arenaReveal answer: which arm made suggestion 1 and 2, which was
--- picked, both texts, their latencies and metrics (when the server scored them).
function M.arena_text(answer)
  local b = builder()
  local function arm(n)
    local a = type(answer.arms) == 'table' and answer.arms[n] or nil
    return type(a) == 'string' and a or vim.inspect(a)
  end
  local id = type(answer.battle) == 'number' and (' ' .. number(answer.battle)) or ''
  local at = ''
  if type(answer.path) == 'string' then
    at = (' at %s:%s:%s'):format(vim.fn.fnamemodify(answer.path, ':~:.'), tostring(answer.line), tostring(answer.col))
  end
  b.add(('Crossfile arena: the last battle%s revealed%s'):format(id, at), 'CrossfileTitle')
  local picked = answer.picked
  if picked == 1 or picked == 2 then
    b.add(('  picked: %d (%s)'):format(picked, arm(picked)), 'CrossfileInsert')
  else
    b.add('  picked: none (dismissed, or typed on)')
  end
  if type(answer.caseId) == 'string' then b.add('  case: ' .. answer.caseId) end
  if type(answer.votes) == 'string' then b.add('  votes: ' .. answer.votes) end
  for n = 1, 2 do
    b.add('')
    b.add(('## %d: %s%s'):format(n, arm(n), picked == n and '  [picked]' or ''), 'CrossfileTitle')
    local latency = type(answer.latencyMs) == 'table' and answer.latencyMs[n] or nil
    if latency ~= nil and latency ~= vim.NIL then b.add('  latency: ' .. number(latency) .. ' ms') end
    local m = type(answer.metrics) == 'table' and metrics_line(answer.metrics[n]) or nil
    if m then b.add('  metrics: ' .. m) end
    b.add('  suggestion:')
    local text = type(answer.texts) == 'table' and answer.texts[n] or nil
    b.block(type(text) == 'string' and text or '', '    ')
  end
  return b
end

local function open_link(name)
  local v = views[name]
  local link = v and v.links[vim.api.nvim_win_get_cursor(0)[1]]
  if not link then return end
  vim.cmd('wincmd p')
  if vim.api.nvim_get_current_buf() == v.buf then vim.cmd('aboveleft split') end
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(link.uri)))
  pcall(vim.api.nvim_win_set_cursor, 0, { link.line, 0 })
end

-- The scratch buffer of view `name`, made once.
local function scratch(name)
  local v = views[name]
  if v and vim.api.nvim_buf_is_valid(v.buf) then return v end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, 'crossfile://' .. name)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].filetype = 'crossfile'
  vim.keymap.set('n', '<CR>', function() open_link(name) end, { buffer = buf, desc = 'crossfile: open chunk' })
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, desc = 'crossfile: close' })
  v = { buf = buf, links = {} }
  views[name] = v
  return v
end

-- Ends the pending state of view `v`: its timer and its <C-c>.
stop_pending = function(v)
  if v.timer then
    v.timer:stop()
    if not v.timer:is_closing() then v.timer:close() end
    v.timer = nil
  end
  if v.job then
    v.job = nil
    pcall(vim.keymap.del, 'n', '<C-c>', { buffer = v.buf })
  end
end

-- The lines of a view waiting for `job` (from crossfile.jobs).
local function pending_text(title, job)
  local b = builder()
  b.add(title, 'CrossfileTitle')
  b.add(('  waiting for the server… %d s   (<C-c> or :Crossfile cancel cancels)'):format(
    math.floor((vim.uv.now() - job.started) / 1000)))
  if job.progress and job.progress ~= '' then b.add('  ' .. job.progress) end
  return b
end

--- Shows view `name` waiting for `job` (crossfile.jobs'): `title`, the seconds so far and the
--- server's progress, refreshed twice a second; <C-c> in the view cancels the job, and so does a
--- newer pending() for the view. The next render() ends the pending state.
function M.pending(name, title, job)
  -- A newer command for the view replaces the one it waits for.
  local older = views[name] and views[name].job
  if older and older ~= job and not older.done then require('crossfile.jobs').cancel(older) end
  M.render(name, pending_text(title, job))
  local v = views[name]
  v.job = job
  vim.keymap.set('n', '<C-c>', function() require('crossfile.jobs').cancel(job) end,
    { buffer = v.buf, desc = 'crossfile: cancel the waiting command' })
  v.timer = assert(vim.uv.new_timer())
  v.timer:start(500, 500, vim.schedule_wrap(function()
    if v.job ~= job or not vim.api.nvim_buf_is_valid(v.buf) then return end
    local b = pending_text(title, job)
    vim.bo[v.buf].modifiable = true
    vim.api.nvim_buf_set_lines(v.buf, 0, -1, false, b.lines)
    vim.bo[v.buf].modifiable = false
    vim.bo[v.buf].modified = false
  end))
  return v.buf
end

--- Whether view `name` waits for `job` (else a newer command took it over, or it has shown an
--- answer since).
function M.waits_for(name, job)
  local v = views[name]
  return v ~= nil and v.job == job
end

--- Whether view `name` is waiting for an answer.
function M.is_pending(name)
  local v = views[name]
  return v ~= nil and v.job ~= nil
end

--- A one-paragraph text for a view: a title and a message (a cancelled or failed command).
function M.message_text(title, message)
  local b = builder()
  b.add(title, 'CrossfileTitle')
  b.add('  ' .. message)
  return b
end

--- Whether view `name` shows in a window.
function M.visible(name)
  local v = views[name]
  return v ~= nil and vim.api.nvim_buf_is_valid(v.buf) and vim.fn.bufwinid(v.buf) ~= -1
end

--- Puts built text `b` in view `name`; opens it in a split below unless it shows (or `show` is
--- false). Returns the view's buffer.
function M.render(name, b, show)
  local v = scratch(name)
  stop_pending(v)
  vim.bo[v.buf].modifiable = true
  vim.api.nvim_buf_set_lines(v.buf, 0, -1, false, b.lines)
  vim.bo[v.buf].modifiable = false
  vim.bo[v.buf].modified = false
  vim.api.nvim_buf_clear_namespace(v.buf, ns, 0, -1)
  for _, m in ipairs(b.marks) do
    pcall(vim.api.nvim_buf_set_extmark, v.buf, ns, m[1], m[2], { end_col = m[3], hl_group = m[4] })
  end
  v.links = b.links
  if show ~= false and vim.fn.bufwinid(v.buf) == -1 then
    local from = vim.api.nvim_get_current_win()
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, v.buf)
    vim.wo.wrap = false
    vim.api.nvim_set_current_win(from)
  end
  return v.buf
end

return M
