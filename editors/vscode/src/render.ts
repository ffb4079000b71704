// The HTML bodies of the compare and context views, from the server's answers (escaped; no
// computation beyond formatting). No vscode import, so it can be unit-tested.

import type { ChunkInfo, CompareResult, CompareColumn, ContextResult, DiffRun, Metrics, TestOutcome, PromptTokens } from './protocol';
import { scoresOf } from './scores';
import { escapeHtml as h } from './webview';

function num(value: unknown, digits = 1): string {
  return typeof value === 'number' ? String(Number(value.toFixed(digits))) : '–';
}

function chunkLink(c: ChunkInfo): string {
  const lines = c.startLine !== null && c.endLine !== null ? `:${c.startLine}-${c.endLine}` : '';
  const origin = c.origin ? ` · <span class="origin">${h(c.origin)}</span>` : '';
  const source = c.source ? ` · <span class="source">${h(c.source)}</span>` : '';
  const label = `${h(c.path)}${lines}${origin}${source} <span class="muted">${num(c.score, 2)}</span>`;
  if (!c.uri) return `<div class="chunk">${label}</div>`;
  return `<a class="chunk" href="#" data-uri="${h(c.uri)}" data-line="${c.startLine ?? 1}">${label}</a>`;
}

function tokens(t: PromptTokens | undefined): string {
  if (!t) return '';
  return `<div>prompt tokens: cross-file ${t.crossfile} · left ${t.left} · right ${t.right} · total ${t.total}</div>`;
}

function metrics(m: Metrics | undefined): string {
  if (!m) return '';
  const scores = scoresOf(m);
  if (typeof scores.error === 'string') return `<div class="error">${h(scores.error)}</div>`;
  const rows = Object.entries(scores).map(
    ([k, v]) => `<tr><th>${h(k)}</th><td class="metric" data-metric="${h(k)}">${h(num(v, 2))}</td></tr>`,
  );
  return `<table class="metrics">${rows.join('')}</table>`;
}

function diff(runs: DiffRun[] | undefined): string {
  if (!runs) return '';
  const parts = runs.map((r) => {
    if (r.op === 'delete') return `<del>${h(r.text)}</del>`;
    if (r.op === 'insert') return `<ins>${h(r.text)}</ins>`;
    return h(r.text);
  });
  return `<div class="muted">against the reference (<del>only in the reference</del> <ins>only in the suggestion</ins>):</div><pre class="diff">${parts.join('')}</pre>`;
}

/** A body's tests: the status, each test with its time, and the output of the one that did not pass. */
export function outcomeHtml(o: TestOutcome | undefined): string {
  if (!o) return '';
  const rows = o.tests
    .map((t) => `<tr><th>${h(t.id)}</th><td class="test ${h(t.status)}">${h(t.status)}</td><td>${num(t.secs, 1)} s</td></tr>`)
    .join('');
  const failed = o.tests.find((t) => t.status !== 'pass');
  const output = failed ? `<div>output of ${h(failed.id)}:</div><pre class="output">${h(failed.output)}</pre>` : '';
  const message = o.message ? `<div class="error">${h(o.message)}</div>` : '';
  return `<div class="outcome" data-status="${h(o.status)}">tests: <b>${h(o.status)}</b>${o.recall !== null ? ` · recall ${num(o.recall, 2)}` : ''}</div>
${message}<table class="tests">${rows}</table>${output}`;
}

