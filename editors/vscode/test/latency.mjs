// Keystroke → ghost text inside VS Code (code-server under headless Chromium), with the real
// server and the default model: test/run --latency starts everything and passes it in the
// environment. A person writes code back into real files of the workspace, as `crossfile bench
// typing` replays it over stdio: at each place one line of code is removed (its indentation
// kept), the file is opened there and the line is typed back one character a keystroke, one
// keystroke per KEY_MS, and PAUSE_MS after each keystroke that ends an identifier, an operator or
// the line (the pauses, where a person looks for a suggestion). At each place the person first
// asks for a suggestion at the emptied line and waits for it (the file's prompt read cold;
// reported apart as first_answer_ms, not measured), as Neovim's latency spec does. In the page, a
// keydown listener and a MutationObserver over the editor timestamp (performance.now()) every
// keystroke and every change of the ghost text shown. A keystroke's latency is the time to the first ghost text shown
// after it and before the next keystroke; a pause with none has no answer, which ranks above
// every answer (a percentile that falls on one is null, "no answer", as in bench typing). The
// server's answer with nothing to show (the status item's latency changed, no ghost text) is an
// answer, as `bench typing` and Neovim's latency spec count them, timed at the status item's
// change and counted apart as `empty_answers`.
// Writes {keystrokes, pauses, answered, p50_ms, p95_ms, within_300ms, within_1000ms, …} as JSON to
// $E2E_LATENCY_OUT and prints it.
import { chromium } from 'playwright-core';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`latency: ${name} is not set (run test/run --latency)`);
  return v;
};
const URL = env('E2E_URL');
const WORKSPACE = env('E2E_WORKSPACE');
const OUT = env('E2E_LATENCY_OUT');
const ART = env('E2E_ARTIFACTS');
const KEY_MS = Number(process.env.E2E_KEY_MS ?? 100);
const PAUSE_MS = Number(process.env.E2E_PAUSE_MS ?? 600);
const WANT_KEYS = Number(process.env.E2E_KEYS ?? 120);

// The places, as Neovim's latency spec (editors/nvim/spec/latency_spec.lua) picks them, so the
// two editors type the same lines: the middle assignment line (25-60 characters, no comment) of
// each of click's modules in order, until WANT_KEYS keystrokes.
const FILES = ['types.py', 'utils.py', 'termui.py', 'formatting.py', 'parser.py', 'decorators.py', 'shell_completion.py', 'core.py']
  .map((name) => `src/click/${name}`);
function places() {
  const out = [];
  let count = 0;
  for (const rel of FILES) {
    const lines = readFileSync(join(WORKSPACE, rel), 'utf8').split('\n');
    const candidates = [];
    lines.forEach((text, n) => {
      const m = text.match(/^(\s+)([A-Za-z_][\w.]* = .+)$/);
      if (m && m[2].length >= 25 && m[2].length <= 60 && !m[2].includes('#')) candidates.push({ rel, line: n, indent: m[1], code: m[2] });
    });
    const pick = candidates[Math.max(0, Math.floor(candidates.length / 2) - 1)];
    if (pick) {
      out.push(pick);
      count += pick.code.length;
    }
    if (count >= WANT_KEYS) break;
  }
  return out;
}

const cls = (c) => (/\w/.test(c) ? 'word' : /\s/.test(c) ? 'space' : 'other');
/** Whether the keystroke typing code[i] ends an identifier, an operator or the line. */
const isPause = (code, i) => i === code.length - 1 || (cls(code[i]) !== 'space' && cls(code[i]) !== cls(code[i + 1]));

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const v = sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return Number.isFinite(v) ? Math.round(v * 10) / 10 : null;
}

const chosen = places();
// Each place's line is removed from its file before the window opens (indentation kept).
for (const p of chosen) {
  const file = join(WORKSPACE, p.rel);
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[p.line] = p.indent;
  writeFileSync(file, lines.join('\n'));
}

