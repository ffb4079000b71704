// The Compare picker's items: the server's retriever specs (`crossfile.retrievers`) with what each
// needs, the user's `crossfile.compare.retrievers` picked. No vscode import, so it can be unit-tested.

import type { RetrieverInfo } from './protocol';

/** A QuickPickItem standing for a spec, or for a composite form whose spec the user types. */
export interface RetrieverItem {
  label: string;
  description?: string;
  detail?: string;
  picked: boolean;
  /** The spec compared; absent for a composite form. */
  spec?: string;
  /** A composite form's prefix (`mmr:`, `hybrid:`): the input box starts with it. */
  prefix?: string;
}

/** The prefix of a composite form's pattern: `mmr:<spec>[:<lambda in 0..1>]` → `mmr:`. */
export function compositePrefix(pattern: string): string {
  const at = pattern.indexOf('<');
  return at < 0 ? pattern : pattern.slice(0, at);
}

/** What a user should know before picking `r`, in one line (undefined: nothing). */
function notes(r: RetrieverInfo): string | undefined {
  const out: string[] = [];
  if (!r.available) {
    out.push(r.needs === 'dense-endpoint' ? 'needs an embeddings endpoint (retrieve.dense.endpoint)' : `not available here (needs ${r.needs})`);
  }
  if (r.needs === 'case-context') out.push('only at a replayed CrossCodeEval case (the context it ships)');
  if (r.upperBound) out.push('upper bound: sees the reference');
  if (r.default) out.push('completions use it');
  return out.length > 0 ? out.join(' · ') : undefined;
}

/**
 * The picker's items: each simple spec the server accepts, in its order; then the user's defaults
 * it does not list (composite specs such as `mmr:bm25`), described by their form; then one item
 * per composite form, which asks for the whole spec. The user's defaults are picked.
 */
export function retrieverItems(list: RetrieverInfo[], defaults: string[]): RetrieverItem[] {
  const wanted = new Set(defaults.map((d) => d.trim()).filter((d) => d !== ''));
  const composites = list.filter((r) => r.composite);
  const items: RetrieverItem[] = list
    .filter((r) => !r.composite)
    .map((r) => ({ label: r.spec, description: r.summary, detail: notes(r), picked: wanted.has(r.spec), spec: r.spec }));
  const listed = new Set(items.map((i) => i.label));
  for (const spec of wanted) {
    if (listed.has(spec)) continue;
    const form = composites.find((c) => spec.startsWith(compositePrefix(c.spec)));
    items.push({ label: spec, description: form?.summary ?? 'from crossfile.compare.retrievers', picked: true, spec });
  }
  for (const c of composites) {
    items.push({ label: c.spec, description: c.summary, detail: 'pick to type the spec', picked: false, prefix: compositePrefix(c.spec) });
  }
  return items;
}
