// What the user looks at, told to the server (`crossfile/recentLines`) for its ring of recent
// chunks, which the `recent` retriever reads: the lines an editor shows when it becomes active and
// once scrolling rests, and a selection once it rests (VS Code tells an extension nothing of a
// copy: a selection is the nearest sign of a yank). Opening and editing a document the server sees
// already (didOpen, didChange). Pure: the extension feeds it VS Code's events.

/** Lines of a document, 0-based, first and last included. */
export interface Lines {
  uri: string;
  first: number;
  last: number;
}

/** The notification's method and params (mirrors `src/lsp/protocol.rs`). */
export const RECENT_LINES = 'crossfile/recentLines';

export function recentLinesParams(lines: Lines): { textDocument: { uri: string }; range: { start: { line: number; character: number }; end: { line: number; character: number } } } {
  return {
    textDocument: { uri: lines.uri },
    range: { start: { line: lines.first, character: 0 }, end: { line: lines.last, character: 0 } },
  };
}

/** How long scrolling or selecting rests before it is told, in milliseconds. */
export const REST_MS = 300;

/**
 * Tells `send` what is shown and selected: an editor made active at once, a scroll or a selection
 * once it has rested for REST_MS (each new one restarts the wait), never the same lines twice in a row.
 */
export class RecentLines {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last: string | undefined;

  constructor(private readonly send: (lines: Lines) => void, private readonly restMs = REST_MS) {}

  /** An editor became active showing `lines`. */
  activated(lines: Lines | undefined): void {
    this.cancel();
    if (lines) this.tell(lines);
  }

  /** The shown lines changed (a scroll) or a selection changed: told once they rest. */
  moved(lines: Lines | undefined): void {
    this.cancel();
    if (!lines) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tell(lines);
    }, this.restMs);
  }

  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.cancel();
  }

  private tell(lines: Lines): void {
    if (lines.last < lines.first) return;
    const key = `${lines.uri}:${lines.first}:${lines.last}`;
    if (key === this.last) return;
    this.last = key;
    this.send(lines);
  }
}

/** The lines `ranges` (an editor's visible ranges, in order) cover, or undefined when none. */
export function shownLines(uri: string, ranges: readonly { start: { line: number }; end: { line: number } }[]): Lines | undefined {
  if (ranges.length === 0) return undefined;
  return { uri, first: ranges[0].start.line, last: ranges[ranges.length - 1].end.line };
}
