// The two webview panels: the context view (follows the last completion) and the compare view.
// Chunk links open their file at their first line.

import * as vscode from 'vscode';
import type { CompareAnswer, ContextAnswer } from './protocol';
import { compareBody, contextBody } from './render';
import { page } from './webview';

function panel(viewType: string, title: string): vscode.WebviewPanel {
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
  private current: vscode.WebviewPanel | undefined;

  get open(): boolean {
    return this.current !== undefined;
  }

  show(answer: ContextAnswer | null): void {
    if (!this.current) {
      this.current = panel('crossfile.context', 'crossfile: context');
      this.current.onDidDispose(() => (this.current = undefined));
    }
    this.update(answer);
    this.current.reveal(undefined, true);
  }

  update(answer: ContextAnswer | null): void {
    if (this.current) this.current.webview.html = page(this.current.webview.cspSource, 'crossfile: context', contextBody(answer));
  }
}

export function showCompare(answer: CompareAnswer): void {
  const p = panel('crossfile.compare', 'crossfile: compare');
  p.webview.html = page(p.webview.cspSource, 'crossfile: compare', compareBody(answer));
}
