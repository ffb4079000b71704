"""Screenshots of the plugin in Neovim's real terminal UI, for docs/editors.md and as test artefacts.

    python test/screenshot.py OUT_DIR     (environment as test/run sets it, plus CROSSFILE_CHROMIUM)

Runs `nvim` (not headless: its TUI) in a pseudo-terminal of 150x40 cells, emulated by pyte, with
the plugin set up against the real server and the embedded model. It replays the first DEV case,
waits for the ghost text (the Lua API says when), and saves the screen as nvim-ghost.png; then
`:Crossfile compare none bm25` (the plugin/ file defines it at startup), waited for, and
nvim-compare.png; then an `inproject` case that `crossfile bench mine-history` mines from a
two-commit repository made here, its category in the status line and the message,
nvim-history.png; last, with the arena on (two arms), a function typed in a small workspace until
the battle shows both suggestions, nvim-arena.png. The screen becomes an HTML page of coloured
cells that Debian's Chromium photographs. Exits non-zero when a step does not happen in time.
"""

import html
import json
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import time

import pyte

COLS, ROWS = 150, 40
STEP_SECONDS = int(os.environ.get('CROSSFILE_SCREENSHOT_STEP_S', '240'))
DEFAULT_FG, DEFAULT_BG = "e0e2ea", "14161b"  # Neovim's default dark scheme (NvimLightGrey2 on NvimDarkGrey2)


class Terminal(pyte.Screen):
    """A pyte screen that answers the terminal's queries (device attributes, cursor position)."""

    def __init__(self, fd):
        super().__init__(COLS, ROWS)
        self.fd = fd

    def write_process_input(self, data):
        os.write(self.fd, data.encode())


def lua_string(s):
    return json.dumps(s)  # a JSON string is a valid Lua string literal for these paths


def init_lua(plugin, marks, settings, arena, arena_file, history):
    env = os.environ
    return f"""
vim.opt.rtp:prepend({lua_string(plugin)})
vim.o.termguicolors = true
vim.o.number = true
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. 'I'
local cf = require('crossfile')
local settings = vim.json.decode({lua_string(json.dumps(settings))})
cf.setup({{ cmd = {{ {lua_string(env['CROSSFILE_BIN'])}, 'serve' }}, settings = settings }})
vim.o.statusline = " %f  %=%{{v:lua.require'crossfile'.status()}} "
local function mark(name) local f = assert(io.open({lua_string(marks)} .. '/' .. name, 'w')); f:close() end
local function fail(err)
  local f = assert(io.open({lua_string(marks)} .. '/error', 'w')); f:write(tostring(err)); f:close()
end
-- The keys are typed once this callback returns: a timer waits for the battle.
local function arena_step()
  vim.cmd('only')
  cf.set_settings(vim.tbl_deep_extend('force', settings, vim.json.decode({lua_string(json.dumps(arena))})))
  vim.cmd.edit({lua_string(arena_file)})
  -- The lines typed as they should read: no indent added.
  vim.bo.autoindent, vim.bo.smartindent, vim.bo.indentexpr = false, false, ''
  assert(vim.wait({STEP_SECONDS * 1000}, function()
    local c = vim.lsp.get_clients({{ name = 'crossfile', bufnr = 0 }})[1]
    return c ~= nil and c.initialized
  end, 100), 'no server for the arena workspace')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('Go<CR>def perimeter(box):<CR>    return ', true, false, true), 'nt', false)
  local deadline = vim.uv.now() + {STEP_SECONDS * 1000}
  local timer = assert(vim.uv.new_timer())
  timer:start(200, 200, vim.schedule_wrap(function()
    if cf.battle() then
      timer:stop()
      vim.api.nvim_echo({{ {{ '' }} }}, false, {{}})
      vim.cmd.redraw({{ bang = true }})
      mark('arena')
    elseif vim.uv.now() > deadline then
      timer:stop()
      fail('no battle')
    end
  end))
end
vim.schedule(function()
  local ok, err = pcall(function()
    cf.replay_sync({{ cases = {lua_string(env['CROSSFILE_BENCH_CASES'])}, repos = {lua_string(env['CROSSFILE_BENCH_REPOS'])}, case = 0 }})
    assert(vim.wait({STEP_SECONDS * 1000}, function() return cf.suggestion(0) ~= nil end, 100), 'no ghost text')
    vim.api.nvim_echo({{ {{ '' }} }}, false, {{}})
    vim.cmd.redraw({{ bang = true }})
    mark('ghost')
    vim.wait(1500)
    vim.cmd('Crossfile compare none bm25')
    local views = require('crossfile.views')
    assert(vim.wait({STEP_SECONDS * 1000}, function() return not views.is_pending('compare') end, 100), 'no compare')
    vim.cmd.redraw({{ bang = true }})
    mark('compare')
    vim.wait(1500)
    -- A case mined from history: the status line and the message name its line's category.
    vim.cmd('only')
    cf.replay_sync({{ cases = {lua_string(history['cases'])}, repos = {lua_string(history['repos'])}, case = {history['case']} }})
    assert(vim.wait({STEP_SECONDS * 1000}, function() return cf.suggestion(0) ~= nil end, 100), 'no ghost text at the history case')
    vim.cmd.redraw({{ bang = true }})
    mark('history')
    vim.wait(1500)
    arena_step()
  end)
  if not ok then fail(err) end
end)
"""


