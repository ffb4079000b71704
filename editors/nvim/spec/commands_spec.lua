-- `:Crossfile {subcommand}` as users meet it: it exists before setup() (plugin/crossfile.lua),
-- completes its subcommands, sets itself up on first use; a long command leaves the editor free
-- (a pending view, then the answer); :Crossfile cancel and <C-c> send $/cancelRequest; the
-- <Plug> mappings; vim.secure.read asked once per file; replay with an EvoCodeBench setting.

local H = require('helpers')

local record_sent = H.record_sent

local function cancels_sent(child)
  return child.lua([[
    local ids = {}
    for _, m in ipairs(package.loaded.crossfile_sent) do
      if m.method == '$/cancelRequest' then ids[#ids + 1] = m.params.id end
    end
    return ids
  ]])
end

describe(':Crossfile before setup()', function()
  local child
  after_each(function()
    if child then child.stop() end
    child = nil
  end)

  it('exists as Neovim starts, loads nothing, and completes its subcommands #quick', function()
    child = H.nvim({ startup = true })
    local got = child.lua([[
      return { exists = vim.fn.exists(':Crossfile'), loaded = package.loaded['crossfile'] ~= nil,
               plug = vim.fn.maparg('<Plug>(crossfile-accept)', 'i', false, true).lhs ~= nil,
               all = vim.fn.getcompletion('Crossfile ', 'cmdline'),
               re = vim.fn.getcompletion('Crossfile re', 'cmdline'),
               setting = vim.fn.getcompletion('Crossfile replay a.jsonl repos 0 setting=local_', 'cmdline'),
               option = vim.fn.getcompletion('Crossfile replay a.jsonl repos 0 se', 'cmdline') }
    ]])
    assert.equal(2, got.exists)
    assert.is_false(got.loaded)
    assert.is_true(got.plug)
    assert.same({ 'arena', 'cancel', 'compare', 'context', 'health', 'next', 'prev', 'replay', 'score', 'trust' }, got.all)
    assert.same({ 'replay' }, got.re)
    assert.same({ 'setting=local_completion', 'setting=local_infilling' }, got.setting)
    assert.same({ 'setting=' }, got.option)
  end)

  it('sets itself up with the defaults on first use, and says so #quick', function()
    -- The defaults run `crossfile serve` from PATH; the server reads its settings from the user's
    -- crossfile.toml (here the specs' small model and a temporary cache).
    local toml = vim.fs.joinpath(H.tmp, 'lazy.toml')
    vim.fn.writefile(vim.split(H.toml(H.settings()), '\n', { plain = true }), toml)
    child = H.nvim({ startup = true, env = {
      PATH = vim.fs.dirname(H.bin) .. ':' .. os.getenv('PATH'), CROSSFILE_CONFIG = toml } })
    local root = H.tiny('lazy')
    child.lua([[
      local notes = {}
      package.loaded.crossfile_notes = notes
      vim.notify = function(msg, level) notes[#notes + 1] = { msg = msg, level = level } end
      vim.cmd.edit(...)
      vim.cmd('Crossfile context')
    ]], vim.fs.joinpath(root, 'app.py'))
    local view = child.wait_for(30000, [[
      local views = require('crossfile.views')
      if views.is_pending('context') then return nil end
      local buf = vim.fn.bufnr('crossfile://context')
      return buf > 0 and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or nil
    ]])
    assert.is_truthy(view, 'no context view within 30 s: ' .. vim.inspect(child.lua('return package.loaded.crossfile_notes')))
    assert.equal('Crossfile context: no completion in this buffer yet', view[1])
    local notes = child.lua('return package.loaded.crossfile_notes')
    assert.matches('setup() had not run', notes[1].msg, 1, true)
    assert.is_true(child.lua('return require("crossfile").is_set_up()'))
  end)
end)

describe('waiting for the server', function()
  local child
  setup(function()
    child = H.nvim()
    H.setup(child, H.settings())
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(H.tiny('waiting'), 'app.py'))
    assert.is_truthy(child.wait_for(30000, H.ready_code), 'the server did not start')
    child.lua(record_sent)
  end)
  teardown(function() child.stop() end)

  local compare_view = [[
    local buf = vim.fn.bufnr('crossfile://compare')
    return buf > 0 and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') or ''
  ]]

  it('leaves the editor free while :Crossfile compare runs: pending, then the answer', function()
    local started = child.lua([[
      vim.api.nvim_win_set_cursor(0, { 4, 0 })
      local ticks = { n = 0 }
      package.loaded.crossfile_ticks = ticks
      local timer = vim.uv.new_timer()
      timer:start(20, 20, function() ticks.n = ticks.n + 1 end)
      ticks.timer = timer
      local t0 = vim.uv.hrtime()
      vim.cmd('Crossfile compare none bm25 bm25-cceval-rg1 jaccard')
      local views = require('crossfile.views')
      local buf = vim.fn.bufnr('crossfile://compare')
      return { returned_ms = (vim.uv.hrtime() - t0) / 1e6, pending = views.is_pending('compare'),
               lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false), jobs = #require('crossfile.jobs').list(),
               ticks = ticks.n, status = require('crossfile').status(),
               job = require('crossfile.jobs').list()[1] and require('crossfile.jobs').list()[1].serial }
    ]])
    assert.is_true(started.pending, 'the compare view is not pending')
    assert.is_true(started.returned_ms < 1000, ('the command took %d ms to return'):format(started.returned_ms))
    assert.equal('Crossfile compare: none bm25 bm25-cceval-rg1 jaccard', started.lines[1])
    assert.matches('waiting for the server… %d+ s   %(<C%-c> or :Crossfile cancel cancels%)', started.lines[2])
    assert.equal(1, started.jobs)
    assert.matches('comparing none, bm25, bm25%-cceval%-rg1, jaccard… %d+ s', started.status)
    -- Typed keys are handled and timers fire while the server works.
    child.input(':let g:typed_while_waiting = 42<CR>')
    local during = child.lua([[
      return { typed = vim.g.typed_while_waiting, pending = require('crossfile.views').is_pending('compare'),
               ticks = package.loaded.crossfile_ticks.n }
    ]])
    assert.equal(42, during.typed)
    assert.is_true(during.pending, 'the compare ended before the editor was shown to be free')
    local done = child.wait_for(300000, [[
      return not require('crossfile.views').is_pending('compare') and package.loaded.crossfile_ticks.n
    ]])
    assert.is_truthy(done, 'no compare answer within 300 s')
    -- The timer kept firing while the server worked (20 ms apart).
    assert.is_true(done > started.ticks + 5, ('%d ticks before, %d after'):format(started.ticks, done))
    child.lua('package.loaded.crossfile_ticks.timer:close()')
    local view = child.lua(compare_view)
    for _, spec in ipairs({ 'none', 'bm25', 'bm25-cceval-rg1', 'jaccard' }) do
      assert.matches('## ' .. vim.pesc(spec) .. '\n', view)
    end
    assert.is_nil(view:find('waiting for the server', 1, true))
  end)

  -- Starts a compare over many retrievers at a line never completed before (the server answers
  -- a prompt it has seen from its cache at once) and returns its request id once it is sent:
  -- the cancel follows within milliseconds, long before eight completions are done.
  local start_compare = [[
    local n = vim.api.nvim_buf_line_count(0)
    vim.api.nvim_buf_set_lines(0, n, n, false, { ('def scaled_%d(box, factor):'):format(vim.uv.hrtime()), '    return ' })
    vim.api.nvim_win_set_cursor(0, { n + 2, 10 })
    vim.cmd('Crossfile compare none bm25 bm25-cceval-rg1 jaccard none bm25 bm25-cceval-rg1 jaccard')
    local job = require('crossfile.jobs').list()[1]
    vim.wait(5000, function() return job.handle.id ~= nil or job.done end, 1)
    if job.done then return 'done already: ' .. tostring(job.err) .. ' ' .. vim.inspect(job.result):sub(1, 300) end
    return job.handle.id
  ]]

  it(':Crossfile cancel sends $/cancelRequest, and the pending state ends', function()
    child.lua([[vim.lsp.set_log_level('debug')]])
    local id = child.lua(start_compare)
    assert.is_number(id, 'the compare request was not sent: ' .. tostring(id))
    child.lua([[
      local notes = package.loaded.crossfile_notes
      for i = #notes, 1, -1 do notes[i] = nil end
      vim.cmd('Crossfile cancel')
    ]])
    assert.is_true(vim.tbl_contains(cancels_sent(child), id), 'no $/cancelRequest for request ' .. id .. ': '
      .. vim.inspect(child.lua('return package.loaded.crossfile_notes')))
    local after = child.lua([[
      local views = require('crossfile.views')
      return { pending = views.is_pending('compare'), jobs = #require('crossfile.jobs').list(),
               notes = vim.tbl_map(function(n) return n.msg end, package.loaded.crossfile_notes) }
    ]])
    assert.is_false(after.pending)
    assert.equal(0, after.jobs)
    assert.matches('cancelled', child.lua(compare_view), 1, true)
    assert.matches('cancelled 1 command', table.concat(after.notes, '\n'), 1, true)
    -- The server acknowledged it (RequestCancelled, -32800, which Neovim logs and does not pass on).
    local log = child.lua('return vim.lsp.get_log_path()')
    local acked = child.wait_for(10000, [[
      for _, line in ipairs(vim.fn.readfile(select(1, ...))) do
        if line:find('Received cancellation ack', 1, true) and line:find('id = ' .. select(2, ...) .. ',', 1, true) then
          return true
        end
      end
    ]], log, id)
    assert.is_truthy(acked, 'the server did not acknowledge the cancel of request ' .. id .. ':\n'
      .. child.lua([[
        local out = {}
        for _, line in ipairs(vim.fn.readfile(select(1, ...))) do
          if line:find('id = ' .. select(2, ...) .. '[,}% ]') or line:find('cancel', 1, true) then out[#out + 1] = line:sub(1, 400) end
        end
        return table.concat(out, '\n')
      ]], log, id))
    child.lua('vim.lsp.set_log_level("warn")')
    -- The server is free again: a completion is answered.
    local seq = child.lua('return require("crossfile").complete()')
    assert.is_truthy(child.wait_for(120000, [[
      return require('crossfile.inline').last and require('crossfile.inline').last.seq == ...
    ]], seq), 'no completion after the cancel')
    child.lua('require("crossfile").dismiss()')
  end)

  it('<C-c> in the pending view cancels it', function()
    local id = child.lua(start_compare)
    assert.is_number(id, 'the compare request was not sent: ' .. tostring(id))
    child.input('<C-w>j')
    assert.equal('crossfile://compare', child.lua('return vim.api.nvim_buf_get_name(0)'))
    child.input('<C-c>')
    assert.is_true(vim.tbl_contains(cancels_sent(child), id), 'no $/cancelRequest for request ' .. id)
    assert.is_false(child.lua('return require("crossfile.views").is_pending("compare")'))
    assert.matches('cancelled', child.lua(compare_view), 1, true)
    child.lua('vim.cmd("wincmd p")')
  end)
end)

describe('<Plug> mappings', function()
  local child, core
  setup(function()
    core = vim.fs.joinpath(H.click(), 'src', 'click', 'core.py')
    child = H.nvim()
    H.setup(child, H.settings(), { keymaps = false, auto_trigger = false })
    child.lua('vim.cmd.edit(...)', core)
    assert.is_truthy(child.wait_for(30000, H.ready_code), 'the server did not start')
  end)
  teardown(function() child.stop() end)

  -- Shows `text` as the suggestion at the end of line 1275, in insert mode.
  local function suggest(text)
    child.lua('vim.api.nvim_win_set_cursor(0, { 1275, 0 })')
    child.input('A')
    assert.equal('i', child.lua('return vim.api.nvim_get_mode().mode'))
    child.lua([[
      local row, col = 1274, #vim.api.nvim_get_current_line()
      require('crossfile.ghost').show(vim.api.nvim_get_current_buf(), row, col, ...)
    ]], text)
  end

  it('keymaps = false maps none of the keys in an attached buffer #quick', function()
    -- Nothing of ours in the buffer; <Tab> is Neovim's own (its snippet jump) or nothing.
    local maps = child.lua([[
      local ours = {}
      for _, mode in ipairs({ 'i', 'n' }) do
        for _, m in ipairs(vim.api.nvim_buf_get_keymap(0, mode)) do ours[#ours + 1] = m.lhs end
      end
      return { ours = ours, tab = vim.fn.maparg('<Tab>', 'i', false, true).desc or '' }
    ]])
    assert.same({}, maps.ours)
    assert.is_nil(maps.tab:find('crossfile', 1, true), maps.tab)
    child.input('O<Tab>x<Esc>')
    assert.equal('\tx', child.lua('return vim.api.nvim_get_current_line()'))
    child.lua('vim.cmd.undo()')
  end)

  it('accept, accept-line and dismiss work from keys the user maps #quick', function()
    child.lua([[
      vim.keymap.set('i', '<C-l>', '<Plug>(crossfile-accept)')
      vim.keymap.set('i', '<C-j>', '<Plug>(crossfile-accept-line)')
      vim.keymap.set('i', '<C-x>', '<Plug>(crossfile-dismiss)')
    ]])
    suggest('echo_via_pager\nnext_line')
    child.input('<C-j>')
    assert.equal(H.core_line .. 'echo_via_pager', child.lua('return vim.api.nvim_buf_get_lines(0, 1274, 1275, false)[1]'))
    assert.equal('\nnext_line', child.lua('return require("crossfile").suggestion(0)'))
    child.input('<C-x>')
    assert.equal(vim.NIL, child.lua('return require("crossfile").suggestion(0) or vim.NIL'))
    child.input('<Esc>')
    child.lua('vim.cmd.undo()')
    assert.equal(H.core_line, child.lua('return vim.api.nvim_buf_get_lines(0, 1274, 1275, false)[1]'))
    suggest('write_usage()')
    child.input('<C-l><Esc>')
    assert.equal(H.core_line .. 'write_usage()', child.lua('return vim.api.nvim_buf_get_lines(0, 1274, 1275, false)[1]'))
    child.lua('vim.cmd.undo()')
  end)

  it('trigger asks the server', function()
    child.lua([[
      vim.keymap.set('i', '<C-t>', '<Plug>(crossfile-trigger)')
      local events = {}
      package.loaded.crossfile_events = events
      vim.api.nvim_create_autocmd('User', { pattern = 'CrossfileSuggestion', callback = function(ev) events[#events + 1] = ev.data end })
      vim.api.nvim_win_set_cursor(0, { 1275, 0 })
    ]])
    child.input('A<C-t>')
    assert.is_true(child.lua('return require("crossfile.inline").busy(vim.api.nvim_get_current_buf())'),
      'no request in flight: ' .. vim.inspect(child.lua('return { package.loaded.crossfile_notes, package.loaded.crossfile_events, vim.api.nvim_get_mode() }')))
    local answered = child.wait_for(120000, 'return package.loaded.crossfile_events[1]')
    assert.is_truthy(answered, 'no answer within 120 s')
    assert.is_true(answered.completed, answered.reason)
    child.input('<Esc>')
  end)

  it('the default keymaps come back with setup() #quick', function()
    child.lua('require("crossfile").setup({ cmd = { ..., "serve" }, settings = select(2, ...) })', H.bin, H.settings())
    assert.equal('crossfile: arena_1, accept', child.lua('return vim.fn.maparg("<Tab>", "i", false, true).desc'))
    assert.equal('crossfile: arena_2, accept_line', child.lua('return vim.fn.maparg("<S-Tab>", "i", false, true).desc'))
  end)
end)

describe('vim.secure.read', function()
  it('is asked once per file per session, again when the file changes or on :Crossfile trust #quick', function()
    local root = H.tiny('secure', {
      ['crossfile.toml'] = { '[retrieve]', 'retriever = "jaccard"' },
      ['.crossfile.json'] = { '{ "prompt": { "max_new_tokens": 8 } }' },
    })
    local child = H.nvim()
    local ok, err = pcall(function()
      child.lua([[
        local asked = {}
        package.loaded.crossfile_asked = asked
        -- The user answers "ignore" (nothing remembered): Neovim would ask at every read.
        vim.secure.read = function(path) asked[vim.fs.basename(path)] = (asked[vim.fs.basename(path)] or 0) + 1 end
      ]])
      H.setup(child, H.settings())
      child.lua('vim.cmd.edit(...)', vim.fs.joinpath(root, 'app.py'))
      assert.is_truthy(child.wait_for(30000, H.ready_code), 'the server did not start')
      child.lua('require("crossfile").set_settings(...)', H.settings())
      child.lua('require("crossfile").set_settings(...)', H.settings())
      assert.same({ ['crossfile.toml'] = 1, ['.crossfile.json'] = 1 }, child.lua('return package.loaded.crossfile_asked'))
      vim.fn.writefile({ '{ "prompt": { "max_new_tokens": 12 } }' }, vim.fs.joinpath(root, '.crossfile.json'))
      child.lua('require("crossfile").set_settings(...)', H.settings())
      assert.same({ ['crossfile.toml'] = 1, ['.crossfile.json'] = 2 }, child.lua('return package.loaded.crossfile_asked'))
      child.lua('vim.cmd("Crossfile trust")')
      assert.same({ ['crossfile.toml'] = 2, ['.crossfile.json'] = 3 }, child.lua('return package.loaded.crossfile_asked'))
    end)
    child.stop()
    assert(ok, err)
  end)
end)

describe(':Crossfile replay of an EvoCodeBench case', function()
  local child
  setup(function()
    child = H.nvim()
    H.setup(child, H.settings(), { replay = { evocodebench_setting = 'local_infilling' } })
  end)
  teardown(function() child.stop() end)

  local function replay(args)
    child.lua([[
      require('crossfile.replay').current = nil
      vim.cmd('Crossfile replay ' .. ...)
    ]], args)
    local case = child.wait_for(120000, [[
      local cur = require('crossfile.replay').current
      return cur and cur.case
    ]])
    assert.is_truthy(case, 'no case replayed within 120 s: ' .. args)
    child.lua('require("crossfile").dismiss()')
    return case
  end

  it('takes the setting given, else setup()\'s', function()
    local cases = vim.fs.joinpath(H.shared, 'bench', 'evocodebench', 'dev.jsonl')
    local common = table.concat({ vim.fn.fnameescape(cases), vim.fn.fnameescape(H.bench_repos), '0',
      'envs=' .. vim.fn.fnameescape(H.envs), 'max_new_tokens=16' }, ' ')
    local given = replay(common .. ' setting=baseline')
    assert.equal('evocodebench', given.benchmark)
    assert.equal('baseline', given.setting)
    local default = replay(common)
    assert.equal('local_infilling', default.setting)
    -- A wrong option is refused with the list.
    child.lua('vim.cmd("Crossfile replay x y 0 settings=baseline")')
    local notes = child.lua('return package.loaded.crossfile_notes')
    assert.matches('unknown option settings=', notes[#notes].msg, 1, true)
  end)
end)

describe('the compare view', function()
  it("shows each chunk's origin beside it and the overlap in the column header #quick", function()
    local text = table.concat(require('crossfile.views').compare_text({
      uri = 'file:///w/a.py', position = { line = 4, character = 2 }, caseId = 'c1', reference = 'abc',
      results = {
        { retriever = 'bm25', upperBound = false, overlap = 2 / 3, suggestion = 'abc', latencyMs = 10,
          chunks = {
            { path = 'pkg/near.py', uri = 'file:///w/pkg/near.py', startLine = 3, endLine = 12, score = 2.5, origin = 'same_dir' },
            { path = 'lib/x.py', score = 1, origin = 'imported' },
          } },
        { retriever = 'none', upperBound = false, chunks = {}, suggestion = 'x', latencyMs = 3 },
      },
    }).lines, '\n')
    assert.matches('## bm25  · overlap 0.67\n', text, 1, true)
    assert.matches('    pkg/near.py:3-12 · same_dir  2.50\n', text, 1, true)
    assert.matches('    lib/x.py · imported  1\n', text, 1, true)
    -- No overlap without chunks; a chunk without an origin (crossfile.context's) shows none.
    assert.matches('## none\n', text, 1, true)
  end)
end)
