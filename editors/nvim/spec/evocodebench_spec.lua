-- Replaying an EvoCodeBench case in Neovim (the real server, the embedded model, the DEV
-- repositories and their environments): the file opens with the body removed, the requirement
-- as the docstring and the cursor at the body; :Crossfile score runs the case's tests on what the
-- buffer holds and shows a failure's output in a split.

local H = require('helpers')

describe('evocodebench replay', function()
  local child
  setup(function()
    child = H.nvim()
    H.setup(child, H.settings())
  end)
  teardown(function() child.stop() end)

  it('opens a case at its body, and :Crossfile score tests the typed body (pending, then the failure)', function()
    local cases = vim.fs.joinpath(H.shared, 'bench', 'evocodebench', 'dev.jsonl')
    local record = vim.json.decode(vim.fn.readfile(cases)[1])
    local got = child.lua([[
      local cf = require('crossfile')
      local case = cf.replay_sync({ cases = select(1, ...), repos = select(2, ...), envs = select(3, ...), case = 0,
        format = 'evocodebench', max_new_tokens = 16 })
      local buf = vim.api.nvim_get_current_buf()
      local ghost = vim.wait(120000, function() return cf.suggestion(buf) ~= nil end, 50)
      local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
      local cursor = vim.api.nvim_win_get_cursor(0)
      local row, col = require('crossfile.position').to_buffer(buf, require('crossfile.replay').current.position)
      vim.api.nvim_buf_set_text(buf, row, col, row, col, { "raise RuntimeError('not the body')" })
      local progress = {}
      vim.api.nvim_create_autocmd('User', { pattern = 'CrossfileJob', callback = function(ev)
        if ev.data.state == 'progress' then progress[#progress + 1] = ev.data.progress end
      end })
      vim.cmd('Crossfile score')
      local views = require('crossfile.views')
      local view = vim.fn.bufnr('crossfile://tests')
      local waiting = view > 0 and vim.api.nvim_buf_get_lines(view, 0, -1, false) or {}
      local pending = views.is_pending('tests')
      vim.wait(300000, function() return not views.is_pending('tests') end, 50)
      local shown = view > 0 and vim.api.nvim_buf_get_lines(view, 0, -1, false) or {}
      local notes = {}
      for _, n in ipairs(package.loaded.crossfile_notes) do notes[#notes + 1] = n.msg end
      return { case = case, ghost = ghost, text = text, cursor = cursor, indent = col, shown = shown,
               waiting = waiting, pending = pending, progress = progress,
               visible = view > 0 and vim.fn.bufwinid(view) ~= -1, notes = notes }
    ]], cases, H.bench_repos, H.envs)
    assert.equal(record.namespace, got.case.id)
    assert.equal('evocodebench', got.case.benchmark)
    assert.is_true(got.ghost, 'no ghost text within 120 s')
    -- The requirement is the docstring; the cursor is after the body's indentation.
    local first = vim.split(record.requirement.Functionality, '\n', { plain = true })[1]
    assert.matches(vim.pesc(vim.trim(first)), got.text)
    assert.equal(record.indent, got.indent)
    -- While the tests ran, the split said so.
    assert.is_true(got.pending)
    assert.matches('waiting for the server', table.concat(got.waiting, '\n'), 1, true)
    -- The server's progress under the command's own token reached its job (and so its view).
    local said = table.concat(got.progress, '\n')
    assert.matches('test%(s%)', said)
    assert.matches('test 1 of %d+: ', said)
    -- The tests ran on the typed body: a failure, its test and its output in the tests split.
    local shown = table.concat(got.shown, '\n')
    assert.is_true(got.visible, 'no tests split')
    assert.matches('tests: fail', shown, 1, true)
    assert.matches(vim.pesc(record.tests[1]), shown)
    assert.matches('not the body', shown, 1, true)
    assert.matches('fail', got.notes[#got.notes], 1, true)
  end)
end)
