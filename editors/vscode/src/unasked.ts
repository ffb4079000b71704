// Typing that VS Code did not ask about. VS Code 1.100 asks the inline provider about 60 ms after
// a keystroke, but now and then not at all: in the end-to-end test, the first keystroke after
// activation (the suggest list opening on it) started no inline fetch at all in VS Code's own log
// (`editor.inlineSuggest.logFetch`), and the next keystroke did. So each typed change of a
// served document in the active editor is watched: when no ask about its version has come
// `ASK_WAIT_MS` later, and the text and the cursor are still the same, the extension asks VS Code
// to trigger the inline suggestion, as Alt+\ does.

import * as vscode from 'vscode';

/** How long after a keystroke an ask is overdue: VS Code's own debounce is 50 ms. */
export const ASK_WAIT_MS = 250;

export class UnaskedTyping implements vscode.Disposable {
  /** The last document version VS Code asked about, by URI. */
  private readonly askedVersion = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: vscode.Disposable[];

  /** `served`: whether the server completes in the document; `log`: a line for the output channel. */
  constructor(
    private readonly served: (document: vscode.TextDocument) => boolean,
    private readonly log: (line: string) => void,
  ) {
    this.listeners = [
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
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
    clearTimeout(this.timer);
    const version = e.document.version;
    this.timer = setTimeout(() => this.check(e.document, version), ASK_WAIT_MS);
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