const browser = await chromium.launch({ executablePath: env('CROSSFILE_CHROMIUM'), headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
await page.addInitScript(() => {
  const rec = { keys: [], ghosts: [], statuses: [] };
  window.__latency = rec;
  document.addEventListener('keydown', (e) => rec.keys.push({ t: performance.now(), key: e.key }), true);
  let last = '';
  let lastStatus = '';
  new MutationObserver(() => {
    // The first line at the cursor, and the lines below it (a view zone).
    const text = Array.from(document.querySelectorAll('.monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text-decoration-preview, .monaco-editor .ghost-text'))
      .map((e) => e.textContent).join('');
    if (text !== last) {
      last = text;
      rec.ghosts.push({ t: performance.now(), text });
    }
    // The status item's text changes with every answer the server gives, an empty one too (its
    // latency is in it): an answer that shows no ghost text is still an answer.
    const status = Array.from(document.querySelectorAll('.statusbar-item')).map((e) => e.textContent ?? '').find((t) => /crossfile/.test(t)) ?? '';
    if (status !== lastStatus) {
      lastStatus = status;
      if (/ ms/.test(status)) rec.statuses.push({ t: performance.now(), text: status });
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
});

async function pick(text, label) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(text);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: label }) }).first();
  await row.waitFor({ state: 'visible', timeout: 60_000 });
  await row.click();
}

await page.goto(`${URL}/?folder=${encodeURIComponent(WORKSPACE)}`);
await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
const typed = [];
const firstAnswers = [];
for (const [n, p] of chosen.entries()) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  await pick(`${p.rel}:${p.line + 1}`, p.rel.split('/').pop());
  await page.locator('.monaco-editor .view-lines').first().waitFor();
  await page.waitForTimeout(500);
  await page.keyboard.press('End');
  if (n === 0) {
    // The server must have answered `initialize` (the status item drops its `starting…`): a
    // keystroke before the inline provider is registered asks nothing.
    await page.waitForFunction(() => {
      const item = Array.from(document.querySelectorAll('.statusbar-item')).find((e) => /crossfile/.test(e.textContent ?? ''));
      return item !== undefined && !/starting/.test(item.textContent ?? '');
    }, null, { timeout: 120_000 });
  }
  // As Neovim's latency spec does, the person asks for a suggestion at the emptied line (VS Code's
  // Trigger Inline Suggestion, from the command palette) and waits for the answer: the file's prompt read cold, the
  // first place also the model's first use, reported apart and not measured. The status item
  // changes with the server's answer.
  const statusNow = () => page.evaluate(() => Array.from(document.querySelectorAll('.statusbar-item'))
    .map((e) => e.textContent ?? '').find((t) => /crossfile/.test(t)) ?? '');
  const before = await statusNow();
  const start = Date.now();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>Trigger Inline Suggestion');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Trigger Inline Suggestion' }).first().waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
  await page.waitForFunction((was) => {
    const now = Array.from(document.querySelectorAll('.statusbar-item')).map((e) => e.textContent ?? '').find((t) => /crossfile/.test(t)) ?? '';
    return now !== was && / ms/.test(now);
  }, before, { timeout: 180_000 }).then(() => firstAnswers.push(Date.now() - start), () => firstAnswers.push(null));
  for (let i = 0; i < p.code.length; i += 1) {
    const before = await page.evaluate(() => window.__latency.keys.length);
    await page.keyboard.type(p.code[i]);
    typed.push({ place: n, pause: isPause(p.code, i), index: before });
    await page.waitForTimeout(isPause(p.code, i) ? PAUSE_MS : KEY_MS);
  }
  // Whatever the suggest list or the ghost text hold is dropped before the next place.
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
}
await page.screenshot({ path: join(ART, 'latency.png') });
const rec = await page.evaluate(() => window.__latency);
// The page's clock as wall-clock milliseconds, to line the keystrokes up with the output channel's
// timestamps (the extension's inline log, on in this mode, and the server's lines).
const origin = await page.evaluate(() => performance.timeOrigin);
await browser.close();

