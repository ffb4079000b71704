-- crossfile.commands: `:Crossfile {subcommand}` (replay, next, prev, score, compare, context,
-- arena reveal, cancel, trust, health) and its completion. Nothing here waits for the server: a command sends
-- its request, its view shows a pending state, and the answer is rendered when it comes.

local client = require('crossfile.client')
local config = require('crossfile.config')

local M = {}

local function api() return require('crossfile') end
local function views() return require('crossfile.views') end

local function say(message, level)
  vim.notify('crossfile: ' .. message, level or vim.log.levels.INFO)
end

-- Says `err` unless the job was cancelled (the user knows).
local function failed(err, job)
  if job and job.cancelled then return say('cancelled: ' .. job.label) end
  vim.notify(err, vim.log.levels.ERROR)
end

local function busy(message)
  if #vim.api.nvim_list_uis() > 0 then
    vim.api.nvim_echo({ { 'crossfile: ' .. message .. '   (<C-c> or :Crossfile cancel cancels)' } }, false, {})
  end
end

-- The case as the server describes it; a case mined from history also names its line's category.
local function case_line(case)
  local line = ('case %d/%d %s  %s:%s'):format((case.index or 0) + 1, case.count or 0, case.id or '?',
    case.path or '?', case.line or '?')
  if type(case.category) == 'string' then line = line .. ('  (%s)'):format(case.category) end
  return line
end

local function replayed(err, case, job)
  if err then return failed(err, job) end
  say('replaying ' .. case_line(case))
end

-- Asks for what is missing of {cases, repos, case}, then replays.
local function ask_and_replay(args)
  local replay = require('crossfile.replay')
  local function go()
    busy('replaying…')
    api().replay(args, replayed)
  end
  local function pick_case()
    if args.case ~= nil then return go() end
    busy('reading the cases…')
    replay.list(args.cases, args.format, function(err, cases, job)
      if err then return failed(err, job) end
      if not cases or #cases == 0 then return say('no usable case in ' .. args.cases, vim.log.levels.WARN) end
      vim.ui.select(cases, {
        prompt = 'Case to replay',
        format_item = function(c)
          local category = type(c.category) == 'string' and ('  (%s)'):format(c.category) or ''
          return ('%d  %s  %s  %s:%d%s'):format(c.index, c.id, c.language or '', c.path or '', c.line or 0, category)
        end,
      }, function(choice)
        if not choice then return end
        args.case = choice.id
        go()
      end)
    end)
  end
  local function ask_repos()
    if args.repos then return pick_case() end
    vim.ui.input({ prompt = 'Repositories folder: ', default = replay.last_args.repos, completion = 'dir' },
      function(input)
        if not input or input == '' then return end
        args.repos = vim.fn.expand(input)
        pick_case()
      end)
  end
  if args.cases then return ask_repos() end
  vim.ui.input({ prompt = 'Cases file: ', default = replay.last_args.cases, completion = 'file' }, function(input)
    if not input or input == '' then return end
    args.cases = vim.fn.expand(input)
    ask_repos()
  end)
end

--- The options `replay` takes as KEY=VALUE, and their values for completion.
M.replay_options = {
  setting = { 'baseline', 'local_completion', 'local_infilling' },
  format = { 'cceval', 'repoeval', 'history', 'evocodebench' },
  envs = 'dir',
  max_new_tokens = {},
}

