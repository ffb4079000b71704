-- Keystroke → ghost text inside a real Neovim (issue 33, part 5): a person retypes lines of a
-- copy of the click workspace, one keystroke every 100 ms and a 600 ms pause after each keystroke
-- that ends an identifier, an operator or the line (as `crossfile bench typing` types over stdio).
-- Each keystroke's latency is from its arrival in Neovim (nvim_input) to the ghost text's extmark
-- for the buffer it left, or to the server's answer that it has nothing to suggest there (an
-- answer, as `bench typing` counts them; counted apart as empty); an answer after the next
-- keystroke counts for none. Figures go to
-- $CROSSFILE_LATENCY_OUT as JSON when set. The small model by default; CROSSFILE_LATENCY_MODEL=default
-- runs the default one (Qwen2.5-Coder-0.5B, as `crossfile model fetch` fetches it) with the
-- server's default settings. CROSSFILE_LATENCY_KEYS: the keystrokes to type (default 120).

local H = require('helpers')

local KEY_MS, PAUSE_MS = 100, 600

local function env(name, default)
  local v = os.getenv(name)
  return (v == nil or v == '') and default or v
end

-- The settings and a label for the model asked for.
local function model_settings()
  if env('CROSSFILE_LATENCY_MODEL', 'small') ~= 'default' then return H.settings(), vim.fs.basename(H.model) end
  local r = vim.system({ H.bin, 'model', 'fetch' }, { text = true }):wait()
  assert(r.code == 0, 'crossfile model fetch failed: ' .. (r.stderr or ''))
  local path = vim.trim(r.stdout)
  return { index = { cache_dir = vim.fs.joinpath(H.tmp, 'latency-cache') }, model = { path = path } },
    vim.fs.basename(path)
end

local function class(c)
  if c:match('[%w_]') then return 'word' end
  if c == ' ' then return 'space' end
  return 'other'
end

