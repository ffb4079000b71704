// Keystroke → ghost text inside VS Code (code-server under headless Chromium), with the real
// server and the default model: test/run --latency starts everything and passes it in the
// environment. A person writes code back into real files of the workspace, as `crossfile bench
// typing` replays it over stdio: at each place one line of code is removed (its indentation
// kept), the file is opened there and the line is typed back one character a keystroke, one
// keystroke per KEY_MS, and PAUSE_MS after each keystroke that ends an identifier, an operator or
// the line (the pauses, where a person looks for a suggestion). At each place the first character
// waits for the server's first answer there (the file's prompt read cold; reported apart as
// first_answer_ms, not measured). In the page, a keydown listener
// and a MutationObserver over the editor timestamp (performance.now()) every keystroke and every
// change of the ghost text shown. A keystroke's latency is the time to the first ghost text shown
// after it and before the next keystroke; a pause with none has no answer, which ranks above
// every answer (a percentile that falls on one is null, "no answer", as in bench typing). Of
// those, the ones the server answered with nothing to show (the status item's latency changed,
// no ghost text) are counted apart as `empty_answers`.
// Writes {keystrokes, pauses, answered, p50_ms, p95_ms, within_300ms, within_1000ms, …} as JSON to
// $E2E_LATENCY_OUT and prints it.
import { chromium } from 'playwright-core';
import { readFileSync, writeFileSync } from 'node:fs';
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
const PAUSE_MS = Number(process.env.E2E_PAUSE_MS ?? 1500);
const PLACES = Number(process.env.E2E_PLACES ?? 6);
const SEED = Number(process.env.E2E_SEED ?? 7);

// The places: lines of code in click's sources, picked with a seeded generator among lines that
// are plain statements (no block opener, no string or comment start, 20-60 characters).
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}
const FILES = ['src/click/core.py', 'src/click/utils.py', 'src/click/termui.py', 'src/click/formatting.py', 'src/click/parser.py', 'src/click/decorators.py'];
function places() {
  const random = rng(SEED);
  const out = [];
  for (let i = 0; i < PLACES; i += 1) {
    const rel = FILES[i % FILES.length];
    const lines = readFileSync(join(WORKSPACE, rel), 'utf8').split('\n');
    const candidates = lines
      .map((text, n) => ({ text, n }))
      .filter(({ text }) => {
        const code = text.trim();
        return /^ {4,}\S/.test(text) && code.length >= 20 && code.length <= 60 && /^[a-z_][\w.]*(\s*=|\()/.test(code)
          && !/[:\\]$/.test(code) && !/["'#]/.test(code);
      });
    const pick = candidates[Math.floor(random() * candidates.length)];
    out.push({ rel, line: pick.n, indent: pick.text.match(/^\s*/)[0], code: pick.text.trim() });
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
  // As bench typing does, the person waits at each place for the first answer (the file's prompt
  // read cold, the first place also the model's first use: reported apart, not measured): the
  // place's first character is typed and the status item's next completion awaited.
  const statusNow = () => page.evaluate(() => Array.from(document.querySelectorAll('.statusbar-item'))
    .map((e) => e.textContent ?? '').find((t) => /crossfile/.test(t)) ?? '');
  const before = await statusNow();
  const start = Date.now();
  await page.keyboard.type(p.code[0]);
  await page.waitForFunction((was) => {
    const now = Array.from(document.querySelectorAll('.statusbar-item')).map((e) => e.textContent ?? '').find((t) => /crossfile/.test(t)) ?? '';
    return now !== was && / ms/.test(now);
  }, before, { timeout: 180_000 }).then(() => firstAnswers.push(Date.now() - start), () => firstAnswers.push(null));
  await page.waitForTimeout(PAUSE_MS);
  for (let i = 1; i < p.code.length; i += 1) {
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
// timestamps (the extension's inline log with CROSSFILE_TRACE=1, the server's lines).
const origin = await page.evaluate(() => performance.timeOrigin);
await browser.close();

// Each typed character is one keydown (the recorder also sees the Escapes between places, which
// come after every typed one of their place).
const keys = rec.keys;
const measured = typed.map((k) => {
  const key = keys[k.index];
  const nextKey = keys[k.index + 1];
  const until = nextKey ? nextKey.t : Infinity;
  const shown = key ? rec.ghosts.find((g) => g.t > key.t && g.t < until && g.text.length > 0) : undefined;
  const status = key ? rec.statuses.find((st) => st.t > key.t && st.t < until) : undefined;
  return { ...k, latency: shown ? shown.t - key.t : Infinity, empty: !shown && status !== undefined, at: key ? origin + key.t : null, key: key?.key };
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
    // Of those with no ghost text, the ones the server answered with nothing to show before the
    // next keystroke (Neovim's latency spec counts these as "no suggestion" answers).
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
