-- Arena battles (blind paired suggestions): a battle told from the server's answer, both
-- suggestions shown (1 as ghost text, 2 as virtual lines below, labelled, never the arm), picked
-- with <Tab> / <S-Tab> or the <Plug> maps, dismissed with <C-]> or by leaving insert mode (a vote
-- of no choice), :Crossfile arena reveal; then the real server: two arms, a battle typed for, <S-Tab>
-- and the votes file, a second battle dismissed, the reveal naming both arms.

local H = require('helpers')

-- A battle as the server answers it (the protocol's example).
local function battle_answer(id, one, two, range)
  local function item(text, pick)
    return { insertText = text, range = range,
      command = { title = 'crossfile arena: ' .. pick, command = 'crossfile.arenaVote',
        arguments = { { battle = id, pick = pick } } } }
  end
  return { items = { item(one, 1), item(two, 2) } }
end

-- In a child: records the votes the plugin sends (crossfile.arena's vote stubbed) in
-- package.loaded.crossfile_votes ({battle, pick}; pick vim.NIL for no choice).
local stub_votes = [[
  local votes = {}
  package.loaded.crossfile_votes = votes
  require('crossfile.arena').vote = function(_, id, pick) votes[#votes + 1] = { battle = id, pick = pick or vim.NIL } end
]]

-- In a child: the extmarks of the ghost namespace of the current buffer, with details.
local marks_code = [[
  return vim.api.nvim_buf_get_extmarks(0, require('crossfile.ghost').ns, 0, -1, { details = true })
]]

describe('arena, in the client alone', function()
  local child
  local line = '    return box.'

  -- A child with the plugin's keys and autocommands on a Python buffer, no server.
  local function start(opts)
    child = H.nvim()
    child.lua(stub_votes)
    child.lua([[
      local opts, line = ...
      require('crossfile.config').apply(opts)
      vim.cmd.edit(vim.fn.tempname() .. '.py')
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'def area(box):', line, '' })
      require('crossfile.inline').attach(buf)
      require('crossfile.keymaps').attach(buf, false)
    ]], opts or vim.empty_dict(), line)
  end

  -- In insert mode at the end of line 2, shows battle `id` of texts `one` and `two`.
  local function show(id, one, two)
    if child.lua('return vim.api.nvim_get_mode().mode') ~= 'n' then child.input('<Esc>') end
    child.lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
    child.input('A')
    assert.equal('i', child.lua('return vim.api.nvim_get_mode().mode'))
    child.lua([[
      local id, one, two = ...
      local col = #vim.api.nvim_get_current_line()
      require('crossfile.ghost').show_battle(vim.api.nvim_get_current_buf(),
        { id = id, texts = { one, two }, at = { { 1, col }, { 1, col } } })
    ]], id, one, two)
  end

  local function votes() return child.lua('return package.loaded.crossfile_votes') end
  local function line2() return child.lua('return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]') end

  after_each(function()
    if child then child.stop() end
    child = nil
  end)

  it('tells a battle from an inline completion answer #quick', function()
    local arena = require('crossfile.arena')
    local range = { start = { line = 3, character = 4 }, ['end'] = { line = 3, character = 4 } }
    local battle = arena.from_answer(battle_answer(17, 'foo(bar)', 'foo(baz, 2)', range))
    assert.same({ id = 17, texts = { 'foo(bar)', 'foo(baz, 2)' }, ranges = { range, range } }, battle)
    -- A bare list of items too; a snippet's value.
    local bare = battle_answer(3, 'a', 'b').items
    bare[2].insertText = { kind = 'snippet', value = 'b' }
    assert.same({ 'a', 'b' }, arena.from_answer(bare).texts)
    -- Not battles: a plain answer, one item, items of two battles, no battle id.
    assert.is_nil(arena.from_answer({ items = { { insertText = 'x' } } }))
    assert.is_nil(arena.from_answer({ items = { battle_answer(1, 'a', 'b').items[1] } }))
    local mixed = battle_answer(1, 'a', 'b')
    mixed.items[2].command.arguments[1].battle = 2
    assert.is_nil(arena.from_answer(mixed))
    local no_id = battle_answer(1, 'a', 'b')
    no_id.items[1].command.arguments = {}
    assert.is_nil(arena.from_answer(no_id))
    assert.is_nil(arena.from_answer(vim.NIL))
  end)

  it("passes the arena's arms to the server intact, a list replacing a list #quick", function()
    child = H.nvim()
    local got = child.lua([[
      local config = require('crossfile.config')
      local arms = { 'bm25', { retriever = 'none', ['prompt.max_new_tokens'] = 3 } }
      config.apply({ settings = { arena = { enabled = true, arms = arms, seed = 7 } }, trust_workspace = false })
      local sent = config.settings_for(nil)
      -- A project's list replaces setup()'s whole.
      local merged = config.merge({ arena = { arms = { 'a', 'b', 'c' }, enabled = true } }, { arena = { arms = { 'x', 'y' } } })
      return { sent = vim.json.encode(sent), merged = merged }
    ]])
    assert.same({ arena = { enabled = true, seed = 7, arms = { 'bm25', { retriever = 'none', ['prompt.max_new_tokens'] = 3 } } } },
      vim.json.decode(got.sent))
    assert.matches('"arms":%["bm25",{', got.sent)
    assert.same({ arena = { arms = { 'x', 'y' }, enabled = true } }, got.merged)
  end)

  it('shows suggestion 1 as ghost text labelled 1 and suggestion 2 below labelled 2 #quick', function()
    start()
    show(5, 'width * box.height', 'height\nprint(box)')
    local marks = child.lua(marks_code)
    local ghost, label, second
    for _, m in ipairs(marks) do
      local d = m[4]
      if d.virt_text_pos == 'inline' then ghost = m end
      if d.virt_text_pos == 'eol' then label = m end
      if d.virt_lines then second = d.virt_lines end
    end
    assert.same({ 1, #line }, { ghost[2], ghost[3] })
    assert.equal('width * box.height', ghost[4].virt_text[1][1])
    assert.equal(1, label[2])
    assert.equal(' 1 ', label[4].virt_text[1][1])
    -- 2's first line under where it goes in, its label at the line's start; its next line as is.
    assert.equal(2, #second)
    assert.equal(' 2 ', second[1][1][1])
    assert.equal(#line, #second[1][1][1] + #second[1][2][1])
    assert.equal('height', second[1][3][1])
    assert.equal('print(box)', second[2][1][1])
    -- The API: the suggestion shown is 1's; the battle both.
    assert.equal('width * box.height', child.lua('return require("crossfile").suggestion(0)'))
    assert.same({ id = 5, texts = { 'width * box.height', 'height\nprint(box)' } },
      child.lua('return require("crossfile").battle()'))
  end)

  it('<S-Tab> accepts suggestion 2 and votes 2, <Tab> accepts 1 and votes 1 #quick', function()
    start()
    show(5, 'width * box.height', 'height')
    child.input('<S-Tab>')
    assert.equal(line .. 'height', line2())
    assert.same({ { battle = 5, pick = 2 } }, votes())
    assert.same({ 2, #line + #'height' }, child.lua('return vim.api.nvim_win_get_cursor(0)'))
    assert.equal(0, #child.lua(marks_code))
    assert.equal(vim.NIL, child.lua('return require("crossfile").battle() or vim.NIL'))
    child.input('<Esc>')
    child.lua('vim.api.nvim_buf_set_lines(0, 1, 2, false, { ... })', line)
    show(6, 'width * box.height', 'height\n')
    child.input('<Tab>')
    assert.equal(line .. 'width * box.height', line2())
    assert.same({ { battle = 5, pick = 2 }, { battle = 6, pick = 1 } }, votes())
    -- Leaving insert mode with no battle shown votes nothing more.
    child.input('<Esc>')
    assert.equal(2, #votes())
  end)

  it('a two-line suggestion 2 is inserted whole #quick', function()
    start()
    show(8, 'w', 'width\n    x = 1')
    child.input('<S-Tab>')
    assert.same({ line .. 'width', '    x = 1' }, child.lua('return vim.api.nvim_buf_get_lines(0, 1, 3, false)'))
    assert.same({ 3, #'    x = 1' }, child.lua('return vim.api.nvim_win_get_cursor(0)'))
    assert.same({ { battle = 8, pick = 2 } }, votes())
  end)

  it('<C-]> and leaving insert mode vote no choice; typing on votes nothing #quick', function()
    start()
    show(1, 'a', 'b')
    child.input('<C-]>')
    assert.equal(0, #child.lua(marks_code))
    assert.equal(line, line2())
    assert.same({ { battle = 1, pick = vim.NIL } }, votes())
    show(2, 'a', 'b')
    child.input('<Esc>')
    assert.equal(0, #child.lua(marks_code))
    assert.same({ battle = 2, pick = vim.NIL }, votes()[2])
    show(3, 'a', 'b')
    child.input('w')
    assert.equal(0, #child.lua(marks_code))
    assert.equal(line .. 'w', line2())
    child.input('<Esc>')
    assert.equal(2, #votes())
  end)

  it('with no battle, <S-Tab> accepts a first line and <Tab> the suggestion, else their own meaning #quick', function()
    start()
    child.lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
    child.input('A')
    child.lua([[require('crossfile.ghost').show(vim.api.nvim_get_current_buf(), 1, #vim.api.nvim_get_current_line(), 'width\nx')]])
    child.input('<S-Tab>')
    assert.equal(line .. 'width', line2())
    assert.equal('\nx', child.lua('return require("crossfile").suggestion(0)'))
    child.input('<C-]>')
    child.input('<Tab>')
    assert.equal(line .. 'width\t', line2())
    child.input('<Esc>')
    assert.same({}, votes())
  end)

  it('<Plug>(crossfile-arena-1) and <Plug>(crossfile-arena-2) pick, and do nothing with no battle #quick', function()
    start({ keymaps = false })
    local maps = child.lua([[
      local ours = {}
      for _, mode in ipairs({ 'i', 'n' }) do
        for _, m in ipairs(vim.api.nvim_buf_get_keymap(0, mode)) do ours[#ours + 1] = m.lhs end
      end
      return ours
    ]])
    assert.same({}, maps)
    child.lua([[
      vim.keymap.set('i', '<C-g>1', '<Plug>(crossfile-arena-1)')
      vim.keymap.set('i', '<C-g>2', '<Plug>(crossfile-arena-2)')
    ]])
    show(4, 'width', 'height')
    child.input('<C-g>2')
    assert.equal(line .. 'height', line2())
    child.input('<Esc>')
    child.lua('vim.api.nvim_buf_set_lines(0, 1, 2, false, { ... })', line)
    show(5, 'width', 'height')
    child.input('<C-g>1')
    assert.equal(line .. 'width', line2())
    child.input('<C-g>1<C-g>2<Esc>')
    assert.equal(line .. 'width', line2())
    assert.same({ { battle = 4, pick = 2 }, { battle = 5, pick = 1 } }, votes())
    -- With keymaps = false, <S-Tab> and <Tab> are Neovim's own even while a battle shows.
    child.lua('vim.api.nvim_buf_set_lines(0, 1, 2, false, { ... })', line)
    show(6, 'width', 'height')
    child.input('<Tab><Esc>')
    assert.equal(line .. '\t', line2())
  end)

  it(':Crossfile arena completes reveal; the reveal view and checkhealth line say it all #quick', function()
    child = H.nvim({ startup = true })
    local got = child.lua([[
      return { all = vim.fn.getcompletion('Crossfile ', 'cmdline'), arena = vim.fn.getcompletion('Crossfile arena ', 'cmdline'),
               plug = vim.fn.maparg('<Plug>(crossfile-arena-2)', 'i', false, true).lhs ~= nil }
    ]])
    assert.is_true(vim.tbl_contains(got.all, 'arena'))
    assert.same({ 'reveal' }, got.arena)
    assert.is_true(got.plug)
    local views = require('crossfile.views')
    local answer = { battle = 3, arms = { 'none+prompt.max_new_tokens=3', 'bm25' }, picked = 2,
      texts = { 'wid', 'width * box.height' }, latencyMs = { 120, 340 }, caseId = vim.NIL,
      metrics = vim.NIL, votes = '/tmp/v.jsonl', path = '/w/app.py', line = 4, col = 12 }
    local text = table.concat(views.arena_text(answer).lines, '\n')
    assert.matches('the last battle 3 revealed at /w/app.py:4:12', text, 1, true)
    assert.matches('picked: 2 (bm25)', text, 1, true)
    assert.matches('## 1: none+prompt.max_new_tokens=3\n  latency: 120 ms\n  suggestion:\n    wid', text, 1, true)
    assert.matches('## 2: bm25  [picked]', text, 1, true)
    assert.matches('votes: /tmp/v.jsonl', text, 1, true)
    answer.picked = vim.NIL
    answer.metrics = { { es = 50 }, { es = 75.5 } }
    text = table.concat(views.arena_text(answer).lines, '\n')
    assert.matches('picked: none', text, 1, true)
    assert.matches('metrics: es 75.50', text, 1, true)
    assert.equal('battle 3: 1 = none+prompt.max_new_tokens=3, 2 = bm25; no choice', require('crossfile.arena').summary(answer))
    local health = require('crossfile.health')
    assert.equal('arena: off', health.arena_line(vim.NIL))
    assert.equal('arena: on, arms bm25, none, seed 7; 4 battles shown, 3 votes recorded, 0 failed, 1 blank; votes file /v',
      health.arena_line({ arms = { 'bm25', 'none' }, votes = '/v', seed = 7, battles = 4, recorded = 3, failed = 0, blank = 1 }))
  end)
end)

describe('arena against the server', function()
  local child, root, votes_file
  -- Two arms whose suggestions differ at the same cursor: 3 tokens against 12.
  local arms = { { retriever = 'none', ['prompt.max_new_tokens'] = 3 }, { retriever = 'bm25', ['prompt.max_new_tokens'] = 12 } }

  setup(function()
    root = H.tiny('arena')
    votes_file = vim.fs.joinpath(H.tmp, 'arena-votes', 'votes.jsonl')
    child = H.nvim()
    child.lua([[
      local seen = {}
      package.loaded.crossfile_arena_votes = seen
      vim.api.nvim_create_autocmd('User', { pattern = 'CrossfileArenaVote', callback = function(ev) seen[#seen + 1] = ev.data end })
    ]])
    H.setup(child, H.settings({ arena = { enabled = true, arms = arms, votes = votes_file, seed = 7 } }))
    -- The lines are typed as they should read: no indent added.
    child.lua('vim.o.autoindent = false; vim.cmd.edit(...)', vim.fs.joinpath(root, 'app.py'))
    assert.is_truthy(child.wait_for(30000, H.ready_code), 'the server did not start')
  end)
  teardown(function() child.stop() end)

  -- The battle shown once one differs from `other` (a battle id), within 180 s.
  local function battle_other_than(other)
    return child.wait_for(180000, [[
      local b = require('crossfile').battle()
      return b and b.id ~= ... and b or nil
    ]], other or vim.NIL)
  end

  -- The vote on battle `id` once the server answered it.
  local function vote_on(id)
    return child.wait_for(30000, [[
      for _, v in ipairs(package.loaded.crossfile_arena_votes) do if v.battle == ... then return v end end
    ]], id)
  end

  local function votes()
    local out = {}
    for _, l in ipairs(vim.fn.readfile(votes_file)) do out[#out + 1] = vim.json.decode(l) end
    return out
  end

  local first_id

  it('shows both suggestions as you type; <S-Tab> inserts 2 and the votes file records it', function()
    child.input('Go<CR>def perimeter(box):<CR>    return ')
    assert.equal('i', child.lua('return vim.api.nvim_get_mode().mode'))
    local battle = battle_other_than(nil)
    assert.is_truthy(battle, 'no battle within 180 s: ' .. vim.inspect(child.lua('return package.loaded.crossfile_notes')))
    first_id = battle.id
    assert.are_not.equal(battle.texts[1], battle.texts[2])
    -- 1 as ghost text labelled "1", 2 as virtual lines labelled "2" (no arm named anywhere).
    local marks = child.lua(marks_code)
    local inline, label, below = nil, nil, {}
    for _, m in ipairs(marks) do
      local d = m[4]
      if d.virt_text_pos == 'inline' then inline = d.virt_text[1][1] end
      if d.virt_text_pos == 'eol' then label = d.virt_text[1][1] end
      for _, vl in ipairs(d.virt_lines or {}) do
        local parts = {}
        for _, chunk in ipairs(vl) do parts[#parts + 1] = chunk[1] end
        below[#below + 1] = table.concat(parts)
      end
    end
    local one = vim.split(battle.texts[1], '\n', { plain = true })
    local two = vim.split(battle.texts[2], '\n', { plain = true })
    if one[1] ~= '' then assert.equal(one[1], inline) end
    assert.equal(' 1 ', label)
    local labelled = vim.tbl_filter(function(l) return vim.startswith(l, ' 2 ') end, below)
    assert.equal(1, #labelled, vim.inspect(below))
    -- Under where it goes in: after `    return ` (11 columns, 3 of them the label).
    assert.equal(' 2 ' .. string.rep(' ', 8) .. two[1], labelled[1])
    local text = table.concat(below, '\n') .. (inline or '')
    for _, arm in ipairs({ 'none', 'bm25' }) do assert.is_nil(text:find(arm, 1, true), arm .. ' shows') end
    -- Nor in the statusline.
    assert.matches('^crossfile · arena · %d+ ms$', child.lua('return require("crossfile").status()'))

    child.input('<S-Tab>')
    local lines = child.lua('return vim.api.nvim_buf_get_lines(0, -1 - select(1, ...), -1, false)', #two)
    two[1] = '    return ' .. two[1]
    assert.same(two, lines)
    assert.equal(vim.NIL, child.lua('return require("crossfile").battle() or vim.NIL'))
    local vote = vote_on(first_id)
    assert.is_truthy(vote, 'the vote was not answered')
    assert.is_nil(vote.err)
    assert.is_true(vote.recorded)
    assert.equal(votes_file, vote.votes)
    local all = votes()
    local chosen = vim.tbl_filter(function(v) return v.choice ~= vim.NIL end, all)
    assert.equal(1, #chosen, vim.inspect(all))
    local line = all[#all]
    assert.equal(1 - line.first, line.choice)
    assert.equal(battle.texts[2], line.texts[line.choice + 1])
    assert.equal(battle.texts[1], line.texts[line.first + 1])
    child.input('<Esc>')
  end)

  it('a battle dismissed with <C-]> is recorded as no choice; :Crossfile arena reveal names both arms', function()
    assert.is_not_nil(first_id, 'the first battle did not run')
    child.input('o<CR>def half_width(box):<CR>    return ')
    local battle = battle_other_than(first_id)
    assert.is_truthy(battle, 'no second battle within 180 s')
    child.input('<C-]>')
    assert.equal(vim.NIL, child.lua('return require("crossfile").battle() or vim.NIL'))
    assert.equal('    return ', child.lua('return vim.api.nvim_get_current_line()'))
    local vote = vote_on(battle.id)
    assert.is_truthy(vote, 'the vote was not answered')
    assert.is_nil(vote.pick)
    assert.is_true(vote.recorded)
    local all = votes()
    local line = all[#all]
    assert.equal(vim.NIL, line.choice)
    assert.equal(battle.texts[1], line.texts[line.first + 1])
    child.input('<Esc>')

    child.lua('vim.cmd("Crossfile arena reveal")')
    assert.is_truthy(child.wait_for(30000, 'return not require("crossfile.views").is_pending("arena")'))
    local view = child.lua([[
      local buf = vim.fn.bufnr('crossfile://arena')
      return { lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false), win = vim.fn.bufwinid(buf) }
    ]])
    assert.is_not.equal(-1, view.win)
    local answer = child.lua('return require("crossfile").arena_reveal_sync()')
    if answer.battle ~= nil then assert.equal(battle.id, answer.battle) end
    assert.same(battle.texts, answer.texts)
    -- null (over RPC, nil or vim.NIL): no choice.
    assert.is_true(answer.picked == nil or answer.picked == vim.NIL, tostring(answer.picked))
    -- The arms in shown order: the votes line's, from its `first`.
    assert.same({ line.arms[line.first + 1], line.arms[2 - line.first] }, answer.arms)
    local text = table.concat(view.lines, '\n')
    assert.matches('## 1: ' .. answer.arms[1], text, 1, true)
    assert.matches('## 2: ' .. answer.arms[2], text, 1, true)
    assert.matches('picked: none', text, 1, true)
    local said = child.lua([[
      for _, n in ipairs(package.loaded.crossfile_notes) do if n.msg:find('battle', 1, true) then return n.msg end end
    ]])
    assert.equal('crossfile: ' .. require('crossfile.arena').summary(answer), said)
  end)

  it(':checkhealth crossfile reports the arena', function()
    local text = child.lua([[
      vim.cmd('checkhealth crossfile')
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
      vim.cmd('tabclose')
      return text
    ]])
    local recorded = text:match('arena: on, arms [^\n]+, seed 7; %d+ battles shown, (%d+) votes recorded')
    assert.is_truthy(recorded, text)
    assert.is_true(tonumber(recorded) >= 2)
    assert.matches('votes file ' .. vim.pesc(votes_file), text)
  end)
end)
