// The extension's `crossfile.*` settings as the server's options: every setting the user set
// (except the client's own) becomes the server key of the same dotted name. No vscode import, so
// it can be unit-tested.

/** Settings that belong to the client, never sent to the server. */
export const CLIENT_ONLY = new Set(['serverPath', 'compare.retrievers', 'trace.server', 'replay.evocodebenchSetting', 'inlineSuggest.closeSuggestList']);

/** The server keys the extension contributes, in package.json's order. */
export function serverKeys(contributed: Record<string, unknown>): string[] {
  return Object.keys(contributed)
    .filter((k) => k.startsWith('crossfile.'))
    .map((k) => k.slice('crossfile.'.length))
    .filter((k) => !CLIENT_ONLY.has(k));
}

/**
 * Nests `{"retrieve.top_k": 5, "prompt.max_new_tokens": 16}` into
 * `{"retrieve": {"top_k": 5}, "prompt": {"max_new_tokens": 16}}`; unset (undefined) values are left out.
 */
export function nest(values: Iterable<[string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of values) {
    if (value === undefined) continue;
    const parts = key.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
        node = next as Record<string, unknown>;
      } else {
        const fresh: Record<string, unknown> = {};
        node[part] = fresh;
        node = fresh;
      }
    }
    node[parts[parts.length - 1]] = value;
  }
  return out;
}
