// What the extension does on each keystroke in a served document, beside VS Code's own asks.
//
// Ahead: VS Code asks its inline provider a moment after a keystroke (its own debounce, not
// measured here), Neovim's plugin at once. So on a typed change, as soon as the editor's
// cursor has moved with it, the server's request for that text and cursor starts (`ahead`, which
// InlineRequests shares with VS Code's ask when it comes): a completion that needs the model
// starts those milliseconds earlier, inside a person's pause.
//
// Unasked: VS Code 1.100 now and then asks nothing at all: in the end-to-end test, the first
// keystroke after activation (the suggest list opening on it) started no inline fetch in VS Code's
// own log (`editor.inlineSuggest.logFetch`), and the next keystroke did. When no ask about a typed
// version has come `ASK_WAIT_MS` later, and the text and the cursor are still the same, the
// extension asks VS Code to trigger the inline suggestion, as Alt+\ does.

import * as vscode from 'vscode';

/** How long after a keystroke an ask is overdue: VS Code's own debounce is 50 ms. */
export const ASK_WAIT_MS = 250;

export class Typing implements vscode.Disposable {
  /** The last document version VS Code asked about, by URI. */
  private readonly askedVersion = new Map<string, number>();
  /** The typed change whose cursor is awaited to ask the server ahead. */
  private typed: { document: vscode.TextDocument; version: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: vscode.Disposable[];

  /**
   * `served`: whether the server completes in the document; `ahead`: starts the server's request
   * at a cursor; `log`: a line for the output channel.
   */
  constructor(
    private readonly served: (document: vscode.TextDocument) => boolean,
    private readonly ahead: (document: vscode.TextDocument, position: vscode.Position) => void,
    private readonly log: (line: string) => void,
  ) {
    this.listeners = [
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
      vscode.window.onDidChangeTextEditorSelection((e) => this.moved(e)),
      vscode.workspace.onDidCloseTextDocument((d) => this.askedVersion.delete(d.uri.toString())),
    ];
  }

  /** VS Code asked the provider about `document` as it is now. */
  asked(document: vscode.TextDocument): void {
    this.askedVersion.set(document.uri.toString(), document.version);
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    // Typing only: an undo or redo (`reason`) or a change in another document is not.
    if (editor?.document !== e.document || e.contentChanges.length === 0 || e.reason !== undefined) return;
    if (!this.served(e.document) || !vscode.workspace.getConfiguration('editor.inlineSuggest', e.document).get<boolean>('enabled', true)) return;
    const version = e.document.version;
    this.typed = { document: e.document, version };
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(e.document, version), ASK_WAIT_MS);
  }

  /** The cursor after a typed change (the editor moves it after the text changed). */
  private moved(e: vscode.TextEditorSelectionChangeEvent): void {
    const typed = this.typed;
    if (!typed || e.textEditor.document !== typed.document || e.textEditor !== vscode.window.activeTextEditor) return;
    this.typed = undefined;
    const selection = e.selections[0];
    if (e.selections.length !== 1 || !selection?.isEmpty || typed.document.version !== typed.version) return;
    this.ahead(typed.document, selection.active);
  }

  private check(document: vscode.TextDocument, version: number): void {
    this.timer = undefined;
    const editor = vscode.window.activeTextEditor;
    if (editor?.document !== document || document.version !== version || !editor.selection.isEmpty) return;
    if ((this.askedVersion.get(document.uri.toString()) ?? -1) >= version) return;
    this.log(`inline ${version}: VS Code did not ask ${ASK_WAIT_MS} ms after the keystroke; triggered`);
    void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const listener of this.listeners) listener.dispose();
  }
}
