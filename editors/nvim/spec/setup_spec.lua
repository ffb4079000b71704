-- setup(): attaching the real server, no globals, :checkhealth, and the server's word on bad settings.

local H = require('helpers')

describe('setup', function()
  local child
  after_each(function()
    if child then child.stop() end
    child = nil
  end)

  it('has a help file whose tags build with no error #quick', function()
    local doc = vim.fs.joinpath(H.plugin, 'doc')
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, 'p')
    for name in vim.fs.dir(doc) do
      if name:match('%.txt$') then vim.uv.fs_copyfile(vim.fs.joinpath(doc, name), vim.fs.joinpath(dir, name)) end
    end
    local ok, err = pcall(vim.cmd.helptags, dir)
    assert.is_true(ok, tostring(err))
    local tags = table.concat(vim.fn.readfile(vim.fs.joinpath(dir, 'tags')), '\n')
    for _, tag in ipairs({ 'crossfile-trust', 'crossfile-workspace-trust', 'crossfile-setup' }) do
      assert.is_truthy(tags:find(tag .. '\t', 1, true), tag .. ' is not in the tags')
    end
    vim.fn.delete(dir, 'rf')
  end)

  it('adds no globals #quick', function()
    child = H.nvim()
    local added = child.lua([[
      local before = {}
      for k in pairs(_G) do before[k] = true end
      local bin, settings, file = ...
      require('crossfile').setup({ cmd = { bin, 'serve' }, settings = settings })
      vim.cmd.edit(file)
      vim.wait(30000, function() return #vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 }) > 0 end, 20)
      require('crossfile').setup({ cmd = { bin, 'serve' }, settings = settings })
      local added = {}
      for k in pairs(_G) do if not before[k] then added[#added + 1] = k end end
      return added
    ]], H.bin, H.settings(), vim.fs.joinpath(H.click(), 'src', 'click', 'core.py'))
    assert.same({}, added)
  end)

  it('attaches one server per workspace root, with the filetype told from the extension #quick', function()
    child = H.nvim()
    H.setup(child, H.settings())
    local root = H.click()
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(root, 'src', 'click', 'core.py'))
    assert.equal('python', child.lua('return vim.bo.filetype'))
    local clients = child.wait_for(30000, [[
      local c = vim.lsp.get_clients({ name = 'crossfile', bufnr = 0 })[1]
      return c and c.initialized and { id = c.id, root = c.root_dir, folders = c.workspace_folders } or nil
    ]])
    assert.is_truthy(clients, 'no server attached and initialized within 30 s')
    assert.equal(root, clients.root)
    assert.equal(vim.uri_from_fname(root), clients.folders[1].uri)
    -- A second file of the same workspace reuses the server.
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(root, 'src', 'click', 'types.py'))
    local second = child.wait_for(10000, H.clients_code)
    assert.equal(1, #second)
    assert.equal(clients.id, second[1].id)
    assert.equal(1, child.lua([[return #vim.lsp.get_clients({ name = 'crossfile' })]]))
    -- A file of another type is left alone.
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(root, 'README.md'))
    assert.same({}, child.lua(H.clients_code))
  end)

  it(':checkhealth crossfile reports a missing binary clearly #quick', function()
    child = H.nvim()
    local missing = vim.fs.joinpath(H.tmp, 'no-such-dir', 'crossfile')
    H.setup(child, {}, { cmd = { missing, 'serve' } })
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(H.click(), 'src', 'click', 'core.py'))
    local text = child.lua([[
      vim.cmd('checkhealth crossfile')
      return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    ]])
    assert.matches('ERROR server binary not found: the server command "' .. vim.pesc(missing) .. '"', text)
    assert.matches('not an executable file or is not on PATH', text, 1, true)
    -- Opening the file said so, once, as an error.
    local notes = child.lua('return package.loaded.crossfile_notes')
    assert.equal(1, #notes)
    assert.equal(vim.log.levels.ERROR, notes[1].level)
    assert.matches(vim.pesc(missing), notes[1].msg)
  end)

  it(':checkhealth crossfile says whether the server is the plugin\'s release; the plugin is the crate\'s #quick', function()
    local cargo = table.concat(vim.fn.readfile(vim.fs.joinpath(H.plugin, '..', '..', 'Cargo.toml')), '\n')
    local crate = cargo:match('%[workspace%.package%][^%[]-\nversion%s*=%s*"([^"]+)"')
    assert.is_not_nil(crate, 'no [workspace.package] version in Cargo.toml')
    assert.equal(crate, require('crossfile.version'))
    local health = require('crossfile.health')
    local level, message, advice = health.binary_line('/bin/crossfile', 'crossfile 0.1.0', '0.1.0')
    assert.equal('ok', level)
    assert.equal("server binary: /bin/crossfile (crossfile 0.1.0), the plugin's release", message)
    assert.is_nil(advice)
    level, message, advice = health.binary_line('/bin/crossfile', 'crossfile 0.2.0', '0.1.0')
    assert.equal('warn', level)
    assert.equal('server binary: /bin/crossfile (crossfile 0.2.0, the plugin is 0.1.0)', message)
    assert.matches('same one', advice[1])
    level, message = health.binary_line('/bin/x', 'x 1.0', '0.1.0')
    assert.equal('warn', level)
    assert.equal('server binary: /bin/x ("x 1.0", not "crossfile <version>"; the plugin is 0.1.0)', message)
  end)

  it('shows the server\'s message for a bad setting, and checkhealth reports it #quick', function()
    child = H.nvim()
    H.setup(child, H.settings({ retrieve = { top_k = 0 } }))
    child.lua('vim.cmd.edit(...)', vim.fs.joinpath(H.click(), 'src', 'click', 'core.py'))
    local note = child.wait_for(30000, [[
      for _, n in ipairs(package.loaded.crossfile_notes) do
        if n.msg:find('top_k', 1, true) then return n end
      end
    ]])
    assert.is_truthy(note, 'no message naming retrieve.top_k within 30 s')
    assert.matches('retrieve.top_k', note.msg, 1, true)
    assert.equal(vim.log.levels.ERROR, note.level)
    local health = child.lua([[
      vim.cmd('checkhealth crossfile')
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
      vim.cmd('tabclose')
      return text
    ]])
    assert.matches('ERROR server %d+ reported since its last settings: [^\n]*retrieve%.top_k', health)
    assert.matches('OK server binary: [^\n]*crossfile %d+%.%d+', health)
    -- Refused whole, the settings' model.path is not in force: checkhealth shows the server's
    -- model (its default, from the catalogue), not the one the settings name.
    assert.matches('model [^\n]+ %(catalogue%)', health)
    assert.is_nil(health:find('model.path: ', 1, true), health)

    -- A settings change is sent; a bad key in it is named too, a good one clears the report.
    child.lua([[require('crossfile').set_settings(...)]], H.settings({ retrieve = { retriever = 'no-such-retriever' } }))
    local second = child.wait_for(20000, [[
      for _, n in ipairs(package.loaded.crossfile_notes) do
        if n.msg:find('retrieve.retriever', 1, true) then return n end
      end
    ]])
    assert.is_truthy(second, 'no message naming retrieve.retriever after didChangeConfiguration')
    child.lua([[require('crossfile').setup({ cmd = { ..., 'serve' }, settings = select(2, ...) })]], H.bin, H.settings())
    -- Give the server a moment to object, then ask checkhealth.
    vim.wait(1500)
    local after = child.lua([[
      vim.cmd('checkhealth crossfile')
      return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    ]])
    assert.matches('OK server %d+ accepted the settings', after)
  end)
end)
