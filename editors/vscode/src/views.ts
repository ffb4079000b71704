// The webview panels, one of each: the context view (follows the last completion), the compare
// view (Compare Retrievers shows each answer in it) and the arena view (a battle's two
// suggestions, so that suggestion 2 covers no line of the editor). A panel is created once; later
// contents replace its body in place (webview.ts), so its scroll position stays. ChunkInfo links open
// their file at their first line.

import * as vscode from 'vscode';
import type { CompareResult, ContextResult } from './protocol';
import { type BattleEnd, battleBody, battleOverBody, compareBody, contextBody } from './render';
import { page, renderMessage } from './webview';

/** A panel shown beside the editor, created when first shown and reused until the user closes it. */
class Panel {
  private current: vscode.WebviewPanel | undefined;

  constructor(
    private readonly viewType: string,
    private readonly title: string,
  ) {}

  get open(): boolean {
    return this.current !== undefined;
  }

  /** Shows `body`, creating the panel or revealing it (without taking the focus). */
  show(body: string): void {
    if (!this.current) {
      this.current = create(this.viewType, this.title);
      this.current.onDidDispose(() => (this.current = undefined));
      this.current.webview.html = page(this.current.webview.cspSource, this.title, body);
    } else {
      this.update(body);
    }
    this.current.reveal(undefined, true);
  }

  /** Replaces the contents of the open panel, if any, in place. */
  update(body: string): void {
    const p = this.current;
    if (!p) return;
    const write = () => {
      if (this.current === p) p.webview.html = page(p.webview.cspSource, this.title, body);
    };
    // A hidden webview has no page to post to: it loads `html` when shown again.
    if (!p.visible) return write();
    p.webview.postMessage(renderMessage(body)).then(
      (delivered) => {
        if (!delivered) write();
      },
      () => write(),
    );
  }
}

function create(viewType: string, title: string): vscode.WebviewPanel {
  const p = vscode.window.createWebviewPanel(viewType, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
    enableScripts: true,
    localResourceRoots: [],
  });
  p.webview.onDidReceiveMessage(async (m: unknown) => {
    if (typeof m !== 'object' || m === null) return;
    const { type, uri, line } = m as { type?: unknown; uri?: unknown; line?: unknown };
    if (type !== 'open' || typeof uri !== 'string') return;
    const target = vscode.Uri.parse(uri);
    if (target.scheme !== 'file') return;
    const at = Math.max(0, (typeof line === 'number' ? line : 1) - 1);
    await vscode.window.showTextDocument(target, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(at, 0, at, 0) });
  });
  return p;
}

export class ContextView {
  private readonly panel = new Panel('crossfile.context', 'crossfile: context');

  get open(): boolean {
    return this.panel.open;
  }

  show(answer: ContextResult | null): void {
    this.panel.show(contextBody(answer));
  }

  /** Follows a new completion, if the view is open. */
  update(answer: ContextResult | null): void {
    if (this.panel.open) this.panel.update(contextBody(answer));
  }
}

export class CompareView {
  private readonly panel = new Panel('crossfile.compare', 'crossfile: compare');

  show(answer: CompareResult): void {
    this.panel.show(compareBody(answer));
  }
}

export class ArenaView {
  private readonly panel = new Panel('crossfile.arena', 'crossfile: arena');

  /** A battle shows: both suggestions, the panel revealed beside the editor (the editor keeps the focus). */
  battle(first: string, second: string): void {
    this.panel.show(battleBody(first, second));
  }

  /** The battle ended; the open panel says how. */
  over(ended: BattleEnd): void {
    this.panel.update(battleOverBody(ended));
  }
}
