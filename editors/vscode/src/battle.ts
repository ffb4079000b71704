// An arena battle as the server answers it, and how it is revealed: no engine logic, only what
// the answer says. No vscode import, so it can be unit-tested.
//
// With the arena on, the server answers an inline completion with exactly two items, in the
// order to show them, each carrying the command `crossfile.arenaVote {battle, pick}`; nothing
// says which arm made which (docs/lsp-extensions.md, issue 34).

import type { ArenaRevealResult } from './protocol';

/** The server command that records a battle's vote (`{battle, pick: 1 | 2 | null}`). */
export const VOTE_COMMAND = 'crossfile.arenaVote';
/** The server command that reveals the session's last recorded battle. */
export const REVEAL_COMMAND = 'crossfile.arenaReveal';
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

function metricsText(metrics: Record<string, number | null> | undefined): string {
  if (!metrics) return '';
  // As the server gives them (the benchmark's own scale), numbers to three decimals at most.
  const parts = Object.entries(metrics).map(([k, v]) => `${k} ${typeof v === 'number' ? String(Number(v.toFixed(3))) : '–'}`);
  return parts.length ? parts.join(', ') : '';
}

/** One line: which arm made each suggestion and which was picked. */
export function revealSummary(r: ArenaRevealResult): string {
  const picked = r.picked === null ? 'no choice' : `picked ${r.picked} (${r.arms[r.picked - 1] ?? '?'})`;
  return `crossfile arena, battle ${r.battle} at ${r.path}:${r.line}:${r.col}: 1 = ${r.arms[0] ?? '?'}, 2 = ${r.arms[1] ?? '?'}; ${picked}`;
}

/** The revealed battle as plain text (the output channel "crossfile arena"). */
export function revealText(r: ArenaRevealResult): string {
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
