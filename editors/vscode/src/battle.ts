// An arena battle as the server answers it, and how it is drawn and revealed: no engine logic,
// only what the answer says. No vscode import, so it can be unit-tested.
//
// With the arena on, the server answers an inline completion with exactly two items, in the
// order to show them, each carrying the command `crossfile.arenaVote {battle, pick}`; nothing
// says which arm made which (docs/lsp-extensions.md, issue 34).

import type { ArenaReveal, Metrics } from './protocol';

/** The server command that records a battle's vote (`{battle, pick: 1 | 2 | null}`). */
export const VOTE_COMMAND = 'crossfile.arenaVote';
/** The server command that reveals the session's last recorded battle. */
export const REVEAL_COMMAND = 'crossfile.arenaReveal';
/** What marks suggestion 2, before its first line. */
export const LABEL_2 = '2 │ ';

/** An inline item as vscode-languageclient converts it (a `vscode.InlineCompletionItem`). */
export interface ItemLike {
  insertText: string | { value: string };
  command?: { command: string; arguments?: unknown[] } | undefined;
}

export function itemText(item: ItemLike): string {
  return typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
}

/** The battle id of an answer that is a battle (two items voting through `crossfile.arenaVote`), else undefined. */
export function battleOf(items: readonly ItemLike[]): number | undefined {
  if (!items.some((i) => i.command?.command === VOTE_COMMAND)) return undefined;
  const argument = items[0]?.command?.arguments?.[0];
  if (items.length !== 2 || typeof argument !== 'object' || argument === null) return undefined;
  const battle = (argument as { battle?: unknown }).battle;
  return typeof battle === 'number' ? battle : undefined;
}

/** The column (in character cells) where `prefix`, the start of a line, ends, tabs expanded. */
export function visualColumn(prefix: string, tabSize: number): number {
  let column = 0;
  for (const ch of prefix) column = ch === '\t' ? column + tabSize - (column % tabSize) : column + 1;
  return column;
}

function expandTabs(text: string, tabSize: number, start = 0): string {
  let out = '';
  for (const ch of text) out += ch === '\t' ? ' '.repeat(tabSize - ((start + out.length) % tabSize)) : ch;
  return out;
}

/** How suggestion 2 is drawn: one text per row below the cursor's line, or one after it (`after`). */
export interface Stacked {
  /** Row i is drawn over the i-th line below the cursor's; empty when there is none. */
  rows: string[];
  /** When no line follows the cursor's: what is drawn after the cursor's line instead. */
  after?: string;
}

/**
 * Suggestion 2 (`text`, inserted at visual column `column`) stacked below suggestion 1: its first
 * line under the cursor, `2 │ ` just before it (shifted right when the cursor is too near the left
 * edge), its other lines from the left edge as they would be inserted; at most `rowsBelow` rows,
 * the last marked `…` when more lines were cut. With no row below: one line after the cursor's.
 */
export function stackedRows(text: string, column: number, rowsBelow: number, tabSize: number): Stacked {
  const lines = text.split(/\r?\n/);
  if (rowsBelow <= 0) {
    return { rows: [], after: `${LABEL_2}${expandTabs(lines[0] ?? '', tabSize, column)}${lines.length > 1 ? ' …' : ''}` };
  }
  const pad = Math.max(0, column - LABEL_2.length);
  const rows = [`${' '.repeat(pad)}${LABEL_2}${expandTabs(lines[0] ?? '', tabSize, column)}`, ...lines.slice(1).map((l) => expandTabs(l, tabSize))];
  if (rows.length <= rowsBelow) return { rows };
  const kept = rows.slice(0, rowsBelow);
  kept[kept.length - 1] += ' …';
  return { rows: kept };
}

function metricsText(metrics: Metrics | undefined): string {
  if (!metrics) return '';
  // As the server gives them (the benchmark's own scale), numbers to three decimals at most.
  const parts = Object.entries(metrics).map(([k, v]) =>
    `${k} ${typeof v === 'number' ? String(Number(v.toFixed(3))) : v !== null && typeof v === 'object' ? `error: ${v.error}` : String(v)}`);
  return parts.length ? parts.join(', ') : '';
}

/** One line: which arm made each suggestion and which was picked. */
export function revealSummary(r: ArenaReveal): string {
  const picked = r.picked === null ? 'no choice' : `picked ${r.picked} (${r.arms[r.picked - 1] ?? '?'})`;
  return `crossfile arena, battle ${r.battle} at ${r.path}:${r.line}:${r.col}: 1 = ${r.arms[0] ?? '?'}, 2 = ${r.arms[1] ?? '?'}; ${picked}`;
}

/** The revealed battle as plain text (the output channel "crossfile arena"). */
export function revealText(r: ArenaReveal): string {
  const out = [revealSummary(r), ''];
  for (const i of [0, 1]) {
    const latency = r.latencyMs[i] === undefined ? '' : `, ${Math.round(r.latencyMs[i])} ms`;
    const mark = r.picked === i + 1 ? ' (picked)' : '';
    out.push(`${i + 1}: ${r.arms[i] ?? '?'}${latency}${mark}`);
    const metrics = metricsText(r.metrics?.[i]);
    if (metrics) out.push(`   ${metrics}`);
    for (const line of (r.texts[i] ?? '').split('\n')) out.push(`   │ ${line}`);
    out.push('');
  }
  if (r.caseId) out.push(`case: ${r.caseId}`);
  out.push(`votes: ${r.votes}`);
  return out.join('\n') + '\n';
}

/** Where the cursor ends after `text` is inserted at `start` (a UTF-16 line and column). */
export function endAfter(start: { line: number; character: number }, text: string): { line: number; character: number } {
  const lines = text.split('\n');
  const last = lines[lines.length - 1] ?? '';
  return lines.length === 1 ? { line: start.line, character: start.character + last.length } : { line: start.line + lines.length - 1, character: last.length };
}
