-- crossfile.commands: the user commands (:CrossfileReplay, :CrossfileNext, :CrossfilePrev,
-- :CrossfileScore, :CrossfileCompare, :CrossfileContext); missing arguments are asked for.

local client = require('crossfile.client')

local M = {}

local function api() return require('crossfile') end

-- Runs `fn`; an error becomes a notification instead of a traceback.
local function guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then vim.notify(tostring(err), vim.log.levels.ERROR) end
  end
end

local function case_line(case)
  return ('case %d/%d %s  %s:%s'):format((case.index or 0) + 1, case.count or 0, case.id or '?',
    case.path or '?', case.line or '?')
end

local function say(message)
  vim.notify('crossfile: ' .. message, vim.log.levels.INFO)
end

local function busy(message)
  if #vim.api.nvim_list_uis() > 0 then
    vim.api.nvim_echo({ { 'crossfile: ' .. message } }, false, {})
    vim.cmd.redraw()
  end
end

local function replayed(case)
  if case then say('replaying ' .. case_line(case)) end
end

-- Asks for what is missing of {cases, repos, case}, then replays.
local function ask_and_replay(args)
  local replay = require('crossfile.replay')
  local function go()
    busy('replaying…')
    replayed(api().replay(args))
  end
  local function pick_case()
    if args.case ~= nil then return guarded(go)() end
    busy('reading the cases…')
    local ok, cases = pcall(replay.list, args.cases)
    if not ok then return vim.notify(tostring(cases), vim.log.levels.ERROR) end
    if not cases or #cases == 0 then return vim.notify('crossfile: no usable case in ' .. args.cases, vim.log.levels.WARN) end
    vim.ui.select(cases, {
      prompt = 'Case to replay',
      format_item = function(c)
        return ('%d  %s  %s  %s:%d'):format(c.index, c.id, c.language or '', c.path or '', c.line or 0)
      end,
    }, function(choice)
      if not choice then return end
      args.case = choice.id
      guarded(go)()
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

local function replay_command(opts)
  local a = opts.fargs
  local args = { cases = a[1] and vim.fn.expand(a[1]), repos = a[2] and vim.fn.expand(a[2]) }
  if a[3] then args.case = a[3]:match('^%d+$') and tonumber(a[3]) or a[3] end
  ask_and_replay(args)
end

local function score_command()
  local answer = api().score()
  local keys = vim.tbl_keys(answer.metrics or {})
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = answer.metrics[k]
    parts[#parts + 1] = ('%s %s'):format(k, type(v) == 'number' and ('%.4g'):format(v) or tostring(v))
  end
  local said = ('case %s (%s, scored %s): %s'):format(answer.caseId, answer.benchmark or '?', answer.scored or '?',
    table.concat(parts, ' · '))
  local outcome = answer.outcome
  if type(outcome) ~= 'table' then return say(said) end
  -- An EvoCodeBench case: its tests ran on the body; a failure's output goes to a split.
  if outcome.passed then return say(('%s · %d test(s) passed'):format(said, #(outcome.tests or {}))) end
  local first = type(outcome.firstFailure) == 'string' and (': ' .. outcome.firstFailure) or ''
  say(('%s · %s%s'):format(said, outcome.status, first))
  local views = require('crossfile.views')
  views.render('tests', views.outcome_text(answer))
end

local function compare_command(opts)
  local views = require('crossfile.views')
  local function run(specs)
    busy(('comparing %s…'):format(table.concat(specs, ', ')))
    views.render('compare', views.compare_text(api().compare(specs)))
  end
  if #opts.fargs > 0 then return run(opts.fargs) end
  vim.ui.input({ prompt = 'Retrievers: ', default = 'none bm25 bm25-cceval-rg1 oracle' }, function(input)
    if not input or input == '' then return end
    guarded(run)(vim.split(input, '[%s,]+', { trimempty = true }))
  end)
end

local function context_command()
  local views = require('crossfile.views')
  views.render('context', views.context_text(api().context()))
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

-- :CrossfileCompare's completion: asks the server of the current buffer (else any running one),
-- waiting at most a second; nothing when no server runs.
local function complete_specs(lead)
  local c = client.for_buf(vim.api.nvim_get_current_buf()) or client.clients()[1]
  if not c or not c.initialized then return {} end
  local ok, list = pcall(client.execute, c, 'crossfile.retrievers', nil, nil, 1000)
  if not ok then return {} end
  return M.spec_completions(list, lead)
end

--- Defines the user commands (again, harmlessly, on each setup()).
function M.create()
  local cmd = vim.api.nvim_create_user_command
  cmd('CrossfileReplay', guarded(replay_command), {
    nargs = '*',
    complete = 'file',
    desc = 'crossfile: replay a benchmark case [CASES [REPOS [ID|INDEX]]]',
  })
  cmd('CrossfileNext', guarded(function() replayed(api().next()) end), { desc = 'crossfile: next case' })
  cmd('CrossfilePrev', guarded(function() replayed(api().prev()) end), { desc = 'crossfile: previous case' })
  cmd('CrossfileScore', guarded(score_command), { desc = 'crossfile: score the replayed case' })
  cmd('CrossfileCompare', guarded(compare_command), {
    nargs = '*',
    complete = complete_specs,
    desc = 'crossfile: compare retrievers at the cursor [SPEC ...]',
  })
  cmd('CrossfileContext', guarded(context_command), { desc = 'crossfile: what the last completion was made from' })
end

return M
