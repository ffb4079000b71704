// The extension end to end in code-server under headless Chromium, with the real server and the
// embedded model (test/run starts everything and passes it in the environment). One line per test
// and a last line `N passed, N failed`; exit 1 on any failure.
import { chromium } from 'playwright-core';
import { cpSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`e2e: ${name} is not set (run test/run)`);
  return v;
};
const URL = env('E2E_URL');
const WORKSPACE = env('E2E_WORKSPACE');
const CASES = env('E2E_CASES');
const REPOS = env('E2E_REPOS');
const CASE_ID = env('E2E_CASE_ID');
const CLI_ES = Number(env('E2E_CLI_ES'));
const CLI_SUGGESTION = env('E2E_CLI_SUGGESTION');
const ART = env('E2E_ARTIFACTS');
const EVO_CASES = env('E2E_EVO_CASES');
const EVO_CASE_ID = env('E2E_EVO_CASE_ID');
const USER_SETTINGS = env('E2E_USER_SETTINGS');
const MACHINE_SETTINGS = env('E2E_MACHINE_SETTINGS');
const EXTENSIONS = env('E2E_EXTENSIONS');
const TMP = env('E2E_TMP');
mkdirSync(ART, { recursive: true });

const COMPLETION_MS = 90_000;
const browser = await chromium.launch({ executablePath: env('CROSSFILE_CHROMIUM'), headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
const shot = (name) => page.screenshot({ path: join(ART, `${name}.png`) });
// The window's console (VS Code's own log lines among it), kept as an artifact.
const consoleLines = [];
page.on('console', (m) => consoleLines.push(`${new Date().toISOString()} ${m.type()} ${m.text()}`));
// What the window showed of the server's work-done progress (`$/progress`), recorded in the page
// as it happens (indexing lasts less than a second here).
await page.addInitScript(() => {
  window.__progress = [];
  new MutationObserver((records) => {
    for (const r of records) {
      for (const node of r.type === 'characterData' ? [r.target] : r.addedNodes) {
        const text = node.textContent ?? '';
        if (!/indexing/.test(text) || text.length > 300) continue;
        const where = (node.nodeType === 1 ? node : node.parentElement)?.closest('[id]')?.id ?? '';
        window.__progress.push(`${where}: ${text}`);
      }
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
});

async function palette(title) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title.split(': ').pop() }).first().waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
}

/**
 * Types into the open QuickPick and accepts the row whose label is exactly `label` (default: the
 * typed text). With `title`, first waits for the QuickPick of that title (the previous one may
 * still be closing).
 */
async function pick(text, label = text, title = undefined) {
  if (title) await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor({ state: 'visible' });
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(text);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`) }) }).first();
  await row.waitFor({ state: 'visible', timeout: 60_000 });
  await row.click();
}

async function ghostText(timeout = COMPLETION_MS) {
  const ghost = page.locator('.ghost-text-decoration, .ghost-text-decoration-preview').first();
  await ghost.waitFor({ state: 'visible', timeout });
  const parts = await page.locator('.ghost-text-decoration, .ghost-text-decoration-preview').allTextContents();
  return parts.join('').replace(/\u00a0/g, ' ');
}

async function statusText() {
  const item = page.locator('.statusbar-item', { hasText: 'crossfile' }).first();
  if ((await item.count()) === 0) return '';
  return ((await item.textContent()) ?? '').replace(/\u00a0/g, ' ').trim();
}

async function waitStatus(re, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const text = await statusText();
    if (re.test(text)) return text;
    await page.waitForTimeout(200);
  }
  throw new Error(`status bar "${await statusText()}" never matched ${re}`);
}

/** The frame of a webview whose document holds `selector`. */
async function webviewFrame(selector) {
  const deadline = Date.now() + COMPLETION_MS;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (await frame.locator(selector).count().catch(() => 0)) return frame;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no webview shows ${selector}`);
}

const escapeRe = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function check(cond, message) {
  if (!cond) throw new Error(message);
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('opens the workspace; typing alone shows ghost text from the server (the suggest list open first), Tab accepts it', async () => {
  await page.goto(`${URL}/?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.keyboard.press('Control+P');
  await pick('src/click/core.py:1275', 'core.py');
  await page.locator('.monaco-editor .view-lines').first().waitFor();
  // Opening a Python file activates the extension; type once its server has answered `initialize`.
  await waitStatus(/^crossfile$/);
  await page.keyboard.press('End');
  // Typing only: no Trigger Inline Suggestion. VS Code's word list opens at once; the extension
  // closes it when the server's answer would be hidden behind it (inline.ts).
  await page.keyboard.type('w');
  const typed = 'w';
  const listed = await page.locator('.suggest-widget.visible').waitFor({ timeout: 3_000 }).then(() => true, () => false);
  console.log(`      the suggest list ${listed ? 'opened' : 'did not open'} on typing`);
  // The first keystroke after activation: VS Code 1.100 sometimes starts no inline fetch for it
  // (its own log says so); the extension then asks (unasked.ts), so it gets ghost text too.
  const ghost = await ghostText(30_000).catch(() => undefined);
  const fetched = consoleLines.filter((l) => l.includes('InlineCompletions.fetch') && l.includes('"kind":"start"')).length;
  console.log(`      VS Code started ${fetched} inline fetch(es) for it`);
  check(ghost !== undefined, 'no ghost text after the first keystroke');
  check(!(await page.locator('.suggest-widget.visible').count()), 'the suggest list is still open over the ghost text');
  check(ghost.length > 0, 'empty ghost text');
  await shot('ghost-text');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Control+S');
  const file = join(WORKSPACE, 'src', 'click', 'core.py');
  const deadline = Date.now() + 10_000;
  let line = '';
  while (Date.now() < deadline) {
    line = readFileSync(file, 'utf8').split('\n')[1274];
    // undefined: read while the editor writes the file.
    if (line !== undefined && line !== '        formatter.') break;
    await page.waitForTimeout(200);
  }
  check(line === `        formatter.${typed}${ghost}`, `line 1275 is ${JSON.stringify(line)}, want formatter.${typed} + ${JSON.stringify(ghost)}`);
  const status = await waitStatus(/crossfile · smollm2-135m · bm25-cceval-rg1 · \d+ ms/);
  check(status.startsWith('crossfile'), status);
});

test("Show Status shows what the server resolved: the binary the extension carries, the folder's index ready, the cache directory; the tooltip too", async () => {
  await palette('Crossfile: Show Status');
  const output = page.locator('.part.panel .view-lines', { hasText: 'index ready' }).first();
  await output.waitFor({ timeout: 30_000 });
  const text = ((await output.textContent()) ?? '').replace(/\u00a0/g, ' ');
  check(text.includes(`folder click: ${WORKSPACE}: index ready`), `the status says ${JSON.stringify(text)}`);
  // test/run's crossfile.toml puts the cache beside the workspace and names the small model.
  check(new RegExp(`cache:\\s+${escapeRe(join(dirname(WORKSPACE), 'cache'))}`).test(text), `no cache directory in ${JSON.stringify(text)}`);
  check(/model:\s+smollm2-135m \(catalogue smollm2-135m, [^)]*\): loaded/.test(text), `the model is not loaded: ${JSON.stringify(text)}`);
  check(/retriever:\s+bm25-cceval-rg1/.test(text), `no retriever in ${JSON.stringify(text)}`);
  // test/run sets no crossfile.serverPath and leaves crossfile off PATH: the server started is the
  // one the VSIX carries, in the installed extension's folder, and it is the extension's release.
  const carried = new RegExp(`server:\\s+crossfile [0-9.]+, the extension's release, ${escapeRe(EXTENSIONS)}/[^ ]+/server/crossfile \\(carried by the extension\\)`);
  check(carried.test(text), `the server is not the one the extension carries: ${JSON.stringify(text)}`);
  await shot('status');
  // The status item's tooltip shows the same report.
  await page.locator('.statusbar-item', { hasText: 'crossfile' }).first().hover();
  await page.locator('.monaco-hover', { hasText: 'index ready' }).first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.mouse.move(800, 400);
  // The panel is closed again, as the tests after this one expect the window.
  await palette('View: Hide Panel');
});

test('Replay Case opens the case at its cursor; accepted and scored, the ES equals bench run', async () => {
  await palette('Crossfile: Replay Case');
  await pick(CASES, CASES, 'cases file');
  await pick(REPOS, REPOS, 'repositories folder');
  await pick(CASE_ID, CASE_ID, 'case to replay');
  const ghost = await ghostText();
  check(ghost === CLI_SUGGESTION.split('\n')[0], `ghost text ${JSON.stringify(ghost)} != bench run's ${JSON.stringify(CLI_SUGGESTION)}`);
  await shot('replay-ghost');
  await page.keyboard.press('Tab');
  await page.waitForTimeout(300);
  await palette('Crossfile: Score');
  const status = await waitStatus(/ES \d/);
  const es = Number(/ES (\d+(?:\.\d+)?)/.exec(status)[1]);
  check(es === Number(CLI_ES.toFixed(1)), `status bar ES ${es} != bench run ES ${CLI_ES}`);
  check(/case 1\/\d+/.test(status), status);
  const note = page.locator('.notification-toast', { hasText: 'scored raw' }).first();
  await note.waitFor({ timeout: 20_000 });
  await shot('score');
});

test('Next Case moves on; Compare Retrievers shows one column per retriever with the diff', async () => {
  await palette('Crossfile: Next Case');
  await waitStatus(/case 2\//);
  await ghostText();
  await page.keyboard.press('Escape');
  await palette('Crossfile: Compare Retrievers');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().waitFor({ state: 'visible' });
  // The items are the server's specs, each with what it needs (no embeddings endpoint here).
  check((await rows.filter({ hasText: 'needs an embeddings endpoint' }).count()) === 1, 'no row says dense needs an embeddings endpoint');
  await page.keyboard.press('Enter');
  const frame = await webviewFrame('.column');
  const columns = await frame.locator('.column').evaluateAll((els) => els.map((e) => e.getAttribute('data-retriever')));
  check(JSON.stringify(columns) === JSON.stringify(['none', 'bm25']), `columns ${JSON.stringify(columns)}`);
  check((await frame.locator('pre.reference').count()) === 1, 'no reference shown at the case cursor');
  check((await frame.locator('.column pre.diff').count()) === 2, 'a column has no diff against the reference');
  check((await frame.locator('.column[data-retriever="bm25"] a.chunk').count()) > 0, 'bm25 shows no chunk');
  check((await frame.locator('.column td.metric[data-metric="es"]').count()) === 2, 'a column has no ES');
  await shot('compare');
});

test('Previous Case goes back to the first case: its cursor, its ghost text again', async () => {
  await page.keyboard.press('Escape');
  await palette('Crossfile: Previous Case');
  await waitStatus(/case 1\//);
  const ghost = await ghostText();
  check(ghost === CLI_SUGGESTION.split('\n')[0], `ghost text ${JSON.stringify(ghost)} != bench run's ${JSON.stringify(CLI_SUGGESTION)}`);
});

test('Show Context shows the chunks and the exact prompt of the last completion', async () => {
  await page.keyboard.press('Escape');
  await palette('Crossfile: Show Context');
  const frame = await webviewFrame('pre.prompt');
  const prompt = await frame.locator('pre.prompt').textContent();
  check(prompt.length > 100, `prompt is ${prompt.length} characters`);
  check((await frame.locator('.chunks a.chunk, .chunks .chunk').count()) > 0, 'no chunk listed');
  await shot('context');
  // The next completion updates the open view in place: the same page (a mark set in it stays),
  // scrolled where the reader left it.
  const scrolled = await frame.evaluate(() => {
    window.__mark = true;
    window.scrollTo(0, 150);
    return window.scrollY;
  });
  check(scrolled > 0, 'the context view does not scroll');
  await page.keyboard.press('Escape');
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await frame.waitForFunction(() => Number(document.getElementById('content')?.dataset.renders ?? 0) >= 1, null, { timeout: COMPLETION_MS });
  const after = await frame.evaluate(() => ({ mark: window.__mark === true, y: window.scrollY }));
  check(after.mark, 'the context view was reloaded, not updated in place');
  check(after.y === scrolled, `the context view scrolled from ${scrolled} to ${after.y}`);
});

test('Compare again reuses its panel', async () => {
  await page.keyboard.press('Escape');
  await palette('Crossfile: Compare Retrievers');
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
  // Two completions: under load this takes long.
  const comparing = page.locator('.notification-toast', { hasText: 'comparing' }).first();
  await comparing.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => undefined);
  await comparing.waitFor({ state: 'hidden', timeout: 2 * COMPLETION_MS });
  await webviewFrame('.column');
  const tabs = await page.locator('.tabs-container .tab', { hasText: 'crossfile: compare' }).count();
  check(tabs === 1, `${tabs} compare tabs`);
});

/**
 * Sets user settings as a user does while VS Code runs: Preferences: Open User Settings (JSON),
 * the whole text replaced, saved, the editor closed.
 */
async function setUserSettings(changes) {
  // One line: the editor indents inserted newlines.
  const text = JSON.stringify({ ...JSON.parse(readFileSync(USER_SETTINGS, 'utf8')), ...changes });
  await palette('Preferences: Open User Settings (JSON)');
  await page.locator('.tabs-container .tab.active', { hasText: 'settings.json' }).waitFor({ timeout: 20_000 });
  await page.locator('.monaco-editor.focused').waitFor({ timeout: 10_000 });
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
  // What the editor closed by itself (brackets, quotes) follows the cursor: removed.
  await page.keyboard.press('Control+Shift+End');
  await page.keyboard.press('Delete');
  await page.keyboard.press('Control+S');
  const saved = () => {
    try {
      const now = JSON.parse(readFileSync(USER_SETTINGS, 'utf8'));
      return Object.entries(changes).every(([k, v]) => JSON.stringify(now[k]) === JSON.stringify(v));
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !saved()) await page.waitForTimeout(200);
  check(saved(), `the user settings were not saved: ${readFileSync(USER_SETTINGS, 'utf8')}`);
  await palette('View: Close Editor');
}

/** Runs Show Status until its text matches `re` (the server resolves new settings on its own time). */
async function statusReport(re) {
  const deadline = Date.now() + 60_000;
  let text = '';
  while (Date.now() < deadline) {
    await palette('Crossfile: Show Status');
    const output = page.locator('.part.panel .view-lines', { hasText: 'retriever:' }).first();
    await output.waitFor({ timeout: 30_000 });
    text = ((await output.textContent()) ?? '').replace(/\u00a0/g, ' ');
    if (re.test(text)) break;
    await page.waitForTimeout(1_000);
  }
  await palette('View: Hide Panel');
  return text;
}

test('A settings change at runtime reaches the server: Show Status and the next completion use the new retriever', async () => {
  await page.keyboard.press('Escape');
  await setUserSettings({ 'crossfile.retrieve.retriever': 'jaccard' });
  const text = await statusReport(/retriever:\s+jaccard/);
  check(/retriever:\s+jaccard/.test(text), `Show Status says ${JSON.stringify(text)}`);
  await page.keyboard.press('Escape');
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await waitStatus(/· jaccard · \d+ ms/);
});

test("A bad setting shows the server's message naming it; the previous settings stay", async () => {
  await setUserSettings({ 'crossfile.retrieve.retriever': 'nonsense' });
  const note = page.locator('.notification-toast', { hasText: 'nonsense' }).first();
  await note.waitFor({ timeout: 30_000 });
  const said = ((await note.textContent()) ?? '').replace(/\u00a0/g, ' ');
  check(/retriever/.test(said), `the notification says ${JSON.stringify(said)}`);
  await shot('bad-setting');
  await setUserSettings({ 'crossfile.retrieve.retriever': 'bm25-cceval-rg1' });
  await statusReport(/retriever:\s+bm25-cceval-rg1/);
  await palette('Notifications: Clear All Notifications');
});

test('What an editor shows reaches the recent retriever: lines seen in one file are context in another (whose status bar names no replayed case)', async () => {
  await page.keyboard.press('Escape');
  await setUserSettings({ 'crossfile.retrieve.retriever': 'recent' });
  try {
    await recentLinesBecomeContext();
  } finally {
    // The next tests complete with the suite's retriever, whatever happened here.
    await page.keyboard.press('Escape');
    await setUserSettings({ 'crossfile.retrieve.retriever': 'bm25-cceval-rg1' });
    await statusReport(/retriever:\s+bm25-cceval-rg1/);
  }
});

async function recentLinesBecomeContext() {
  await statusReport(/retriever:\s+recent/);
  // Opening termui.py tells the server its first lines (didOpen); its lines around 700 reach the
  // ring only as what the editor shows (crossfile/recentLines, once scrolling rests).
  await page.keyboard.press('Control+P');
  await pick('src/click/termui.py:700', 'termui.py');
  await page.locator('.tabs-container .tab.active', { hasText: 'termui.py' }).waitFor({ timeout: 20_000 });
  await page.waitForTimeout(1_500);
  await page.keyboard.press('Control+P');
  await pick('src/click/core.py:1275', 'core.py');
  await page.locator('.tabs-container .tab.active', { hasText: 'core.py' }).waitFor({ timeout: 20_000 });
  await page.locator('.monaco-editor.focused').waitFor({ timeout: 10_000 });
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  // Asked for, not typed: what is tested is the context, not when VS Code asks. Asked again if
  // no answer came (VS Code may drop an invoked request when its word list opens; the extension
  // shares a request still running, so asking again never starts the work over).
  for (let ask = 1; ; ask += 1) {
    await palette('Trigger Inline Suggestion');
    try {
      await waitStatus(/· recent · \d+ ms/, 45_000);
      break;
    } catch (e) {
      if (ask === 3) throw e;
      console.log(`      no answer to Trigger Inline Suggestion (ask ${ask}): asking again`);
      await page.keyboard.press('Escape');
    }
  }
  // A file other than the replayed case's: the status bar names no case and no score.
  const shown = await statusText();
  check(!/case \d+\/\d+|ES \d/.test(shown), `the status bar in core.py still names the replayed case: "${shown}"`);
  await palette('Crossfile: Show Context');
  const frame = await webviewFrame('pre.prompt');
  // The chunks' first lines in termui.py, from the context view's labels (`path:first-last`).
  const firstLines = async () => (await frame.locator('.chunks .chunk').allTextContents())
    .map((label) => /termui\.py:(\d+)-\d+/.exec(label))
    .filter(Boolean)
    .map((m) => Number(m[1]));
  const deadline = Date.now() + 30_000;
  let seen = await firstLines();
  while (!seen.some((first) => first > 600) && Date.now() < deadline) {
    await page.waitForTimeout(500);
    seen = await firstLines();
  }
  await shot('recent-context');
  check(seen.some((first) => first > 600 && first <= 700), `termui.py chunks start at ${JSON.stringify(seen)}, none around the lines shown (700)`);
}

test('An EvoCodeBench case opens at its body; Score runs its tests on the typed body and shows the failure', async () => {
  await page.keyboard.press('Escape');
  await palette('Crossfile: Replay Case');
  await pick(EVO_CASES, EVO_CASES, 'cases file');
  await pick(REPOS, REPOS, 'repositories folder');
  await pick(EVO_CASE_ID, EVO_CASE_ID, 'case to replay');
  // A body is suggested at the cursor (after the requirement's docstring).
  await ghostText();
  await page.keyboard.press('Escape');
  await page.keyboard.type("raise RuntimeError('not the body')");
  await palette('Crossfile: Score');
  const note = page.locator('.notification-toast', { hasText: 'tests/test_' }).first();
  await note.waitFor({ timeout: 120_000 });
  const said = (await note.textContent()) ?? '';
  check(/pass@1 0/.test(said) && /fail/.test(said), `the notification says ${JSON.stringify(said)}`);
  await shot('evocodebench-score');
  await note.locator('.monaco-button', { hasText: 'Show Output' }).first().click();
  const output = page.locator('.part.panel .view-lines', { hasText: 'not the body' }).first();
  await output.waitFor({ timeout: 20_000 });
  await shot('evocodebench-output');
});

/** The arena view's two suggestions, whole (its `#suggestion-N pre`), once it shows a battle. */
async function arenaSuggestions() {
  const frame = await webviewFrame('#suggestion-2 pre');
  const text = async (n) => ((await frame.locator(`#suggestion-${n} pre`).first().textContent()) ?? '');
  return { frame, one: await text(1), two: await text(2) };
}

/**
 * The texts the focused editor shows on the lines below the cursor's, top down (null: no editor
 * has the focus).
 */
async function linesBelowCursor() {
  return page.evaluate(() => {
    const editor = document.querySelector('.monaco-editor.focused');
    const cursor = editor?.querySelector('.cursors-layer .cursor');
    if (!editor || !cursor) return null;
    const top = parseFloat(cursor.style.top);
    return [...editor.querySelectorAll('.view-lines .view-line')]
      .map((line) => ({ at: parseFloat(line.style.top), text: (line.textContent ?? '').replace(/\u00a0/g, ' ') }))
      .filter((line) => line.at > top)
      .sort((a, b) => a.at - b.at)
      .map((line) => line.text);
  });
}

/** The texts drawn by decorations in the editor (CSS content of `::before` and `::after`). */
async function decorationTexts() {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('.monaco-editor .view-line span')) {
      for (const pseudo of ['::before', '::after']) {
        const content = getComputedStyle(el, pseudo).content;
        if (content && content !== 'none' && content !== 'normal') out.push(content);
      }
    }
    return out;
  });
}

test('Arena: two blind suggestions, 1 as ghost text and both whole in the arena view, no line covered; Shift+Tab inserts 2 and records the vote; Reveal names both arms', async () => {
  // test/run sets the arms (the same model cut at 3 and at 12 tokens), the seed and the votes file.
  const votes = JSON.parse(readFileSync(MACHINE_SETTINGS, 'utf8'))['crossfile.arena.votes'];
  check(votes, 'test/run sets no crossfile.arena.votes');
  await page.keyboard.press('Escape');
  await setUserSettings({ 'crossfile.arena.enabled': true });
  try {
    const status = await statusReport(/arena:\s+on/);
    check(/arena:\s+on, arms .+; \d+ battles shown/.test(status), `Show Status says ${JSON.stringify(status)}`);
    // A comment on a new line in collect_usage_pieces, after line 1281 (`rv = [self.options_metavar]
    // …`): prose goes on, so the arm cut at 3 tokens and the one cut at 12 differ.
    const typed = '# Collect the usage';
    await page.keyboard.press('Control+P');
    await pick('src/click/core.py:1281', 'core.py');
    await page.locator('.monaco-editor .view-lines').first().waitFor();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type(typed);
    // A battle is two completions, finished before the answer.
    const one = await ghostText(2 * COMPLETION_MS);
    const shown = await arenaSuggestions();
    const two = shown.two;
    console.log(`      1: ${JSON.stringify(one)}, 2: ${JSON.stringify(two)}`);
    check(one.length > 0 && two.length > 0, 'a suggestion is empty');
    check(shown.one.startsWith(one), `the arena view's 1 is ${JSON.stringify(shown.one)}, the ghost text ${JSON.stringify(one)}`);
    // Nothing of suggestion 2 is drawn over the code: the lines below the cursor's show their own
    // text, and no decoration in the editor carries suggestion 2.
    const below = await linesBelowCursor();
    check(below !== null, 'the editor lost the focus to the arena view');
    const code = below.find((text) => text.trim()) ?? '';
    check(code && readFileSync(join(WORKSPACE, 'src', 'click', 'core.py'), 'utf8').includes(code.trim()),
      `the first line of code below the cursor shows ${JSON.stringify(code)}, not a line of core.py`);
    const drawn = await decorationTexts();
    const firstOf2 = two.split('\n')[0].trim();
    check(!drawn.some((c) => firstOf2 && c.includes(firstOf2)), `suggestion 2 is drawn in the editor: ${JSON.stringify(drawn)}`);
    check(drawn.some((c) => c === '"1"'), `no "1" after the cursor's line: ${JSON.stringify(drawn)}`);
    await shot('arena-battle');
    await page.keyboard.press('Shift+Tab');
    // The votes file gets the battle's line: suggestion 2 chosen.
    const deadline = Date.now() + 20_000;
    let lines = [];
    while (Date.now() < deadline) {
      try {
        lines = readFileSync(votes, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      } catch {
        lines = [];
      }
      if (lines.some((l) => l.choice !== null)) break;
      await page.waitForTimeout(200);
    }
    const chosen = lines.filter((l) => l.choice !== null);
    check(chosen.length === 1, `${chosen.length} votes with a choice in ${JSON.stringify(lines)}`);
    const vote = chosen[0];
    check(vote === lines[lines.length - 1], 'the vote is not the last line');
    // Battles superseded while typing are recorded as no choice.
    console.log(`      votes file: ${lines.length} line(s), arms ${JSON.stringify(vote.arms)}, first ${vote.first}, choice ${vote.choice}`);
    check(vote.choice === 1 - vote.first, `choice ${vote.choice} is not the suggestion shown second (first ${vote.first})`);
    check(vote.texts[vote.first].startsWith(one) && vote.texts[1 - vote.first].startsWith(two),
      `shown ${JSON.stringify([one, two])}, recorded ${JSON.stringify(vote.texts)} (first ${vote.first})`);
    // The arena view says the battle is over.
    await shown.frame.locator('#content', { hasText: 'You took 2.' }).waitFor({ timeout: 10_000 });
    // Suggestion 2 went into the document at the cursor (saved once it is there).
    const file = join(WORKSPACE, 'src', 'click', 'core.py');
    const want = new RegExp(`^\\s+${escapeRe(typed + vote.texts[1 - vote.first].split('\n')[0])}$`);
    let line = '';
    const saved = Date.now() + 10_000;
    while (Date.now() < saved) {
      await page.keyboard.press('Control+S');
      line = readFileSync(file, 'utf8').split('\n')[1281];
      if (want.test(line)) break;
      await page.waitForTimeout(300);
    }
    check(want.test(line), `line 1282 is ${JSON.stringify(line)}, want ${typed} + suggestion 2 ${JSON.stringify(vote.texts[1 - vote.first])}`);
    check(vote.texts[0] !== vote.texts[1], `the arms suggested the same text ${JSON.stringify(vote.texts[0])}`);
    // Reveal: which arm made 1 and 2, and the pick.
    await palette('Crossfile: Arena Reveal Last');
    const note = page.locator('.notification-toast', { hasText: 'crossfile arena' }).first();
    await note.waitFor({ timeout: 20_000 });
    const said = ((await note.textContent()) ?? '').replace(/\u00a0/g, ' ');
    check(said.includes(`1 = ${vote.arms[vote.first]}, 2 = ${vote.arms[1 - vote.first]}; picked 2`), `the reveal says ${JSON.stringify(said)}, the vote ${JSON.stringify(vote)}`);
    await page.locator('.part.panel .view-lines', { hasText: 'picked' }).first().waitFor({ timeout: 10_000 });
    await shot('arena-reveal');
    await palette('View: Hide Panel');
  } finally {
    await setUserSettings({ 'crossfile.arena.enabled': false });
    await palette('Notifications: Clear All Notifications');
  }
});

let passed = 0;
let failed = 0;
test("A repository's .vscode/settings.json cannot send code elsewhere: its backend kind and endpoint are ignored, nothing reaches the listener; its indexing shows progress", async () => {
  // A listener where the repository's settings point the backend; every connection is counted.
  const connections = [];
  const listener = createServer((socket) => {
    connections.push(Date.now());
    socket.destroy();
  });
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = listener.address().port;
  try {
    // The repository: a copy of the workspace (line 1275 cut after `formatter.` again), with
    // settings that point the backend at the listener.
    const repo = join(TMP, 'cloned-repo');
    cpSync(WORKSPACE, repo, { recursive: true });
    const core = join(repo, 'src', 'click', 'core.py');
    const lines = readFileSync(core, 'utf8').split('\n');
    lines[1274] = '        formatter.';
    writeFileSync(core, lines.join('\n'));
    // Enough files that indexing lasts seconds, so its progress is seen.
    mkdirSync(join(repo, 'generated'), { recursive: true });
    for (let i = 0; i < 8000; i += 1) {
      writeFileSync(join(repo, 'generated', `module_${i}.py`), `def function_${i}(value):\n    return value * ${i} + len(str(value))\n\n\nclass Thing${i}:\n    size = ${i}\n`);
    }
    mkdirSync(join(repo, '.vscode'), { recursive: true });
    writeFileSync(join(repo, '.vscode', 'settings.json'), JSON.stringify({
      'crossfile.backend.kind': 'openai',
      'crossfile.backend.endpoint': `http://127.0.0.1:${port}/v1`,
      // Not machine-scoped: it applies, which shows VS Code read this file.
      'crossfile.retrieve.retriever': 'bm25',
    }, null, 2));
    // The window leaves the click workspace (its edited case copy need not be kept).
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${URL}/?folder=${encodeURIComponent(repo)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    // VS Code 1.100 shows window progress (the language client's, from the server's `$/progress`)
    // as a silent notification: seen in the notification list, open while the server indexes.
    await palette('Notifications: Show Notifications');
    await page.locator('.notifications-center').waitFor({ state: 'visible' });
    await page.keyboard.press('Control+P');
    await pick('src/click/core.py:1275', 'core.py');
    await page.locator('.monaco-editor .view-lines').first().waitFor();
    await waitStatus(/^crossfile$/);
    await page.waitForFunction(() => window.__progress.some((t) => /crossfile: indexing/.test(t)), null, { timeout: 60_000 })
      .catch(async () => check(false, `no indexing progress shown: ${JSON.stringify(await page.evaluate(() => window.__progress))}`));
    await shot('trust-indexing');
    // Escape hides the list (and then the palette no longer offers Hide Notifications).
    if (await page.locator('.notifications-center.visible').count()) {
      await page.keyboard.press('Escape');
      await page.locator('.notifications-center.visible').waitFor({ state: 'hidden', timeout: 5_000 })
        .catch(() => palette('Notifications: Hide Notifications'));
    }
    await page.keyboard.press('End');
    await page.keyboard.type('w');
    const ghost = await ghostText();
    check(ghost.length > 0, 'empty ghost text');
    // The completion came from the embedded model, with the repository's retriever.
    await waitStatus(/crossfile · smollm2-135m · bm25 · \d+ ms/);
    await shot('trust-ghost');
    const text = await statusReport(/retriever:\s+bm25(?!-)/);
    check(/backend:\s+embedded \(in-process\)/.test(text), `Show Status says ${JSON.stringify(text)}`);
    check(/retriever:\s+bm25(?!-)/.test(text), `the repository's settings were not read: ${JSON.stringify(text)}`);
    check(connections.length === 0, `${connections.length} connection(s) reached the listener on 127.0.0.1:${port}`);
  } finally {
    listener.close();
  }
});

// E2E_ONLY=REGEX runs the tests whose names match (the first one, which opens the workspace, always runs).
const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : undefined;
for (const t of tests) {
  if (only && t !== tests[0] && !only.test(t.name)) continue;
  const start = Date.now();
  try {
    await t.fn();
    passed += 1;
    console.log(`ok    ${t.name} (${((Date.now() - start) / 1000).toFixed(1)}s)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL  ${t.name} (${((Date.now() - start) / 1000).toFixed(1)}s)\n    ${String(e?.stack ?? e).split('\n').slice(0, 4).join('\n    ')}`);
    await shot(`failed-${tests.indexOf(t)}`).catch(() => undefined);
    // VS Code's own account of its inline-completion requests (editor.inlineSuggest.logFetch).
    const fetches = consoleLines.filter((l) => l.includes('InlineCompletions.fetch')).slice(-12);
    if (fetches.length) console.log(`    VS Code's last inline fetches:\n      ${fetches.map((l) => l.replace(/%c\s*\S+\s*color: #\w+\s*/, '').slice(0, 300)).join('\n      ')}`);
  }
}
await browser.close();
writeFileSync(join(ART, 'window-console.log'), `${consoleLines.join('\n')}\n`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
