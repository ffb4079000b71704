-- What the plugin takes from the server instead of its own lists and guesses: :Crossfile compare's
-- completion (crossfile.retrievers), :checkhealth's model, backend, cache directory and folders
-- (crossfile.status), the statusline's retriever. Nothing here asks for a completion.

local H = require('helpers')

-- A workspace of two files whose crossfile.toml chooses the retriever (no setting names it).
local function tiny()
  local root = vim.fs.joinpath(H.tmp, 'tiny')
  vim.fn.mkdir(root, 'p')
  vim.fn.writefile({ 'from shapes import Box', '', 'def area(box):', '    return box.width * box.height' },
    vim.fs.joinpath(root, 'app.py'))
  vim.fn.writefile({ 'class Box:', '    def __init__(self, width, height):', '        self.width = width',
    '        self.height = height' }, vim.fs.joinpath(root, 'shapes.py'))
  vim.fn.writefile({ '[retrieve]', 'retriever = "jaccard"' }, vim.fs.joinpath(root, 'crossfile.toml'))
  return root
end

describe('spec completion', function()
  local specs = require('crossfile.commands').spec_completions
  local list = {
    { spec = 'none', composite = false }, { spec = 'bm25', composite = false }, { spec = 'jaccard', composite = false },
    { spec = 'mmr:<spec>[:<lambda in 0..1>]', composite = true },
    { spec = 'hybrid:<spec>+<spec>[+<spec>...]', composite = true },
  }

  it('offers the simple specs and the composite prefixes, then specs inside a composite spec #quick', function()
    assert.same({ 'none', 'bm25', 'jaccard', 'mmr:', 'hybrid:' }, specs(list, ''))
    assert.same({ 'bm25' }, specs(list, 'b'))
    assert.same({ 'mmr:none', 'mmr:bm25', 'mmr:jaccard' }, specs(list, 'mmr:'))
    assert.same({ 'hybrid:bm25+jaccard' }, specs(list, 'hybrid:bm25+j'))
    -- After mmr's lambda, or with no server answer, nothing.
    assert.same({}, specs(list, 'mmr:bm25:'))
    assert.same({}, specs(nil, ''))
    assert.same({}, specs(list, 'zzz'))
  end)
end)

describe('from the server', function()
  local child, root
  setup(function()
    root = tiny()
    child = H.nvim()
    -- Trust decided here: vim.secure would ask about the workspace's crossfile.toml.
    H.setup(child, H.settings(), { trust_workspace = false })
  end)
  teardown(function() child.stop() end)

  local function completion(line)
    return child.lua('return vim.fn.getcompletion(..., "cmdline")', line)
  end

  it(':Crossfile compare completes nothing while no server runs #quick', function()
    assert.same({}, completion('Crossfile compare '))
  end)

  it(':Crossfile compare completes the specs the server lists #quick', function()
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(root, 'app.py'))
    assert.is_truthy(child.wait_for(30000, [[
      local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
      return c and c.initialized
    ]]), 'the server did not start')
    local all = completion('Crossfile compare ')
    for _, spec in ipairs({ 'none', 'bm25', 'bm25-cceval-rg1', 'jaccard', 'dense', 'oracle', 'dataset', 'mmr:', 'hybrid:' }) do
      assert.is_true(vim.tbl_contains(all, spec), spec .. ' is not in ' .. vim.inspect(all))
    end
    for _, spec in ipairs(all) do assert.is_nil(spec:find('<', 1, true), spec) end
    assert.same({ 'bm25', 'bm25-cceval', 'bm25-cceval-rg1' }, completion('Crossfile compare none bm'))
    assert.same({ 'hybrid:bm25+jaccard' }, completion('Crossfile compare hybrid:bm25+j'))
    -- The deprecated :CrossfileCompare completes the same.
    assert.same({ 'hybrid:bm25+jaccard' }, completion('CrossfileCompare hybrid:bm25+j'))
  end)

  it(":checkhealth crossfile shows what the server resolved: model, cache directory, the folder's index #quick", function()
    local ready = child.wait_for(30000, [[
      local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
      local status = require('crossfile.client').execute_sync(c, 'crossfile.status', nil)
      return status.folders[1] and status.folders[1].index == 'ready'
    ]])
    assert.is_truthy(ready, 'the index was not ready within 30 s')
    local text = child.lua([[
      vim.cmd('checkhealth crossfile')
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
      vim.cmd('tabclose')
      return text
    ]])
    assert.matches('OK server %d+: crossfile %d+%.%d+%.%d+[^\n]*, retriever jaccard', text)
    -- The server loads the model as it starts: loaded by now, or still loading.
    assert.matches('OK model.path: ' .. vim.pesc(H.model) .. ': [%w ,]*loaded', text)
    assert.matches('OK backend: embedded', text)
    assert.matches('cache directory: ' .. vim.pesc(H.settings().index.cache_dir) .. '\n', text)
    assert.matches('OK folder tiny %(' .. vim.pesc(root) .. '%): index ready, 2 files, %d+ chunks; not trusted', text)
    assert.is_nil(text:find('ERROR', 1, true), text)
  end)

  it("the statusline adds the server's work under way ($/progress) until it ends #quick", function()
    local function report(value)
      return child.lua([[
        local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
        -- As Neovim's $/progress handler passes a report on.
        vim.api.nvim_exec_autocmds('LspProgress', { pattern = (...).kind, modeline = false,
          data = { client_id = c.id, params = { token = 'crossfile/index/spec', value = ... } } })
        return require('crossfile').status()
      ]], value)
    end
    assert.matches(' · indexing tiny src 40%%$', report({ kind = 'begin', title = 'crossfile: indexing tiny', message = 'src', percentage = 40 }))
    assert.matches(' · indexing tiny 2 of 2 files 90%%$', report({ kind = 'report', title = 'crossfile: indexing tiny', message = '2 of 2 files', percentage = 90 }))
    assert.is_nil(report({ kind = 'end', title = 'crossfile: indexing tiny', message = 'done' }):find('indexing', 1, true))
  end)

  it('the statusline names the retriever the server runs with, and follows a settings change #quick', function()
    local model = vim.pesc(vim.fs.basename(H.model))
    local chosen = child.wait_for(10000, [[
      local s = require('crossfile').status()
      return s:find('jaccard', 1, true) and s or nil
    ]])
    assert.is_truthy(chosen, "the statusline never named the workspace's retriever")
    assert.matches('^crossfile · ' .. model .. ' · jaccard$', chosen)
    child.lua([[require('crossfile').set_settings(...)]], H.settings({ retrieve = { retriever = 'bm25' } }))
    local changed = child.wait_for(10000, [[
      local s = require('crossfile').status()
      return s:find(' · bm25$') and s or nil
    ]])
    assert.is_truthy(changed, 'the statusline did not follow the settings change: ' .. child.lua([[return require('crossfile').status()]]))
  end)
end)
