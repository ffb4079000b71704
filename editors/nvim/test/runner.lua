-- Runs the busted specs inside Neovim: nvim --headless -u NONE -l test/runner.lua [BUSTED ARGS] spec/
-- Debian's lua-busted (Lua 5.1 modules) is put on the package paths; the output is one line per
-- test and a last line `N passed, N failed` (errors outside tests count as failed).

local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p')))
local plugin = vim.fs.dirname(here)

package.path = table.concat({ '/usr/share/lua/5.1/?.lua', '/usr/share/lua/5.1/?/init.lua', package.path }, ';')
package.cpath = table.concat({ '/usr/lib/x86_64-linux-gnu/lua/5.1/?.so', '/usr/lib/lua/5.1/?.so', package.cpath }, ';')
vim.opt.rtp:prepend(plugin)
package.path = plugin .. '/spec/?.lua;' .. package.path

-- The output handler, loaded by busted as `-o crossfile_lines`.
package.preload['crossfile_lines'] = function()
  return function(options)
    local busted = require('busted')
    local handler = require('busted.outputHandlers.base')()
    local started = {}
    local function out(line)
      io.stdout:write(line .. '\n')
      io.stdout:flush()
    end
    local function clock() return vim.uv.hrtime() / 1e9 end
    local function message(t)
      local m = t and t.message
      if type(m) ~= 'string' then m = vim.inspect(m) end
      local where = t and t.trace and t.trace.short_src and (t.trace.short_src .. ':' .. (t.trace.currentline or '?')) or ''
      return (m:gsub('\n', '\n    ')) .. (where ~= '' and ('\n    at ' .. where) or '')
    end
    handler.testStart = function(element)
      started[handler.getFullName(element)] = clock()
      return nil, true
    end
    handler.testEnd = function(element, _, status)
      local name = handler.getFullName(element)
      local took = ('%.1fs'):format(clock() - (started[name] or clock()))
      if status == 'success' then
        out(('ok    %s (%s)'):format(name, took))
      elseif status == 'pending' then
        out(('skip  %s (%s)'):format(name, took))
      else
        local list = status == 'failure' and handler.failures or handler.errors
        out(('FAIL  %s (%s)\n    %s'):format(name, took, message(list[#list])))
      end
      return nil, true
    end
    handler.error = function(element, _, msg)
      if element.descriptor ~= 'it' then
        out(('ERROR %s: %s'):format(element.name or element.descriptor or '?', tostring(msg)))
      end
      return nil, true
    end
    handler.suiteEnd = function()
      if handler.pendingsCount > 0 then out(('%d pending'):format(handler.pendingsCount)) end
      out(('%d passed, %d failed'):format(handler.successesCount, handler.failuresCount + handler.errorsCount))
      return nil, true
    end
    busted.subscribe({ 'test', 'start' }, handler.testStart, { predicate = handler.cancelOnPending })
    busted.subscribe({ 'test', 'end' }, handler.testEnd, { predicate = handler.cancelOnPending })
    busted.subscribe({ 'error' }, handler.error)
    busted.subscribe({ 'failure' }, handler.error)
    busted.subscribe({ 'suite', 'end' }, handler.suiteEnd)
    return handler
  end
end

-- busted reads its command line from `arg`: the output handler goes first unless one is given.
local given = false
for _, a in ipairs(arg) do
  if a == '-o' or a:match('^%-%-output') then given = true end
end
if not given then table.insert(arg, 1, '--output=crossfile_lines') end

require('busted.runner')({ standalone = false })
