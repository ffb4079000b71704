// Replay Case, Next Case, Previous Case and Score: pickers for the cases file, the repositories
// folder (both remembered per workspace) and the case; the server lays the case out and scores it.

import * as vscode from 'vscode';
import type { CaseRow, Execute, ReplayCaseResult, ScoreResult } from './protocol';
import { benchmarkName, headline, metricsLine } from './scores';
import type { Status } from './status';


const CASES_KEY = 'crossfile.replay.cases';
const REPOS_KEY = 'crossfile.replay.repos';

/**
 * A path picked in a QuickPick: the remembered one, one typed into the box, or "Browse…" (the
 * open dialog). Undefined when dismissed.
 */
async function pickPath(title: string, remembered: string | undefined, folder: boolean): Promise<string | undefined> {
  const browse = '$(folder-opened) Browse…';
  const qp = vscode.window.createQuickPick();
  qp.title = title;
  qp.placeholder = 'type a path and press Enter, or pick';
  qp.ignoreFocusOut = true;
  const fixed: vscode.QuickPickItem[] = [];
  if (remembered) fixed.push({ label: remembered, description: 'last used' });
  fixed.push({ label: browse });
  qp.items = fixed;
  qp.onDidChangeValue((value) => {
    qp.items = value.trim() ? [{ label: value.trim(), description: 'typed' }, ...fixed] : fixed;
  });
  const picked = await new Promise<string | undefined>((resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0]?.label ?? (qp.value.trim() || undefined)));
    qp.onDidHide(() => resolve(undefined));
    qp.show();
  });
  qp.dispose();
  if (picked !== browse) return picked;
  const uris = await vscode.window.showOpenDialog({ canSelectFiles: !folder, canSelectFolders: folder, canSelectMany: false, title });
  return uris?.[0]?.fsPath;
}

async function pickCase(rows: CaseRow[]): Promise<CaseRow | undefined> {
  const items = rows.map((row) => ({
    label: row.id,
    description: row.category ? `${row.language} · ${row.category}` : row.language,
    detail: `${row.path}:${row.line}`,
    row,
  }));
  const chosen = await vscode.window.showQuickPick(items, {
    title: 'crossfile: case to replay',
    matchOnDescription: true,
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  return chosen?.row;
}

export class Replay {
  private caseId: string | undefined;
  private uri: vscode.Uri | undefined;

  constructor(
    private readonly execute: Execute,
    private readonly state: vscode.Memento,
    private readonly status: Status,
    private readonly output: () => vscode.OutputChannel,
  ) {}

  /** The replayed case at `uri`, if that is the replayed document. */
  caseAt(uri: vscode.Uri): string | undefined {
    return this.uri?.toString() === uri.toString() ? this.caseId : undefined;
  }

  async pickAndReplay(): Promise<void> {
    const cases = await pickPath('crossfile: cases file (JSONL)', this.state.get<string>(CASES_KEY), false);
    if (!cases) return;
    const repos = await pickPath('crossfile: repositories folder', this.state.get<string>(REPOS_KEY), true);
    if (!repos) return;
    await this.state.update(CASES_KEY, cases);
    await this.state.update(REPOS_KEY, repos);
    const rows = await this.execute('crossfile.listCases', { cases });
    if (rows.length === 0) {
      void vscode.window.showWarningMessage(`crossfile: no usable case in ${cases}`);
      return;
    }
    const row = await pickCase(rows);
    if (!row) return;
    // The setting applies to EvoCodeBench cases only; the server ignores it for the others.
    const setting = vscode.workspace.getConfiguration('crossfile').get<string>('replay.evocodebenchSetting');
    await this.open(await this.execute('crossfile.replayCase', { cases, repos, case: row.id, setting }));
  }

  async step(command: 'crossfile.nextCase' | 'crossfile.previousCase'): Promise<void> {
    if (!this.caseId) throw new Error('crossfile: no case is being replayed: run "Crossfile: Replay Case" first');
    await this.open(await this.execute(command));
  }

  async score(): Promise<ScoreResult> {
    if (!this.caseId || !this.uri) throw new Error('crossfile: no case is being replayed: run "Crossfile: Replay Case" first');
    const answer = await this.execute('crossfile.score', { caseId: this.caseId, uri: this.uri.toString() });
    this.status.scored(headline(answer.benchmark, answer.metrics));
    const metrics = metricsLine(answer.benchmark, answer.metrics);
    const said = `crossfile: case ${answer.caseId} (${benchmarkName(answer.benchmark)}, scored ${answer.scored}): ${metrics}`;
    const outcome = answer.outcome;
    if (outcome && !outcome.passed) {
      // The failing test's output, on request.
      const failed = outcome.tests.find((t) => t.status !== 'pass');
      const detail = failed ? `${failed.status}: ${failed.id}` : (outcome.message ?? outcome.status);
      void vscode.window.showWarningMessage(`${said} · ${detail}`, 'Show Output').then((choice) => {
        if (choice) this.showOutput(answer);
      });
    } else {
      void vscode.window.showInformationMessage(outcome ? `${said} · ${outcome.tests.length} test(s) passed` : said);
    }
    return answer;
  }

  /** Every test run on the body, with its output, in the crossfile output channel. */
  private showOutput(answer: ScoreResult): void {
    const channel = this.output();
    channel.appendLine(`case ${answer.caseId}: ${answer.outcome?.status ?? ''}`);
    for (const t of answer.outcome?.tests ?? []) {
      channel.appendLine(`--- ${t.id}: ${t.status} (${t.secs.toFixed(1)} s)`);
      channel.appendLine(t.output);
    }
    if (answer.outcome?.message) channel.appendLine(answer.outcome.message);
    channel.show(true);
  }

  /** Opens the case's document (with the server's text) at its cursor and asks for ghost text. */
  private async open(answer: ReplayCaseResult): Promise<void> {
    const uri = vscode.Uri.parse(answer.uri);
    const previous = this.uri;
    if (previous && previous.toString() !== uri.toString()) await closeWithoutSaving(previous);
    const doc = await vscode.workspace.openTextDocument(uri);
    if (doc.getText() !== answer.text) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), answer.text);
      await vscode.workspace.applyEdit(edit);
      await doc.save();
    }
    const editor = await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.One });
    const at = doc.validatePosition(new vscode.Position(answer.position.line, answer.position.character));
    editor.selection = new vscode.Selection(at, at);
    editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenter);
    this.caseId = answer.case.id;
    this.uri = uri;
    this.status.replaying(answer.case.index, answer.case.count, answer.case.category, uri);
    await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
  }
}

/** The previous case's copy is put back on disk by the server: its editor goes, unsaved. */
async function closeWithoutSaving(uri: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  for (const tab of tabs) {
    if (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri.toString()) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (doc?.isDirty) {
        await vscode.window.showTextDocument(doc, { preview: false });
        await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
      } else {
        await vscode.window.tabGroups.close(tab);
      }
    }
  }
}