def colour(c, default):
    if c == "default":
        return default
    if len(c) == 6 and all(ch in "0123456789abcdefABCDEF" for ch in c):
        return c
    return {"black": "000000", "red": "cd3131", "green": "0dbc79", "brown": "e5e510", "blue": "2472c8",
            "magenta": "bc3fbc", "cyan": "11a8cd", "white": "e5e5e5"}.get(c, default)


def page(screen):
    rows = []
    for y in range(ROWS):
        line = screen.buffer[y]
        spans = []
        for x in range(COLS):
            ch = line[x]
            fg, bg = colour(ch.fg, DEFAULT_FG), colour(ch.bg, DEFAULT_BG)
            if ch.reverse:
                fg, bg = bg, fg
            if (x, y) == (screen.cursor.x, screen.cursor.y) and y < ROWS - 1:
                fg, bg = DEFAULT_BG, DEFAULT_FG
            style = f"color:#{fg};background:#{bg}"
            if ch.bold:
                style += ";font-weight:bold"
            if ch.italics:
                style += ";font-style:italic"
            spans.append(f'<span style="{style}">{html.escape(ch.data or " ")}</span>')
        rows.append(f'<div>{"".join(spans)}</div>')
    body = "".join(rows)
    return f"""<!doctype html><meta charset="utf-8"><style>
html,body{{margin:0;background:#{DEFAULT_BG}}}
pre{{margin:0;padding:6px;font:14px/18px 'DejaVu Sans Mono',monospace}}
pre div{{height:18px;white-space:pre}}
pre span{{display:inline-block;height:18px;vertical-align:top}}
</style><pre>{body}</pre>"""


def photograph(screen, out_png, tmp):
    page_file = os.path.join(tmp, os.path.basename(out_png) + ".html")
    with open(page_file, "w", encoding="utf-8") as f:
        f.write(page(screen))
    width, height = int(COLS * 8.43) + 14, ROWS * 18 + 12  # a DejaVu Sans Mono cell at 14 px: 8.43 x 18
    subprocess.run(
        [os.environ.get("CROSSFILE_CHROMIUM", "chromium"), "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", f"--window-size={width},{height}", f"--screenshot={out_png}", f"file://{page_file}"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                    "-c", "init.defaultBranch=main", *args], cwd=repo, check=True, capture_output=True)