// The extension's inline log (crossfile.trace.server, on in this mode): when its answers were
// empty. An answer from typing along that leaves nothing to show (all of the suggestion typed but
// the closer VS Code put after the cursor) changes no status item, so the page cannot see it.
const channel = readdirSync(join(env('E2E_TMP'), 'user-data', 'logs'), { recursive: true })
  .filter((f) => String(f).endsWith('crossfile.log'))
  .map((f) => join(env('E2E_TMP'), 'user-data', 'logs', String(f)));
const emptyAt = channel.flatMap((file) => readFileSync(file, 'utf8').split('\n').flatMap((line) => {
  const m = line.match(/^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3}) \[info\] inline \S+ (?:automatic|invoked)(?: list:.*)?: ""$/);
  // The channel's timestamps are the machine's local time, as Date reads them.
  return m ? [new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]).getTime()] : [];
})).sort((a, b) => a - b);

// Each typed character is one keydown (the recorder also sees the Escapes between places, which
// come after every typed one of their place).
const keys = rec.keys;
const measured = typed.map((k) => {
  const key = keys[k.index];
  const nextKey = keys[k.index + 1];
  const until = nextKey ? nextKey.t : Infinity;
  const shown = key ? rec.ghosts.find((g) => g.t > key.t && g.t < until && g.text.length > 0) : undefined;
  const status = key ? rec.statuses.find((st) => st.t > key.t && st.t < until) : undefined;
  // An answer: ghost text shown, or the server's answer with nothing to show (as `bench typing`
  // and Neovim's latency spec count answers), counted apart as empty: the status item changed,
  // or the inline log has an empty answer (its clock in whole milliseconds since the epoch).
  const wall = key ? origin + key.t : Infinity;
  const logged = emptyAt.find((t) => t >= Math.floor(wall) && t < origin + until);
  const emptyMs = status !== undefined ? status.t - key.t : logged !== undefined ? Math.max(0, logged - wall) : undefined;
  const empty = !shown && emptyMs !== undefined;
  const latency = shown ? shown.t - key.t : empty ? emptyMs : Infinity;
  return { ...k, latency, empty, at: key ? origin + key.t : null, key: key?.key };
});
const summary = (rows) => {
  const sorted = rows.map((r) => r.latency).sort((a, b) => a - b);
  const answered = sorted.filter(Number.isFinite).length;
  return {
    count: rows.length,
    answered,
    p50_ms: percentile(sorted, 50),
    p95_ms: percentile(sorted, 95),
    within_300ms: rows.length ? Number((sorted.filter((v) => v <= 300).length / rows.length).toFixed(3)) : null,
    within_1000ms: rows.length ? Number((sorted.filter((v) => v <= 1000).length / rows.length).toFixed(3)) : null,
    // Of those answered, the ones the server answered with nothing to show.
    empty_answers: rows.filter((r) => r.empty).length,
  };
};
const pauses = summary(measured.filter((m) => m.pause));
const report = {
  what: 'keystroke -> ghost text shown, in code-server (VS Code 1.100.3) under headless Chromium',
  places: chosen.map((p) => `${p.rel}:${p.line + 1}`),
  keystrokes: measured.length,
  key_ms: KEY_MS,
  pause_ms: PAUSE_MS,
  first_answer_ms: firstAnswers,
  pauses,
  every_keystroke: summary(measured),
  recorded_keydowns: keys.length,
  // Each typed keystroke: its key, whether a pause followed, its wall-clock time (ms since the
  // epoch) and its latency (null: no ghost text before the next keystroke).
  timeline: measured.map((m) => ({ place: m.place, key: m.key, pause: m.pause, at: m.at === null ? null : Math.round(m.at * 10) / 10,
    latency_ms: Number.isFinite(m.latency) ? Math.round(m.latency * 10) / 10 : null, empty: m.empty })),
};
writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
const { timeline: _, ...shown } = report;
console.log(JSON.stringify(shown, null, 2));
if (measured.length < 100) {
  console.log(`latency: only ${measured.length} keystrokes`);
  process.exit(1);
}
