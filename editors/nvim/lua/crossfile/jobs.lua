-- crossfile.jobs: the server commands in flight. Each is sent without waiting; the editor stays
-- free while it runs. A job has a label, its start time and the last progress the server reported
-- under its token; `:Crossfile cancel` or <C-c> sends `$/cancelRequest` for it.

local client = require('crossfile.client')

local M = {}

--- The jobs in flight, oldest first: { serial, label, handle, started, token, progress, view }.
local running = {}
local serial = 0
local uv = vim.uv

-- While a job runs, <C-c> in normal mode cancels it (unless the user maps <C-c> there).
local interrupt = { mapped = false }

local function map_interrupt()
  if interrupt.mapped or vim.fn.maparg('<C-c>', 'n') ~= '' then return end
  vim.keymap.set('n', '<C-c>', function() M.cancel() end, { desc = 'crossfile: cancel the waiting command' })
  interrupt.mapped = true
end

local function unmap_interrupt()
  if not interrupt.mapped or #running > 0 then return end
  interrupt.mapped = false
  local m = vim.fn.maparg('<C-c>', 'n', false, true)
  if m.desc == 'crossfile: cancel the waiting command' then pcall(vim.keymap.del, 'n', '<C-c>') end
end

local function remove(job)
  for i, j in ipairs(running) do
    if j == job then
      table.remove(running, i)
      break
    end
  end
  unmap_interrupt()
end

local function notify_changed(job, state)
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'CrossfileJob',
    modeline = false,
    data = { serial = job.serial, label = job.label, state = state, progress = job.progress },
  })
end

--- Runs command `command` with `argument` on client `c`, without waiting. opts: { buf, label
--- (what the user is told: 'comparing none, bm25'), progress (true: the server reports under a
--- token of ours), timeout_ms }. `on_done(err, result, job)`: err is nil or a message; a cancelled
--- job has `job.cancelled` set. Returns the job.
function M.run(c, command, argument, opts, on_done)
  opts = opts or {}
  serial = serial + 1
  local job = { serial = serial, label = opts.label or command, started = uv.now() }
  if opts.progress then job.token = ('crossfile-nvim/%d/%d'):format(vim.fn.getpid(), serial) end
  running[#running + 1] = job
  map_interrupt()
  job.handle = client.execute(c, command, argument, { buf = opts.buf, token = job.token, timeout_ms = opts.timeout_ms },
    function(err, result)
      remove(job)
      job.done, job.err, job.result = true, err, result
      job.cancelled = job.handle and job.handle.cancelled or job.cancelled
      notify_changed(job, job.cancelled and 'cancelled' or err and 'failed' or 'done')
      on_done(err, result, job)
    end)
  notify_changed(job, 'started')
  return job
end

--- Cancels `job`, or every job in flight: `$/cancelRequest` for each. Returns how many it cancelled.
function M.cancel(job)
  local targets = job and { job } or vim.list_slice(running)
  local n = 0
  for _, j in ipairs(targets) do
    j.cancelled = true
    if j.handle and j.handle.cancel() then n = n + 1 end
  end
  return n
end

--- The jobs in flight, oldest first.
function M.list()
  return vim.list_slice(running)
end

--- Takes `$/progress` for our tokens (LspProgress): the job's progress becomes the report's
--- message (and percentage).
function M.on_progress(ev)
  local params = ev.data and ev.data.params or {}
  for _, job in ipairs(running) do
    if job.token and params.token == job.token then
      local value = params.value or {}
      local text = value.message or value.title or ''
      if value.percentage then text = ('%s (%d%%)'):format(text, value.percentage) end
      job.progress = text
      notify_changed(job, 'progress')
    end
  end
end

--- One line for a statusline: the oldest job, its time so far and progress, and how many more.
function M.status()
  local job = running[1]
  if not job then return nil end
  local text = ('%s… %d s'):format(job.label, math.floor((uv.now() - job.started) / 1000))
  if job.progress and job.progress ~= '' then text = text .. ' · ' .. job.progress end
  if #running > 1 then text = text .. (' (+%d)'):format(#running - 1) end
  return text
end

return M
