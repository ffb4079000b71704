-- What the user looks at and yanks reaches the server's ring of recent chunks
-- (`crossfile/recentLines`): the lines on screen when the buffer is entered and once scrolling
-- rests, the lines of a yank; and the `recent` retriever then finds them from another file.

local H = require('helpers')

-- 200 lines, one of which (151) uses the name the other file's cursor line calls.
local function long_module()
  local lines = {}
  for i = 0, 199 do
    lines[#lines + 1] = i == 150 and 'result = frobnicate_widget_tokens(tokens, widget)'
      or ('value_%d = %d'):format(i, i)
  end
  return lines
end

describe('recent lines', function()
  local child, root
  setup(function()
    root = H.tiny('recent', {
      ['long.py'] = long_module(),
      ['use.py'] = { 'from long import frobnicate_widget_tokens', '', 'result = frobnicate_widget_tokens(' },
    })
    child = H.nvim()
    H.setup(child, H.settings())
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(root, 'long.py'))
    assert.is_truthy(child.wait_for(60000, H.ready_code), 'no server attached')
    child.lua(H.record_sent)
  end)
  teardown(function() child.stop() end)

  -- The ranges (0-based first and last line) of the recentLines notifications sent so far.
  local sent_ranges = [[
    local out = {}
    for _, m in ipairs(package.loaded.crossfile_sent) do
      if m.method == 'crossfile/recentLines' then
        assert(m.params.textDocument.uri == vim.uri_from_bufnr(0))
        out[#out + 1] = { m.params.range.start.line, m.params.range['end'].line }
      end
    end
    return out
  ]]

  it('tells the lines on screen once scrolling rests, and the lines of a yank', function()
    child.input('140Gzt')
    local screen = child.lua([[return { vim.fn.line('w0') - 1, vim.fn.line('w$') - 1 }]])
    assert.equal(139, screen[1])
    local ranges = child.wait_for(5000, 'local r = (function() ' .. sent_ranges .. ' end)(); return #r > 0 and r')
    assert.is_truthy(ranges, 'no recentLines after scrolling')
    assert.same({ screen }, ranges, 'once, after the scroll rested')
    child.input('10G3yy')
    local after = child.wait_for(5000, 'local r = (function() ' .. sent_ranges .. ' end)(); return #r > 2 and r')
    assert.is_truthy(after, 'no recentLines for the yank and the scroll back')
    -- The yank at once (lines 10 to 12), then the screen after scrolling back to the top.
    assert.same({ 9, 11 }, after[2])
    assert.equal(0, after[3][1])
    -- A delete is an edit (didChange), not a yank: nothing more is told.
    child.input('dd')
    vim.wait(500)
    assert.equal(3, #child.lua(sent_ranges))
    child.input('u')
  end)

  it('gives the recent retriever the lines shown, from another file', function()
    child.input('140Gzt')
    vim.wait(1000) -- the child's scrolling rests
    local chunks = child.wait_for(60000, [[
      local file = ...
      vim.cmd.edit(file)
      local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
      if not c then return nil end
      local answer = require('crossfile.client').execute_sync(c, 'crossfile.compare', {
        uri = vim.uri_from_bufnr(0), position = { line = 2, character = 33 }, retrievers = { 'recent' },
      }, 0, 50000)
      vim.cmd.edit('#')
      local out = {}
      for _, chunk in ipairs(answer.results[1].chunks) do out[#out + 1] = { chunk.path, chunk.startLine } end
      for _, chunk in ipairs(out) do if chunk[1] == 'long.py' and chunk[2] > 100 then return out end end
      return nil
    ]], vim.fs.joinpath(root, 'use.py'))
    assert.is_truthy(chunks, 'the shown lines of long.py never came back from `recent`')
  end)
end)
