// The server's `crossfile.status` as a user reads it: one fact a line, for the status item's
// tooltip (Markdown) and Crossfile: Show Status (plain text). No vscode import, so it can be
// unit-tested.

import { type Located, sourceText } from './locate';
import type { ArenaStatus, FolderStatus, StatusResult } from './protocol';

/** One line of the report; `warn`: something the user may want to act on. */
export interface Fact {
  label: string;
  text: string;
  warn?: boolean;
}

function modelFact(s: StatusResult): Fact {
  const m = s.model;
  const from = m.source === 'path' ? `model.path ${m.file}` : `catalogue${m.name ? ` ${m.name}` : ''}, ${m.file}`;
  // Any other backend reads at most the file's vocabulary (token budgets), never its weights.
  const embedded = s.backend.kind === 'embedded';
  const use = embedded ? '' : ' (its vocabulary only)';
  let state: string;
  if (m.downloading) state = `being fetched: ${m.downloading}`;
  else if (!m.present) state = m.source === 'path' ? 'no such file' : 'not fetched: the server fetches it when it starts or the model changes';
  else state = m.loaded ? 'loaded' : 'present, not loaded yet';
  return { label: 'model', text: `${m.label} (${from})${use}: ${state}`, warn: embedded && !m.present && !m.downloading };
}

function backendFact(s: StatusResult): Fact {
  const b = s.backend;
  if (b.kind === 'embedded') return { label: 'backend', text: 'embedded (in-process)' };
  if (!b.endpoint) return { label: 'backend', text: b.kind };
  const model = b.model ? `, model ${b.model}` : '';
  return { label: 'backend', text: `${b.kind} at ${b.endpoint}${model}: the workspace's code is sent there`, warn: true };
}

function folderFact(f: FolderStatus): Fact {
  let index: string;
  if (f.index === 'ready') index = `index ready, ${f.files ?? 0} files, ${f.chunks ?? 0} chunks`;
  else if (f.index === 'failed') index = `index failed: ${f.error ?? 'no reason given'}`;
  else index = 'index building…';
  const trust = f.trusted ? 'trusted' : 'not trusted (its crossfile.toml cannot choose endpoints, model files or the cache directory)';
  return { label: `folder ${f.name}`, text: `${f.root}: ${index}; ${trust}`, warn: f.index === 'failed' };
}

/** The arena's line: its arms and what became of its battles so far (blind: no arm's score). */
export function arenaFact(a: ArenaStatus): Fact {
  const counts = `${a.battles} battles shown, ${a.recorded} votes recorded, ${a.failed} failed, ${a.blank} left out (a blank suggestion)`;
  return { label: 'arena', text: `on, arms ${a.arms.join(', ')}, seed ${a.seed}; ${counts}; votes in ${a.votes}` };
}

/** What the extension started: the binary, where it came from, and the extension's own release. */
export interface Launch extends Located {
  extensionVersion: string;
}

/** The server's line: its release and, when known, its binary and whether it is the extension's release. */
export function serverFact(version: string, launch?: Launch): Fact {
  if (!launch) return { label: 'server', text: `crossfile ${version}` };
  const binary = `${launch.path} (${sourceText(launch.source)})`;
  if (launch.extensionVersion === version) return { label: 'server', text: `crossfile ${version}, the extension's release, ${binary}` };
  return {
    label: 'server',
    text: `crossfile ${version}, ${binary}; this extension is ${launch.extensionVersion}: install the same release of both (its protocol may differ)`,
    warn: true,
  };
}

/** The report's lines, in the order a user checks them. */
export function statusFacts(s: StatusResult, launch?: Launch): Fact[] {
  const config = s.userConfig ? `${s.userConfig}${s.userConfigExists ? '' : ' (none there)'}` : 'none';
  return [
    serverFact(s.version, launch),
    modelFact(s),
    backendFact(s),
    { label: 'retriever', text: s.retriever },
    { label: 'cache', text: s.cacheDir },
    { label: 'user config', text: config },
    ...s.folders.map(folderFact),
    ...(s.arena ? [arenaFact(s.arena)] : []),
  ];
}

/** `text` with every character Markdown gives a meaning escaped. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');
}

/** The report as a Markdown list (the status item's tooltip). */
export function statusMarkdown(s: StatusResult, launch?: Launch): string {
  return statusFacts(s, launch)
    .map((f) => `- ${f.warn ? '⚠ ' : ''}**${escapeMarkdown(f.label)}:** ${escapeMarkdown(f.text)}`)
    .join('\n');
}

/** The report as plain text, labels aligned (Crossfile: Show Status). */
export function statusText(s: StatusResult, launch?: Launch): string {
  const facts = statusFacts(s, launch);
  const width = Math.max(...facts.map((f) => f.label.length)) + 1;
  return facts.map((f) => `${`${f.label}:`.padEnd(width)} ${f.warn ? '! ' : ''}${f.text}`).join('\n') + '\n';
}
