-- Ghost text typed for in a real file (a copy of the click workspace), accepted with <Tab>; stale
-- answers dropped; the context view; :checkhealth with a running server.

local H = require('helpers')

-- Records every CrossfileSuggestion event in the child, in package.loaded.crossfile_events.
local record_events = [[
  local events = {}
  package.loaded.crossfile_events = events
  vim.api.nvim_create_autocmd('User', {
    pattern = 'CrossfileSuggestion',
    callback = function(ev) events[#events + 1] = ev.data end,
  })
]]

local ghost_state = [[
  local buf = vim.api.nvim_get_current_buf()
  local text = require('crossfile').suggestion(buf)
  if not text then return nil end
  local marks = vim.api.nvim_buf_get_extmarks(buf, require('crossfile.ghost').ns, 0, -1, { details = true })
  return { text = text, marks = marks, mode = vim.api.nvim_get_mode().mode }
]]

describe('ghost text', function()
  local child, root, core
  setup(function()
    root = H.click()
    core = vim.fs.joinpath(root, 'src', 'click', 'core.py')
    child = H.nvim()
    child.lua(record_events)
    H.setup(child, H.settings())
    child.lua('vim.cmd.edit(...)', core)
    assert.is_truthy(child.wait_for(30000, [[
      local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
      return c and c.initialized
    ]]), 'the server did not start')
  end)
  teardown(function() child.stop() end)

  it('appears as you type in insert mode and <Tab> accepts it', function()
    child.lua('vim.api.nvim_win_set_cursor(0, { 1275, 0 })')
    assert.equal(H.core_line, child.lua('return vim.api.nvim_get_current_line()'))
    child.input('Aw')
    assert.equal('i', child.lua('return vim.api.nvim_get_mode().mode'))
    local shown = child.wait_for(120000, ghost_state)
    assert.is_truthy(shown, 'no ghost text within 120 s')
    assert.equal('i', shown.mode)
    -- Rendered at the cursor: the first line inline, the rest as virtual lines.
    assert.equal(1, #shown.marks)
    local mark = shown.marks[1]
    assert.same({ 1274, #H.core_line + 1 }, { mark[2], mark[3] })
    local lines = vim.split(shown.text, '\n', { plain = true })
    if lines[1] ~= '' then
      assert.equal('inline', mark[4].virt_text_pos)
      assert.equal(lines[1], mark[4].virt_text[1][1])
    end
    assert.equal(#lines - 1, mark[4].virt_lines and #mark[4].virt_lines or 0)
    -- The statusline names the model that answered, as the server names it.
    local status = child.wait_for(10000, [[
      local s = require('crossfile').status()
      return s:lower():find('smollm2', 1, true) and s or nil
    ]])
    assert.is_truthy(status, 'the statusline does not name the model')
    assert.is_truthy(status:find('^crossfile · '), status)

    child.input('<Tab>')
    local after = child.lua([[
      return { lines = vim.api.nvim_buf_get_lines(0, 1274, 1274 + select(1, ...), false),
               suggestion = require('crossfile').suggestion(0) or vim.NIL,
               marks = #vim.api.nvim_buf_get_extmarks(0, require('crossfile.ghost').ns, 0, -1, {}),
               cursor = vim.api.nvim_win_get_cursor(0), mode = vim.api.nvim_get_mode().mode }
    ]], #lines)
    lines[1] = H.core_line .. 'w' .. lines[1]
    assert.same(lines, after.lines)
    assert.equal(vim.NIL, after.suggestion)
    assert.equal(0, after.marks)
    assert.equal('i', after.mode)
    assert.same({ 1274 + #lines, #lines[#lines] }, after.cursor)
    child.input('<Esc>')
  end)

  it('<Tab> with no suggestion inserts a tab', function()
    child.lua('vim.api.nvim_win_set_cursor(0, { 1, 0 })')
    child.lua('require("crossfile").setup({ cmd = { ..., "serve" }, settings = select(2, ...), auto_trigger = false })',
      H.bin, H.settings())
    child.input('O<Tab>x<Esc>')
    assert.equal('\tx', child.lua('return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]'))
    child.lua('vim.cmd.undo()')
    child.lua('require("crossfile").setup({ cmd = { ..., "serve" }, settings = select(2, ...) })', H.bin, H.settings())
  end)

  it('drops an answer for an older buffer version', function()
    local seq = child.lua([[
      vim.api.nvim_win_set_cursor(0, { 1275, 0 })
      local seq = require('crossfile').complete()
      -- The buffer changes before the answer comes (in normal mode: no new request).
      vim.api.nvim_buf_set_lines(0, 0, 0, false, { '# changed' })
      return seq
    ]])
    local event = child.wait_for(120000, [[
      for _, e in ipairs(package.loaded.crossfile_events) do if e.seq == ... then return e end end
    ]], seq)
    assert.is_truthy(event, 'no answer within 120 s')
    assert.is_false(event.shown)
    assert.equal('stale buffer', event.reason)
    assert.equal(vim.NIL, child.lua('return require("crossfile").suggestion(0) or vim.NIL'))
    assert.equal(0, child.lua('return #vim.api.nvim_buf_get_extmarks(0, require("crossfile.ghost").ns, 0, -1, {})'))
    child.lua('vim.api.nvim_buf_set_lines(0, 0, 1, false, {})')
  end)

  it('drops the answer to a request a newer one replaced', function()
    local seqs = child.lua([[
      vim.api.nvim_win_set_cursor(0, { 1275, 0 })
      local first = require('crossfile').complete()
      local second = require('crossfile').complete()
      return { first, second }
    ]])
    local events = child.wait_for(120000, [[
      local first, second
      for _, e in ipairs(package.loaded.crossfile_events) do
        if e.seq == select(1, ...) then first = e elseif e.seq == select(2, ...) then second = e end
      end
      return first and second and { first, second }
    ]], seqs[1], seqs[2])
    assert.is_truthy(events, 'no answers within 120 s')
    assert.is_false(events[1].shown)
    assert.equal('newer request', events[1].reason)
    -- The newer one is answered and shown (when the model suggests anything there).
    assert.is_true(events[2].completed, events[2].reason)
    assert.equal(events[2].text or vim.NIL, child.lua('return require("crossfile").suggestion(0) or vim.NIL'))
    child.lua('require("crossfile").dismiss()')
  end)

  it('shows what the last completion was made from, prompt included', function()
    local answer = child.lua('return require("crossfile").context_sync()')
    assert.is_string(answer.prompt)
    assert.truthy(#answer.prompt > 0)
    assert.is_string(answer.retriever)
    assert.is_table(answer.chunks)
    child.lua([[
      vim.cmd('Crossfile context')
      vim.wait(30000, function() return not require('crossfile.views').is_pending('context') end, 20)
    ]])
    local view = child.lua([[
      local buf = vim.fn.bufnr('crossfile://context')
      return { lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false), win = vim.fn.bufwinid(buf) }
    ]])
    assert.is_not.equal(-1, view.win)
    local text = table.concat(view.lines, '\n')
    assert.matches('## prompt', text, 1, true)
    assert.matches('## chunks', text, 1, true)
    -- The prompt's own lines are in the view, verbatim.
    local last = vim.split(answer.prompt, '\n', { plain = true })
    assert.equal(last[#last], view.lines[#view.lines])
    -- It follows the next completion.
    child.lua([[
      vim.api.nvim_win_set_cursor(0, { 10, 0 })
      require('crossfile').complete()
    ]])
    local moved = child.wait_for(120000, [[
      local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr('crossfile://context'), 0, 1, false)
      return lines[1]:find(':10:', 1, true) ~= nil
    ]])
    assert.is_truthy(moved, 'the context view did not follow the completion at line 10')
  end)

  it(':checkhealth crossfile reports the running server, its version and the model', function()
    local text = child.lua([[
      vim.cmd('checkhealth crossfile')
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
      vim.cmd('tabclose')
      return text
    ]])
    assert.matches('OK server binary: ' .. vim.pesc(H.bin) .. ' %(crossfile %d[^\n]*%), the plugin\'s release', text)
    assert.matches('OK server %d+ running for ' .. vim.pesc(root), text)
    assert.matches('OK model.path: ' .. vim.pesc(H.model), text)
    assert.matches('OK server %d+ accepted the settings', text)
    assert.is_nil(text:find('ERROR', 1, true))
  end)
end)
