// Ghost text while typing, in step with VS Code's suggest list.
//
// VS Code asks for inline completions again whenever its suggest list opens, closes or changes
// its selection, with the text and the cursor unchanged, and the server answers one completion per
// document at a time (a newer request cancels the older). Forwarded as they come, the list's
// requests would cancel the server's work on the keystroke's and start it over, so the answer
// comes late or never. Here one request per document version and cursor goes to the server, and
// every ask for that same text and cursor shares its answer (a caller's cancellation does not
// cancel it; a newer version or cursor does). The extension starts that request itself on a
// keystroke, before VS Code asks (`ahead`, typing.ts).
//
// With the list open, VS Code shows a ghost text only if it extends the list's selected item
// (suggestList.ts). When the answer arrives and does not, the list closes (once per answer, and
// unless `crossfile.inlineSuggest.closeSuggestList` is off), so the ghost text shows. An answer to
// an ask with no item selected (VS Code asks so while the list is open and still filtering, and
// so is an explicit ask) closes it too, as the ghost text then shows beside the open list. VS Code's
// `editor.inlineSuggest.suppressSuggestions` (on by default for the languages served,
// package.json) keeps the list closed while the ghost text is shown and typed along.

import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { extendsSelected } from './suggestList';

export type Answer = vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined;
export type Next = Parameters<NonNullable<Middleware['provideInlineCompletionItems']>>[4];

interface Asked {
  key: string;
  version: number;
  position: vscode.Position;
  answer: Promise<Answer>;
  source: vscode.CancellationTokenSource;
  /** Whether the suggest list was closed for this answer already. */
  closedList: boolean;
}

/** A request's key: the document's version and the cursor. */
function keyOf(document: vscode.TextDocument, position: vscode.Position): string {
  return `${document.version}:${position.line}:${position.character}`;
}

function items(answer: Answer): vscode.InlineCompletionItem[] {
  if (!answer) return [];
  return Array.isArray(answer) ? answer : answer.items;
}

/** The answer, or undefined as soon as `token` is cancelled. */
function unlessCancelled<T>(answer: Promise<T>, token: vscode.CancellationToken): Promise<T | undefined> {
  if (token.isCancellationRequested) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const listener = token.onCancellationRequested(() => {
      listener.dispose();
      resolve(undefined);
    });
    answer.then(
      (value) => {
        listener.dispose();
        resolve(value);
      },
      (error: unknown) => {
        listener.dispose();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export class InlineRequests implements vscode.Disposable {
  private readonly asked = new Map<string, Asked>();
  private readonly closed: vscode.Disposable;

  /** `log`: a line for the output channel (with `crossfile.trace.server` on). */
  constructor(private readonly log: (line: string) => void) {
    this.closed = vscode.workspace.onDidCloseTextDocument((d) => this.forget(d.uri.toString()));
  }

  /** The middleware's `provideInlineCompletionItems`; `answered` runs once per server answer. */
  async provide(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
    next: Next,
    answered: (document: vscode.TextDocument, answer: Answer) => void,
  ): Promise<Answer> {
    const key = keyOf(document, position);
    const shared = this.asked.get(document.uri.toString())?.key === key;
    this.log(`inline ${key} asked${shared ? " (the same text and cursor: its request shared)" : ""}`);
    const asked = this.request(document, position, context, next, answered);
    const answer = await unlessCancelled(asked.answer, token);
    const selected = context.selectedCompletionInfo;
    const first = items(answer)[0];
    const text = typeof first?.insertText === 'string' ? first.insertText : first?.insertText.value;
    this.log(
      `inline ${key} ${context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 'invoked' : 'automatic'}` +
        `${selected ? ` list:${JSON.stringify(selected.text)}` : ''}: ` +
        (token.isCancellationRequested ? 'cancelled' : answer ? `${JSON.stringify(text ?? '')}` : 'no answer'),
    );
    if (answer && text && !asked.closedList && this.closeListEnabled(document) && this.listGivesWay(document, position, context, text)) {
      asked.closedList = true;
      const editor = vscode.window.activeTextEditor;
      if (editor?.document === document && document.version === asked.version && editor.selection.active.isEqual(position)) {
        this.log(`inline ${key}: the suggest list closed`);
        void vscode.commands.executeCommand('hideSuggestWidget');
      }
    }
    return answer;
  }

  /**
   * Starts the server's request at `position` before VS Code asks (typing.ts): VS Code's ask for
   * the same text and cursor then shares it. Nothing when that request runs already.
   */
  ahead(document: vscode.TextDocument, position: vscode.Position, next: Next, answered: (document: vscode.TextDocument, answer: Answer) => void): void {
    const key = keyOf(document, position);
    if (this.asked.get(document.uri.toString())?.key === key) return;
    this.log(`inline ${key} asked ahead`);
    this.request(document, position, { triggerKind: vscode.InlineCompletionTriggerKind.Automatic, selectedCompletionInfo: undefined }, next, answered);
  }

  /** The document's request for this text and cursor: the one running, or a new one. */
  private request(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    next: Next,
    answered: (document: vscode.TextDocument, answer: Answer) => void,
  ): Asked {
    const uri = document.uri.toString();
    const key = keyOf(document, position);
    const running = this.asked.get(uri);
    if (running?.key === key) return running;
    // A newer text or cursor: the server would cancel the older request anyway.
    this.forget(uri);
    const source = new vscode.CancellationTokenSource();
    const answer = Promise.resolve(next(document, position, context, source.token)).then((a) => {
      if (!source.token.isCancellationRequested) answered(document, a);
      return a;
    });
    const asked: Asked = { key, version: document.version, position, answer, source, closedList: false };
    this.asked.set(uri, asked);
    // A failed request, or one answered with nothing (the client makes a cancelled or failed
    // request's answer null), is not kept: the next ask tries again.
    const drop = () => {
      if (this.asked.get(uri) === asked) this.asked.delete(uri);
    };
    answer.then((a) => {
      if (!a) drop();
    }, drop);
    return asked;
  }

  /**
   * Whether the suggest list closes for the answer `text`: with an item selected, when VS Code
   * would keep the answer hidden behind it; with none, for any answer (a list may be open and
   * still filtering, or the ask was the extension's own, unasked.ts; closing none is a no-op).
   */
  private listGivesWay(document: vscode.TextDocument, position: vscode.Position, context: vscode.InlineCompletionContext, text: string): boolean {
    const selected = context.selectedCompletionInfo;
    if (!selected) return true;
    const item = { start: selected.range.start.character, end: selected.range.end.character, text: selected.text };
    return selected.range.start.line === position.line && !extendsSelected(document.lineAt(position.line).text, position.character, item, text);
  }

  private closeListEnabled(document: vscode.TextDocument): boolean {
    return vscode.workspace.getConfiguration('crossfile', document).get<boolean>('inlineSuggest.closeSuggestList', true);
  }

  private forget(uri: string): void {
    const asked = this.asked.get(uri);
    if (!asked) return;
    asked.source.cancel();
    asked.source.dispose();
    this.asked.delete(uri);
  }

  dispose(): void {
    for (const uri of [...this.asked.keys()]) this.forget(uri);
    this.closed.dispose();
  }
}
