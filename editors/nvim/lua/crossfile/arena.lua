-- crossfile.arena: blind paired battles. With `arena.enabled`, the server answers an inline
-- completion with two items, in the order to show them, whose `command` is crossfile.arenaVote:
-- this module tells such a battle from an answer, sends the user's vote (crossfile.arenaVote) and
-- asks for the last battle revealed (crossfile.arenaReveal). Which arm made which suggestion is
-- the server's alone until the reveal; the client draws, scores and records nothing.

local client = require('crossfile.client')

local M = {}

M.vote_command = 'crossfile.arenaVote'
M.reveal_command = 'crossfile.arenaReveal'

--- The last vote sent and its answer: { battle, pick (1, 2 or nil), err?, recorded?, votes? }.
M.last_vote = nil

local function text_of(item)
  local text = item.insertText
  if type(text) == 'table' then text = text.value end
  return type(text) == 'string' and text or nil
end

--- The battle an inline completion answer is: { id, texts = {1's, 2's}, ranges = {1's?, 2's?} },
--- or nil when it is not one (its items carry no crossfile.arenaVote command).
function M.from_answer(result)
  if type(result) ~= 'table' then return nil end
  local items = result.items or result
  if type(items) ~= 'table' or #items < 2 then return nil end
  local battle = { texts = {}, ranges = {} }
  for i = 1, 2 do
    local item = items[i]
    local command = type(item) == 'table' and item.command or nil
    if type(command) ~= 'table' or command.command ~= M.vote_command then return nil end
    local argument = type(command.arguments) == 'table' and command.arguments[1] or nil
    if type(argument) ~= 'table' or argument.battle == nil or argument.battle == vim.NIL then return nil end
    if battle.id ~= nil and argument.battle ~= battle.id then return nil end
    battle.id = argument.battle
    local text = text_of(item)
    if not text then return nil end
    battle.texts[i] = text
    battle.ranges[i] = type(item.range) == 'table' and item.range or nil
  end
  return battle
end

--- Sends the vote on battle `id` of `buf`'s server: `pick` 1 or 2 (the suggestion shown first or
--- second was accepted) or nil (dismissed: no choice). Does not wait; `on_done(err, answer)`
--- (`{recorded, votes}`) is optional. Fires `User CrossfileArenaVote` with the outcome. Returns
--- the request's handle, or nil when no server is attached.
function M.vote(buf, id, pick, on_done)
  local c = client.for_buf(buf)
  if not c then return nil end
  local argument = { battle = id, pick = pick == nil and vim.NIL or pick }
  return client.execute(c, M.vote_command, argument, { buf = buf }, function(err, answer)
    local outcome = { buf = buf, battle = id, pick = pick, err = err }
    if type(answer) == 'table' then
      outcome.recorded = answer.recorded == true
      outcome.votes = type(answer.votes) == 'string' and answer.votes or nil
    end
    M.last_vote = outcome
    if err then vim.notify(err, vim.log.levels.WARN) end
    vim.api.nvim_exec_autocmds('User', { pattern = 'CrossfileArenaVote', modeline = false, data = outcome })
    if on_done then on_done(err, answer) end
  end)
end

--- The server of a reveal: the current buffer's, else any running one.
function M.server(buf)
  local c = client.for_buf(buf) or client.clients()[1]
  if not c then error('crossfile: no crossfile server is running', 0) end
  return c
end

local function arm_of(answer, n)
  local arm = type(answer.arms) == 'table' and answer.arms[n] or nil
  return type(arm) == 'string' and arm or vim.inspect(arm)
end

--- One line saying a crossfile.arenaReveal answer: `battle 17: 1 = bm25, 2 = none; picked 2 (none)`.
function M.summary(answer)
  local picked = answer.picked
  local said = (picked == 1 or picked == 2) and ('picked %d (%s)'):format(picked, arm_of(answer, picked))
    or 'no choice'
  return ('battle %s: 1 = %s, 2 = %s; %s'):format(tostring(answer.battle), arm_of(answer, 1), arm_of(answer, 2), said)
end

return M