-- The keystrokes of `text`: { key (for nvim_input), pause (a 600 ms pause follows) }.
local function keystrokes(text)
  local out = {}
  for i = 1, #text do
    local c, nxt = text:sub(i, i), text:sub(i + 1, i + 1)
    local pause = c ~= ' ' and (nxt == '' or class(c) ~= class(nxt))
    out[#out + 1] = { key = c == '<' and '<lt>' or c, pause = pause }
  end
  return out
end

-- The places to retype: the middle assignment line of each of click's modules, in order, until
-- `want` keystrokes. Returns { {file, line (1-based), indent, text} }.
local function places(root, want)
  local out, count = {}, 0
  for _, name in ipairs({ 'types.py', 'utils.py', 'termui.py', 'formatting.py', 'parser.py', 'decorators.py',
    'shell_completion.py', 'core.py' }) do
    local file = vim.fs.joinpath(root, 'src', 'click', name)
    local candidates = {}
    for i, line in ipairs(vim.fn.readfile(file)) do
      local indent, code = line:match('^(%s+)([%a_][%w_%.]* = .+)$')
      if code and #code >= 25 and #code <= 60 and not code:find('#', 1, true) then
        candidates[#candidates + 1] = { file = file, line = i, indent = indent, text = code }
      end
    end
    local pick = candidates[math.max(1, math.floor(#candidates / 2))]
    if pick then
      out[#out + 1] = pick
      count = count + #pick.text
    end
    if count >= want then break end
  end
  return out
end

-- In the child: the keystroke log and the hook that times the ghost text.
local instrument = [[
  local state = { sent = {}, tick = {}, latency = {}, empty = {}, current = nil, reasons = {} }
  package.loaded.crossfile_latency = state
  vim.api.nvim_create_autocmd('User', {
    pattern = 'CrossfileSuggestion',
    callback = function(ev)
      local k = state.current
      -- How each answer (or its absence) ended while typing: shown, cancelled, stale buffer, ...
      if k and ev.data then
        local reason = ev.data.shown and 'shown' or tostring(ev.data.reason)
        state.reasons[reason] = (state.reasons[reason] or 0) + 1
      end
      -- An answer: ghost text shown, or the server's word that it has nothing to suggest there
      -- (as `bench typing` counts answers; counted apart as empty).
      local empty = ev.data and ev.data.reason == 'no suggestion'
      if not (ev.data and (ev.data.shown or empty) and k) or state.latency[k] then return end
      -- For the buffer the keystroke left (inline.lua drops answers for older ones).
      if vim.api.nvim_buf_get_changedtick(ev.data.buf) > state.tick[k] then
        state.latency[k] = (vim.uv.hrtime() - state.sent[k]) / 1e6
        state.empty[k] = empty or nil
      end
    end,
  })
]]

local send_key = [[
  local state, k, key = package.loaded.crossfile_latency, ...
  state.current = k
  state.tick[k] = vim.api.nvim_buf_get_changedtick(0)
  state.sent[k] = vim.uv.hrtime()
  vim.api.nvim_input(key)
]]

-- The p-th percentile (nearest rank) of `values` where nil ranks above every number; nil when it
-- falls on one.
local function percentile(values, p)
  local sorted = vim.tbl_filter(function(v) return v ~= vim.NIL end, values)
  table.sort(sorted)
  local rank = math.max(1, math.ceil(p * #values))
  return sorted[rank]
end

local function round(v) return v and math.floor(v * 10 + 0.5) / 10 or vim.NIL end

local function summary(latencies, empties)
  local n, within300, within1000, empty = #latencies, 0, 0, 0
  for _, e in ipairs(empties) do
    if e then empty = empty + 1 end
  end
  for _, l in ipairs(latencies) do
    if l ~= vim.NIL and l <= 300 then within300 = within300 + 1 end
    if l ~= vim.NIL and l <= 1000 then within1000 = within1000 + 1 end
  end
  local answered = vim.tbl_filter(function(v) return v ~= vim.NIL end, latencies)
  return {
    count = n,
    answered = #answered,
    -- Of those, the answers with nothing to show.
    empty_answers = empty,
    p50_ms = round(percentile(latencies, 0.5)),
    p95_ms = round(percentile(latencies, 0.95)),
    within_300ms = n > 0 and within300 / n or 0,
    within_1000ms = n > 0 and within1000 / n or 0,
    answered_p50_ms = round(percentile(answered, 0.5)),
    answered_p95_ms = round(percentile(answered, 0.95)),
  }
end

describe('latency', function()
  it('keystroke to ghost text, typed in a real Neovim #latency', function()
    local want = tonumber(env('CROSSFILE_LATENCY_KEYS', '120'))
    local settings, model = model_settings()
    local root = H.click()
    local child = H.nvim()
    local ok, err = pcall(function()
      child.lua(instrument)
      H.setup(child, settings)
      local keys, first = {}, {}
      for _, place in ipairs(places(root, want)) do
        child.lua('vim.cmd.edit(...)', place.file)
        assert(child.wait_for(60000, H.ready_code), 'the server did not start')
        -- The line keeps its indentation; the cursor goes after it, in insert mode.
        child.lua([[
          local line, indent = ...
          vim.api.nvim_buf_set_lines(0, line - 1, line, false, { indent })
          vim.api.nvim_win_set_cursor(0, { line, #indent })
        ]], place.line, place.indent)
        child.input('A')
        -- The file's prompt read cold: the first suggestion, reported apart.
        local t0 = vim.uv.hrtime()
        local seq = child.lua('return require("crossfile").complete()')
        local done = child.wait_for(180000, [[
          local last = require('crossfile.inline').last
          return last and last.seq == ... and last.reason ~= 'newer request'
        ]], seq)
        first[#first + 1] = done and round((vim.uv.hrtime() - t0) / 1e6) or vim.NIL
        for _, ks in ipairs(keystrokes(place.text)) do
          keys[#keys + 1] = ks
          child.lua(send_key, #keys, ks.key)
          vim.wait(ks.pause and PAUSE_MS or KEY_MS)
        end
        child.input('<Esc>')
        child.lua('vim.cmd("silent! edit!")')
      end
      local latency, empty = unpack(child.lua([[
        local state, out, empty = package.loaded.crossfile_latency, {}, {}
        for k = 1, ... do
          out[k] = state.latency[k] or vim.NIL
          empty[k] = state.empty[k] == true
        end
        return { out, empty }
      ]], #keys))
      local reasons = child.lua('return package.loaded.crossfile_latency.reasons')
      local all, pauses, all_empty, pauses_empty = {}, {}, {}, {}
      for k, ks in ipairs(keys) do
        local l = latency[k]
        all[#all + 1], all_empty[#all_empty + 1] = l, empty[k]
        if ks.pause then pauses[#pauses + 1], pauses_empty[#pauses_empty + 1] = l, empty[k] end
      end
      local result = {
        model = model,
        keystrokes = #keys,
        keystroke_ms = KEY_MS,
        pause_ms = PAUSE_MS,
        places = #first,
        first_suggestion_ms = first,
        answers = reasons,
        pauses = summary(pauses, pauses_empty),
        all_keystrokes = summary(all, all_empty),
        latencies_ms = all,
        date = os.date('!%Y-%m-%dT%H:%M:%SZ'),
      }
      local out = env('CROSSFILE_LATENCY_OUT')
      if out then vim.fn.writefile({ vim.json.encode(result) }, out) end
      local function ms(v) return v == vim.NIL and 'no answer' or (v .. ' ms') end
      io.stdout:write(('latency: %s, %d keystrokes, %d pauses: %d answered (%d with nothing to show), p50 %s, p95 %s, within 300 ms %.1f%%, within 1 s %.1f%%\n')
        :format(model, #keys, #pauses, result.pauses.answered, result.pauses.empty_answers, ms(result.pauses.p50_ms), ms(result.pauses.p95_ms),
          100 * result.pauses.within_300ms, 100 * result.pauses.within_1000ms))
      assert.is_true(#keys >= 100, #keys .. ' keystrokes')
      assert.is_true(result.all_keystrokes.answered > result.all_keystrokes.empty_answers, 'no keystroke got ghost text')
      for _, l in ipairs(all) do
        if l ~= vim.NIL then assert.is_true(l > 0 and l < 60000, tostring(l)) end
      end
    end)
    child.stop()
    assert(ok, err)
  end)
end)
