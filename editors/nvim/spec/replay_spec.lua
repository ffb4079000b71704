-- Replaying benchmark cases through the Lua API: ghost text, accept and score agree with
-- `crossfile bench run` on the same DEV cases; compare and the views; the user commands.

local H = require('helpers')

-- `crossfile bench run` on `cases` with the specs' settings; returns its records by case id.
local function bench_run(cases, settings)
  local config = vim.fs.joinpath(H.tmp, 'replay-cli.toml')
  vim.fn.writefile(vim.split(H.toml(settings), '\n', { plain = true }), config)
  local out = vim.fs.joinpath(H.tmp, 'replay-run.jsonl')
  vim.fn.delete(out)
  local r = vim.system({ H.bin, 'bench', 'run', '--format', 'cceval', '--cases', cases, '--repos', H.bench_repos,
    '--retriever', 'bm25-cceval-rg1', '--out', out }, { env = { CROSSFILE_CONFIG = config } }):wait()
  assert(r.code == 0, 'bench run failed: ' .. (r.stderr or ''))
  local records = {}
  for _, line in ipairs(vim.fn.readfile(out)) do
    local rec = vim.json.decode(line)
    records[rec.case_id] = rec
  end
  return records
end

-- A parent commit's tree under `dir`/repos and two cases mined from history in files its commit
-- adds (absent from the tree); returns the repos folder and the cases file.
local function history_fixture(dir)
  local repos = vim.fs.joinpath(dir, 'repos')
  local repo = vim.fs.joinpath(repos, 'ledger-0123456')
  vim.fn.mkdir(vim.fs.joinpath(repo, 'pkg'), 'p')
  vim.fn.writefile({ 'class Ledger:', '    def add(self, amount):', '        self.items.append(amount)' },
    vim.fs.joinpath(repo, 'pkg', 'util.py'))
  local added = {
    { path = 'pkg/report/summary.py', line = 3, category = 'inproject', identifiers = { 'Ledger' },
      lines = { 'from pkg.util import Ledger', '', 'def summarize(amounts):', '    ledger = Ledger()', '    return ledger' } },
    { path = 'pkg/cli.py', line = 3, category = 'committed', identifiers = { 'summarize' },
      lines = { 'from pkg.report.summary import summarize', '', 'def main():', '    summarize([])' } },
  }
  local records = {}
  for _, a in ipairs(added) do
    local target = a.lines[a.line + 1]
    local indent = target:match('^%s*')
    local rest = vim.list_slice(a.lines, a.line + 2)
    records[#records + 1] = vim.json.encode({
      prompt = table.concat(vim.list_slice(a.lines, 1, a.line), '\n') .. '\n' .. indent,
      groundtruth = target:sub(#indent + 1),
      right_context = '\n' .. (#rest > 0 and (table.concat(rest, '\n') .. '\n') or ''),
      metadata = { task_id = 'ledger/' .. a.path, repository = 'ledger-0123456', path = a.path, line = a.line,
        commit = ('0123456789abcdef'):rep(3):sub(1, 40), parent = ('89abcdef'):rep(5),
        category = a.category, identifiers = a.identifiers },
    })
  end
  local cases = vim.fs.joinpath(dir, 'history.jsonl')
  vim.fn.writefile(records, cases)
  return repos, cases
end

-- Every file and folder under `root`, as "path type", sorted.
local function tree(root)
  local out = {}
  for name, kind in vim.fs.dir(root, { depth = 20 }) do out[#out + 1] = name .. ' ' .. kind end
  table.sort(out)
  return out
end

describe('replay', function()
  local child, cases, ids, settings
  setup(function()
    cases, ids = H.dev_cases(5)
    settings = H.settings({ retrieve = { retriever = 'bm25-cceval-rg1' } })
    child = H.nvim()
    H.setup(child, settings)
  end)
  teardown(function() child.stop() end)

  it('shows, accepts and scores 5 DEV cases exactly as bench run does', function()
    local cli = bench_run(cases, settings)
    for _, id in ipairs(ids) do
      local run = cli[id]
      assert.is_table(run, 'bench run has no record for ' .. id)
      local got = child.lua([[
        local cf = require('crossfile')
        local case = cf.replay_sync({ cases = select(1, ...), repos = select(2, ...), case = select(3, ...) })
        local buf = vim.api.nvim_get_current_buf()
        vim.wait(120000, function() return cf.suggestion(buf) ~= nil end, 50)
        local ghost = cf.suggestion(buf)
        if not ghost then return { case = case, ghost = vim.NIL } end
        local row = vim.api.nvim_win_get_cursor(0)[1]
        local line_before = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
        cf.accept()
        local line_after = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
        return { case = case, ghost = ghost, before = line_before, after = line_after, score = cf.score_sync(),
                 status = cf.status() }
      ]], cases, H.bench_repos, id)
      assert.equal(id, got.case.id)
      assert.is_not.equal(vim.NIL, got.ghost, id .. ': no ghost text within 120 s')
      assert.equal(run.suggestion, got.ghost, id .. ': ghost text differs from bench run')
      -- Accepting put the suggestion's first line into the buffer at the cursor.
      local first = vim.split(got.ghost, '\n', { plain = true })[1]
      assert.equal(got.before:len() + first:len(), got.after:len(), id)
      assert.equal('raw', got.score.scored, id)
      assert.equal(run.raw_suggestion, got.score.prediction, id)
      assert.near(run.metrics.es, got.score.metrics.es, 1e-9, id)
      assert.equal(run.metrics.em, got.score.metrics.em, id)
      assert.matches('case %d+/5 · ES ' .. vim.pesc(('%.1f'):format(run.metrics.es)), got.status)
    end
  end)

  it('scores what the user typed instead, and refuses an edited prefix', function()
    local answer = child.lua([[
      local cf = require('crossfile')
      local case = cf.replay_sync({ cases = select(1, ...), repos = select(2, ...), case = 0 })
      local buf = vim.api.nvim_get_current_buf()
      vim.wait(120000, function() return cf.suggestion(buf) ~= nil end, 50)
      -- Typed at the case's cursor (normal mode keeps the window's cursor on the last character).
      local row, col = require('crossfile.position').to_buffer(buf, require('crossfile.replay').current.position)
      vim.api.nvim_buf_set_text(buf, row, col, row, col, { 'typed_by_hand()' })
      local typed = cf.score_sync()
      vim.api.nvim_buf_set_text(buf, 0, 0, 0, 0, { '# edited above' })
      local ok, err = pcall(cf.score_sync)
      return { typed = typed, refused = not ok, err = tostring(err), case = case }
    ]], cases, H.bench_repos)
    assert.equal('given', answer.typed.scored)
    assert.equal('typed_by_hand()', answer.typed.prediction)
    assert.is_true(answer.refused)
    assert.matches('changed', answer.err, 1, true)
  end)

  it('steps to the next and previous case', function()
    local got = child.lua([[
      local cf = require('crossfile')
      cf.replay_sync({ cases = select(1, ...), repos = select(2, ...), case = 1 })
      local nxt = cf.next_sync()
      -- Without a callback a call waits, as scripts written before the API was asynchronous expect.
      local prev = cf.prev()
      return { nxt = nxt.index, prev = prev.index, name = vim.api.nvim_buf_get_name(0) }
    ]], cases, H.bench_repos)
    assert.equal(2, got.nxt)
    assert.equal(1, got.prev)
    assert.is_truthy(got.name ~= '')
  end)

  it('compares every retriever asked for, with the reference diffed', function()
    local specs = { 'none', 'bm25', 'bm25-cceval-rg1', 'oracle' }
    local got = child.lua([[
      local cf = require('crossfile')
      cf.replay_sync({ cases = select(1, ...), repos = select(2, ...), case = 0 })
      cf.dismiss()
      local answer = cf.compare_sync(select(3, ...))
      vim.cmd('Crossfile compare ' .. table.concat(select(3, ...), ' '))
      vim.wait(300000, function() return not require('crossfile.views').is_pending('compare') end, 50)
      local buf = vim.fn.bufnr('crossfile://compare')
      return { answer = answer, view = vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
    ]], cases, H.bench_repos, specs)
    local results = got.answer.results
    assert.equal(#specs, #results)
    for i, spec in ipairs(specs) do
      assert.equal(spec, results[i].retriever)
      assert.is_table(results[i].diff)
    end
    assert.is_string(got.answer.reference)
    local view = table.concat(got.view, '\n')
    for _, spec in ipairs(specs) do
      assert.matches('## ' .. vim.pesc(spec), view)
    end
  end)

  it('a case mined from history says its category; its file, absent from the tree, comes and goes', function()
    local repos, history = history_fixture(vim.fs.joinpath(H.tmp, 'history'))
    local before = tree(repos)
    local got = child.lua([[
      local cf, replay = require('crossfile'), require('crossfile.replay')
      local cases, repos = ...
      replay.current = nil
      vim.cmd(('Crossfile replay %s %s 0'):format(vim.fn.fnameescape(cases), vim.fn.fnameescape(repos)))
      vim.wait(120000, function() return replay.current ~= nil end, 50)
      local first = { case = replay.current.case, status = cf.status(), file = vim.api.nvim_buf_get_name(0),
        lines = vim.api.nvim_buf_get_lines(0, 0, -1, false), cursor = vim.api.nvim_win_get_cursor(0) }
      local second = cf.next_sync()
      local said = {}
      for _, note in ipairs(package.loaded.crossfile_notes) do said[#said + 1] = note.msg end
      return { first = first, second = second, first_left = vim.uv.fs_stat(first.file) ~= nil,
        second_file = vim.api.nvim_buf_get_name(0), said = said }
    ]], history, repos)
    assert.equal('history', got.first.case.benchmark)
    assert.equal('inproject', got.first.case.category)
    assert.same({ 'Ledger' }, got.first.case.identifiers)
    assert.matches('· case 1/2 · inproject', got.first.status, 1, true)
    assert.same({ 'from pkg.util import Ledger', '', 'def summarize(amounts):', '    ', '    return ledger' },
      got.first.lines)
    assert.same({ 4, 3 }, got.first.cursor)
    local said = table.concat(got.said, '\n')
    assert.matches('replaying case 1/2 ledger/pkg/report/summary.py  pkg/report/summary.py:4  (inproject)', said, 1, true)
    assert.equal('committed', got.second.category)
    assert.is_false(got.first_left, 'the first case\'s file stays in the copy')
    assert.matches('pkg/cli.py$', got.second_file)
    assert.same(before, tree(repos), 'the tree changed')
  end)

  it(':Crossfile replay asks for what is missing and replays the chosen case', function()
    child.lua([[
      local asked = {}
      package.loaded.crossfile_asked = asked
      local cases, repos = ...
      vim.ui.input = function(opts, on_confirm)
        asked[#asked + 1] = opts.prompt
        on_confirm(opts.prompt:find('Cases') and cases or repos)
      end
      vim.ui.select = function(items, opts, on_choice)
        asked[#asked + 1] = opts.prompt .. ': ' .. opts.format_item(items[4])
        on_choice(items[4])
      end
      require('crossfile.replay').current = nil
      vim.cmd('Crossfile replay')
    ]], cases, H.bench_repos)
    local got = child.wait_for(120000, [[
      local cur = require('crossfile.replay').current
      return cur and { asked = package.loaded.crossfile_asked, case = cur.case }
    ]])
    assert.is_truthy(got, 'no case replayed within 120 s')
    assert.equal('Cases file: ', got.asked[1])
    assert.equal('Repositories folder: ', got.asked[2])
    assert.matches('^Case to replay: 3  ' .. vim.pesc(ids[4]), got.asked[3])
    assert.equal(ids[4], got.case.id)
  end)
end)