function column(r: CompareColumn): string {
  const badge = r.upperBound ? ' <span class="badge" title="it sees the reference">upper bound</span>' : '';
  const open = `<div class="column${r.upperBound ? ' upper' : ''}" data-retriever="${h(r.retriever)}">`;
  if ('error' in r) return `${open}<h2>${h(r.retriever)}${badge}</h2><div class="error">${h(r.error)}</div></div>`;
  const overlap = r.overlap !== undefined
    ? ` <span class="overlap" title="share of the reference's identifiers the chunks hold">overlap ${num(r.overlap, 2)}</span>`
    : '';
  return `${open}<h2>${h(r.retriever)}${badge}${overlap}</h2>
<div class="chunks">${r.chunks.map(chunkLink).join('') || '<div class="muted">no chunks</div>'}</div>
${tokens(r.promptTokens)}
<div>suggestion:</div><pre class="suggestion">${h(r.suggestion)}</pre>
${diff(r.diff)}
<div>latency: ${num(r.latencyMs, 0)} ms</div>
${r.body !== undefined ? `<div>body tested:</div><pre class="body">${h(r.body)}</pre>` : ''}
${outcomeHtml(r.outcome)}
${metrics(r.metrics)}</div>`;
}

export function compareBody(a: CompareResult): string {
  const where = `${h(a.uri)}:${a.position.line + 1}:${a.position.character + 1}`;
  const ref = a.reference !== null ? `<div>reference (case ${h(a.caseId ?? '')}):</div><pre class="reference">${h(a.reference)}</pre>` : '';
  return `<h1>Compare at ${where}</h1>${ref}<div class="columns">${a.results.map(column).join('')}</div>`;
}

export function contextBody(a: ContextResult | null): string {
  if (!a) return '<h1>crossfile context</h1><p class="muted">No completion yet: type in a Python, Java, TypeScript or C# file.</p>';
  const where = `${h(a.uri)}:${a.position.line + 1}:${a.position.character + 1}`;
  const chunks = (a.chunks ?? []).map((c) => `${chunkLink(c)}<pre class="chunk-text">${h(c.text ?? '')}</pre>`).join('');
  const timings = Object.entries(a.timingsMs ?? {})
    .map(([k, v]) => `<tr><th>${h(k)}</th><td>${num(v, 1)} ms</td></tr>`)
    .join('');
  return `<h1>Last completion at ${where}</h1>
<div>retriever: <b>${h(a.retriever)}</b>${a.upperBound ? ' <span class="badge">upper bound</span>' : ''} · latency ${num(a.latencyMs, 0)} ms${a.caseId ? ` · case ${h(a.caseId)}` : ''}</div>
${tokens(a.promptTokens)}
<h2>suggestion</h2><pre class="suggestion">${h(a.suggestion ?? '')}</pre>
<h2>timings</h2><table class="timings">${timings}</table>
<h2>chunks (${(a.chunks ?? []).length})</h2><div class="chunks">${chunks || '<div class="muted">none</div>'}</div>
<h2>prompt</h2><pre class="prompt">${h(a.prompt)}</pre>`;
}

/**
 * The arena view while a battle shows: both suggestions whole, side by side, marked only 1 and 2
 * (the server's blind order), with the key that takes each.
 */
export function battleBody(first: string, second: string): string {
  const side = (n: 1 | 2, key: string, text: string): string =>
    `<div class="column" id="suggestion-${n}"><h2>${n} <span class="muted">· ${key}</span></h2><pre class="suggestion">${h(text)}</pre></div>`;
  return `<h1>Which is better?</h1>
<div class="columns">${side(1, 'Tab (the ghost text)', first)}${side(2, 'Shift+Tab', second)}</div>
<p class="muted">Escape takes neither, as does typing on. Crossfile: Arena Reveal Last names the arms once you chose.</p>`;
}

/** How a battle ended: a suggestion taken, both dismissed, or passed by (typing on, moving away). */
export type BattleEnd = 'picked 1' | 'picked 2' | 'dismissed' | 'passed';

/** The arena view between battles: how the last one ended. */
export function battleOverBody(ended: BattleEnd): string {
  const said = { 'picked 1': 'You took 1.', 'picked 2': 'You took 2.', dismissed: 'You took neither.', passed: 'It passed: no choice.' }[ended];
  return `<h1>No battle showing</h1><p>The last battle: ${h(said)} The next one shows here.</p>`;
}
