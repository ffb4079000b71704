// The status bar item: `crossfile · <model> · <retriever> · <latency> ms`, and in replay
// `· case 12/70 · CrossCodeEval ES 71.4` (each benchmark's headline metric in its own scale:
// `RepoEval ES 0.714`; a case mined from history adds its line's category, `· case 3/20 ·
// inproject · History ES 40`) while the case's file is the one being edited (or a panel has the
// focus), not in another file; its tooltip is the server's last `crossfile.status`.

import * as vscode from 'vscode';
import type { StatusResult } from './protocol';
import { caseLabel } from './scores';
import { type Launch, statusMarkdown } from './statusReport';

export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('crossfile.status', vscode.StatusBarAlignment.Right, 100);
  private retriever: string | undefined;
  private model: string | undefined;
  private latencyMs: number | undefined;
  private replay: { index: number; count: number; category?: string; uri: string } | undefined;
  private score: string | undefined;
  private server: StatusResult | undefined;
  private launch: Launch | undefined;
  // Until the server has answered `initialize` (`ready()`), so the bare name never shows early.
  private note: string | undefined = 'starting…';
  private readonly editorChanged: vscode.Disposable;

  constructor() {
    this.item.name = 'crossfile';
    this.item.command = 'crossfile.showContext';
    this.editorChanged = vscode.window.onDidChangeActiveTextEditor(() => this.render());
    this.render();
    this.item.show();
  }

  completed(retriever: string, latencyMs: number | undefined, model: string | undefined): void {
    this.retriever = retriever;
    this.model = model;
    this.latencyMs = latencyMs;
    this.note = undefined;
    this.render();
  }

  /** A case opened for replay in `uri`: its place in the file and, mined from history, its category. */
  replaying(index: number, count: number, category: string | undefined, uri: vscode.Uri): void {
    this.replay = { index, count, category, uri: uri.toString() };
    this.score = undefined;
    this.render();
  }

  /** The replayed case's score as `scores.headline` states it (undefined: none). */
  scored(score: string | undefined): void {
    this.score = score;
    this.render();
  }

  /** The server answered `initialize`: `launch` is what was started. */
  ready(launch: Launch): void {
    this.launch = launch;
    this.note = undefined;
    this.render();
  }

  /** The server's `crossfile.status`, shown in the tooltip. */
  serverStatus(answer: StatusResult): void {
    this.server = answer;
    this.render();
  }

  problem(note: string): void {
    this.note = note;
    this.render();
  }

  private render(): void {
    const parts = ['crossfile'];
    if (this.model) parts.push(this.model);
    if (this.retriever) parts.push(this.retriever);
    if (this.latencyMs !== undefined) parts.push(`${Math.round(this.latencyMs)} ms`);
    // The case and its score belong to its file: another file being edited shows neither.
    const editing = vscode.window.activeTextEditor?.document.uri.toString();
    if (this.replay && (editing === undefined || editing === this.replay.uri)) {
      parts.push(caseLabel(this.replay.index, this.replay.count, this.replay.category));
      if (this.score !== undefined) parts.push(this.score);
    }
    if (this.note) parts.push(this.note);
    this.item.text = parts.join(' · ');
    this.item.tooltip = this.server
      ? new vscode.MarkdownString(`${statusMarkdown(this.server, this.launch)}\n\nClick to show what the last completion was made from.`)
      : 'crossfile: click to show what the last completion was made from';
  }

  dispose(): void {
    this.editorChanged.dispose();
    this.item.dispose();
  }
}