--- `:Crossfile replay [CASES [REPOS [ID|INDEX]]] [setting=S] [envs=DIR] [format=F]
--- [max_new_tokens=N]` as replay()'s options (an EvoCodeBench setting defaults to setup()'s
--- `replay.evocodebench_setting`). Raises on an unknown option.
function M.replay_args(fargs)
  local args, positional = {}, {}
  for _, a in ipairs(fargs) do
    local key, value = a:match('^([%w_]+)=(.*)$')
    if key then
      if M.replay_options[key] == nil then
        error(('crossfile: replay: unknown option %s= (the options: setting=, envs=, format=, max_new_tokens=)')
          :format(key), 0)
      end
      args[key] = value
    else
      positional[#positional + 1] = a
    end
  end
  args.cases = positional[1] and vim.fn.expand(positional[1])
  args.repos = positional[2] and vim.fn.expand(positional[2])
  if positional[3] then args.case = positional[3]:match('^%d+$') and tonumber(positional[3]) or positional[3] end
  if args.envs then args.envs = vim.fn.expand(args.envs) end
  if args.max_new_tokens then args.max_new_tokens = tonumber(args.max_new_tokens) end
  args.setting = args.setting or vim.tbl_get(config.options, 'replay', 'evocodebench_setting')
  return args
end

local function score_said(answer)
  local keys = vim.tbl_keys(answer.metrics or {})
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = answer.metrics[k]
    parts[#parts + 1] = ('%s %s'):format(k, type(v) == 'number' and ('%.4g'):format(v) or tostring(v))
  end
  return ('case %s (%s, scored %s): %s'):format(answer.caseId, answer.benchmark or '?', answer.scored or '?',
    table.concat(parts, ' · '))
end

local function score_command()
  local tested = require('crossfile.replay').tested()
  local job = api().score(function(err, answer, job)
    local shows = tested and views().waits_for('tests', job)
    if err then
      if shows then views().render('tests', views().message_text('Crossfile tests', err)) end
      return failed(err, job)
    end
    local said = score_said(answer)
    local outcome = answer.outcome
    if type(outcome) ~= 'table' then return say(said) end
    -- An EvoCodeBench case: its tests ran on the body, shown in the tests split.
    if shows or not tested then views().render('tests', views().outcome_text(answer)) end
    if outcome.passed then return say(('%s · %d test(s) passed'):format(said, #(outcome.tests or {}))) end
    local first = type(outcome.firstFailure) == 'string' and (': ' .. outcome.firstFailure) or ''
    say(('%s · %s%s'):format(said, outcome.status, first))
  end)
  if tested then
    views().pending('tests', 'Crossfile tests of case ' .. tostring(require('crossfile.replay').current.case.id), job)
  else
    busy(job.label .. '…')
  end
end

local function compare_command(fargs)
  local function run(specs)
    local title = 'Crossfile compare: ' .. table.concat(specs, ' ')
    local job = api().compare(specs, function(err, answer, job)
      -- A newer compare took the view over: this answer is not shown.
      if not views().waits_for('compare', job) then return end
      if err then
        views().render('compare', views().message_text(title, job.cancelled and 'cancelled' or err))
        return failed(err, job)
      end
      views().render('compare', views().compare_text(answer))
    end)
    views().pending('compare', title, job)
  end
  if #fargs > 0 then return run(fargs) end
  vim.ui.input({ prompt = 'Retrievers: ', default = table.concat(api().compare_default, ' ') }, function(input)
    if not input or input == '' then return end
    local ok, err = pcall(run, vim.split(input, '[%s,]+', { trimempty = true }))
    if not ok then vim.notify(tostring(err), vim.log.levels.ERROR) end
  end)
end

local function context_command()
  local title = 'Crossfile context'
  local job = api().context(function(err, answer, job)
    if not views().waits_for('context', job) then return end
    if err then
      views().render('context', views().message_text(title, job.cancelled and 'cancelled' or err))
      return failed(err, job)
    end
    views().render('context', views().context_text(answer))
  end)
  views().pending('context', title, job)
end

--- The actions of `:Crossfile arena {action}`.
M.arena_actions = { 'reveal' }

-- `:Crossfile arena reveal`: the last recorded battle with its arms, in the crossfile://arena split
-- and said in one line.
local function arena_command(fargs)
  if fargs[1] ~= 'reveal' then
    return say(('arena: %s: the actions are %s'):format(fargs[1] and ('unknown action ' .. fargs[1]) or 'no action',
      table.concat(M.arena_actions, ', ')), vim.log.levels.ERROR)
  end
  local title = 'Crossfile arena: the last battle revealed'
  local job = api().arena_reveal(function(err, answer, job)
    if not views().waits_for('arena', job) then return end
    if err then
      views().render('arena', views().message_text(title, job.cancelled and 'cancelled' or err))
      return failed(err, job)
    end
    views().render('arena', views().arena_text(answer))
    say(require('crossfile.arena').summary(answer))
  end)
  views().pending('arena', title, job)
end

local function cancel_command()
  local n = api().cancel()
  say(n == 0 and 'nothing is waiting for the server' or ('cancelled %d command(s)'):format(n))
end

local function trust_command()
  local n = config.forget_trust()
  say(('asking again about the workspace files (%d forgotten)'):format(n))
  api().set_settings(config.options.settings)
end

--- The subcommands: { run(fargs), server (needs setup() to have run), args (completion) }.
M.subcommands = {
  replay = { run = function(fargs) ask_and_replay(M.replay_args(fargs)) end, server = true },
  next = { run = function() api().next(replayed) end, server = true },
  prev = { run = function() api().prev(replayed) end, server = true },
  score = { run = score_command, server = true },
  compare = { run = compare_command, server = true },
  context = { run = context_command, server = true },
  arena = { run = arena_command, server = true },
  cancel = { run = cancel_command },
  trust = { run = trust_command, server = true },
  health = { run = function() vim.cmd('checkhealth crossfile') end },
}

--- The subcommands' names, sorted.
function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

-- setup() with the defaults when a command comes first (a plugin manager loading on command).
local function ensure_setup()
  if api().is_set_up() then return end
  vim.notify_once("crossfile: setup() had not run: set up with the defaults (call require('crossfile').setup({...}) "
    .. 'in your config to choose the server command and settings)', vim.log.levels.INFO)
  api().setup({})
end

--- Runs `:Crossfile {subcommand} [args]` (the user command's opts); errors are said.
function M.run(opts)
  local name = opts.fargs[1]
  local sub = name and M.subcommands[name]
  if not sub then
    return say(('%s: the subcommands are %s'):format(name and ('unknown subcommand ' .. name) or 'no subcommand',
      table.concat(M.names(), ', ')), vim.log.levels.ERROR)
  end
  local ok, err = pcall(function()
    if sub.server then ensure_setup() end
    sub.run(vim.list_slice(opts.fargs, 2))
  end)
  if not ok then vim.notify(tostring(err), vim.log.levels.ERROR) end
end

--- The completions of `lead` from the server's retrievers (`crossfile.retrievers`' answer): its
--- simple specs and its composite forms' prefixes (`mmr:`, `hybrid:`); after such a prefix, or a
--- `+` in a composite spec, the simple specs again (`hybrid:bm25+j` → `hybrid:bm25+jaccard`).
function M.spec_completions(list, lead)
  local simple, prefixes = {}, {}
  for _, r in ipairs(type(list) == 'table' and list or {}) do
    if r.composite then
      prefixes[#prefixes + 1] = r.spec:match('^[^<]*')
    else
      simple[#simple + 1] = r.spec
    end
  end
  local head = lead:match('^(.*[:+])[^:+]*$')
  local in_composite = head ~= nil and vim.iter(prefixes):any(function(p)
    return head == p or (vim.startswith(head, p) and head:sub(-1) == '+')
  end)
  local candidates = {}
  if in_composite then
    for _, spec in ipairs(simple) do candidates[#candidates + 1] = head .. spec end
  else
    vim.list_extend(vim.list_extend(candidates, simple), prefixes)
  end
  return vim.tbl_filter(function(c) return vim.startswith(c, lead) end, candidates)
end

--- Per client id: its `crossfile.retrievers` answer (the list does not change while it runs).
local retrievers = {}

-- The specs of the server of the current buffer (else any running one), asked once per server
-- and waited for at most a second; nothing when no server runs.
local function complete_specs(lead)
  local c = client.for_buf(vim.api.nvim_get_current_buf()) or client.clients()[1]
  if not c or not c.initialized then return {} end
  if not retrievers[c.id] then
    local ok, list = pcall(client.execute_sync, c, 'crossfile.retrievers', nil, nil, 1000)
    if not ok then return {} end
    retrievers[c.id] = list
  end
  return M.spec_completions(retrievers[c.id], lead)
end

local function starting(list, lead)
  return vim.tbl_filter(function(s) return vim.startswith(s, lead) end, list)
end

local function complete_replay(lead, before)
  local key, value = lead:match('^([%w_]+)=(.*)$')
  if key then
    local values = M.replay_options[key]
    if values == 'dir' then
      return vim.tbl_map(function(d) return key .. '=' .. d end, vim.fn.getcompletion(value, 'dir'))
    end
    return vim.tbl_map(function(v) return key .. '=' .. v end, starting(values or {}, value))
  end
  local options = vim.tbl_map(function(k) return k .. '=' end, vim.tbl_keys(M.replay_options))
  table.sort(options)
  local positional = #vim.tbl_filter(function(a) return not a:find('=', 1, true) end, before)
  if positional >= 2 then return starting(options, lead) end
  return vim.list_extend(vim.fn.getcompletion(lead, positional == 0 and 'file' or 'dir'), starting(options, lead))
end

--- The completion of `:Crossfile` (a user command's `complete` function).
function M.complete(lead, line)
  local words = vim.split(line:sub(1, #line - #lead), '%s+', { trimempty = true })
  -- words[1] is the command itself.
  if #words <= 1 then return starting(M.names(), lead) end
  local before = vim.list_slice(words, 3)
  if words[2] == 'compare' then return complete_specs(lead) end
  if words[2] == 'replay' then return complete_replay(lead, before) end
  if words[2] == 'arena' and #before == 0 then return starting(M.arena_actions, lead) end
  return {}
end

local deprecated = {
  CrossfileReplay = 'replay', CrossfileNext = 'next', CrossfilePrev = 'prev', CrossfileScore = 'score',
  CrossfileCompare = 'compare', CrossfileContext = 'context',
}

--- Defines the deprecated `:CrossfileReplay`, … commands (again, harmlessly, on each setup()):
--- each says once to use `:Crossfile {subcommand}` and runs it.
function M.create_deprecated()
  for old, sub in pairs(deprecated) do
    vim.api.nvim_create_user_command(old, function(opts)
      vim.notify_once(('crossfile: :%s is deprecated: use :Crossfile %s'):format(old, sub), vim.log.levels.WARN)
      M.run({ fargs = vim.list_extend({ sub }, opts.fargs) })
    end, {
      nargs = '*',
      complete = function(lead, line)
        return M.complete(lead, 'Crossfile ' .. sub .. ' ' .. line:gsub('^%S+%s*', ''))
      end,
      desc = ('crossfile: deprecated, use :Crossfile %s'):format(sub),
    })
  end
end

return M