def history(tmp):
    """Cases mined by `bench mine-history` from a two-commit repository: the first the parent's
    tree (a ledger class), the second adding a report that uses it. The case shown is an
    `inproject` line."""
    repo = os.path.join(tmp, "ledger")
    files = [{"pkg/ledger.py": "class Ledger:\n    def __init__(self):\n        self.entries = []\n\n"
                               "    def add(self, amount):\n        self.entries.append(amount)\n\n"
                               "    def total(self):\n        return sum(self.entries)\n"},
             {"pkg/report.py": "from pkg.ledger import Ledger\n\n\ndef monthly(amounts):\n"
                               "    ledger = Ledger()\n    for amount in amounts:\n        ledger.add(amount)\n"
                               "    total = ledger.total()\n    print(f\"total: {total}\")\n    return total\n"}]
    os.makedirs(repo)
    git(repo, "init", "-q")
    for commit in files:
        for path, text in commit.items():
            os.makedirs(os.path.dirname(os.path.join(repo, path)), exist_ok=True)
            with open(os.path.join(repo, path), "w", encoding="utf-8") as f:
                f.write(text)
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "next")
    cases, repos = os.path.join(tmp, "history.jsonl"), os.path.join(tmp, "history-repos")
    subprocess.run([os.environ["CROSSFILE_BIN"], "bench", "mine-history", repo, "--out", cases, "--repos-dir", repos,
                    "--min-lines", "5", "--json"], check=True, capture_output=True)
    with open(cases, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    case = next(i for i, r in enumerate(records) if r["metadata"]["category"] == "inproject")
    return {"cases": cases, "repos": repos, "case": case}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    plugin = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp(prefix="crossfile-nvim-shot.")
    marks = os.path.join(tmp, "marks")
    os.makedirs(marks)
    settings = {"index": {"cache_dir": os.path.join(tmp, "cache")},
                "model": {"path": os.environ["CROSSFILE_MODEL"], "n_ctx": 1024},
                "prompt": {"max_new_tokens": 16}}
    # The arena's workspace: two small Python files; arms whose suggestions differ (3 tokens, 12).
    workspace = os.path.join(tmp, "arena")
    os.makedirs(workspace)
    files = {"app.py": "from shapes import Box\n\ndef area(box):\n    return box.width * box.height\n",
             "shapes.py": "class Box:\n    def __init__(self, width, height):\n        self.width = width\n"
                          "        self.height = height\n",
             "pyproject.toml": "[project]\nname = \"arena\"\n"}
    for name, text in files.items():
        with open(os.path.join(workspace, name), "w", encoding="utf-8") as f:
            f.write(text)
    arena = {"arena": {"enabled": True, "seed": 7, "votes": os.path.join(tmp, "votes.jsonl"),
                       "arms": [{"retriever": "none", "prompt.max_new_tokens": 3},
                                {"retriever": "bm25", "prompt.max_new_tokens": 12}]}}
    init = os.path.join(tmp, "init.lua")
    with open(init, "w", encoding="utf-8") as f:
        f.write(init_lua(plugin, marks, settings, arena, os.path.join(workspace, "app.py"), history(tmp)))

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor")
    nvim = subprocess.Popen([os.environ["CROSSFILE_NVIM"], "-u", init, "-i", "NONE", "-n"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True, cwd=tmp)
    os.close(slave)
    screen = Terminal(master)
    stream = pyte.ByteStream(screen)

    def pump(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    stream.feed(os.read(master, 65536))
                except OSError:
                    return

    def wait_for(name):
        deadline = time.monotonic() + STEP_SECONDS
        while time.monotonic() < deadline:
            pump(0.2)
            if os.path.exists(os.path.join(marks, "error")):
                raise SystemExit("screenshot: " + open(os.path.join(marks, "error"), encoding="utf-8").read())
            if os.path.exists(os.path.join(marks, name)):
                pump(0.5)  # the redraw that follows the mark
                return
        screen_text = "\n".join(line.rstrip() for line in screen.display)
        raise SystemExit(f"screenshot: no {name} within {STEP_SECONDS} s; the screen:\n{screen_text}")

    try:
        wait_for("ghost")
        photograph(screen, os.path.join(out, "nvim-ghost.png"), tmp)
        wait_for("compare")
        photograph(screen, os.path.join(out, "nvim-compare.png"), tmp)
        wait_for("history")
        photograph(screen, os.path.join(out, "nvim-history.png"), tmp)
        wait_for("arena")
        photograph(screen, os.path.join(out, "nvim-arena.png"), tmp)
    finally:
        os.killpg(nvim.pid, 9)
        nvim.wait()
        # The servers outlive Neovim a moment: one ending its session records the arena's pending
        # battle (votes.jsonl in tmp) as it exits.
        for _ in range(20):
            if subprocess.run(["rm", "-rf", tmp], check=False, stderr=subprocess.DEVNULL).returncode == 0:
                break
            time.sleep(0.5)
    print(f"screenshot: {out}/nvim-ghost.png {out}/nvim-compare.png {out}/nvim-history.png {out}/nvim-arena.png",
          file=sys.stderr)


if __name__ == "__main__":
    main()
