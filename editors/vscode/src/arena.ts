// Arena battles in the editor (issue 34): suggestion 1 is VS Code's own ghost text (Tab accepts it
// and runs its `crossfile.arenaVote` command), suggestion 2 is drawn below it (Shift+Tab), Escape
// takes neither. Both are marked only 1 and 2: the server alone knows which arm made which, and
// says so only in Crossfile: Arena Reveal Last, after the vote.
//
// Only item 1 goes to VS Code, so its own next/previous suggestion cannot show item 2 as if it
// were a plain suggestion. VS Code asks again at the same text and cursor (the suggest list
// opening, closing…): the battle is drawn once, and once voted on or dismissed it is never shown
// again. Typing on or moving the cursor clears it; the server records no choice when the next
// request supersedes the battle. So that a vote reaches the server before the request that
// supersedes its battle, a new completion request waits for the votes in flight (at most 2 s).

import * as vscode from 'vscode';
import { battleOf, endAfter, itemText, LABEL_2, REVEAL_COMMAND, revealSummary, revealText, stackedRows, visualColumn, VOTE_COMMAND } from './battle';
import type { ArenaReveal, ArenaVoteAnswer } from './protocol';

type Answer = vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined;
type Execute = <T>(command: string, argument?: unknown) => Promise<T>;

/** The context key the Shift+Tab and Escape bindings require (package.json). */
const CONTEXT_KEY = 'crossfile.arenaBattle';
/** At most this long a new completion request waits for a vote in flight. */
const VOTE_WAIT_MS = 2_000;
/** At most this many rows of suggestion 2 are drawn. */
const MAX_ROWS = 12;

interface Shown {
  id: number;
  editor: vscode.TextEditor;
  uri: string;
  version: number;
  position: vscode.Position;
  first: vscode.InlineCompletionItem;
  second: vscode.InlineCompletionItem;
}

function itemsOf(answer: Answer): vscode.InlineCompletionItem[] {
  if (!answer) return [];
  return Array.isArray(answer) ? answer : answer.items;
}

/** Whether a server answer is a battle (two items voting through `crossfile.arenaVote`). */
export function isBattle(answer: Answer): boolean {
  return battleOf(itemsOf(answer)) !== undefined;
}

const ghost = new vscode.ThemeColor('editorGhostText.foreground');

export class Arena implements vscode.Disposable {
  private shown: Shown | undefined;
  /** Battles voted on or dismissed: never drawn again. */
  private readonly finished = new Set<number>();
  /** Votes in flight (each settles within VOTE_WAIT_MS), awaited by a new completion request. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Suggestion 1 was accepted and its vote has not passed yet: called when it does. */
  private expected: { id: number; arrived: () => void } | undefined;
  private output: vscode.OutputChannel | undefined;
  // "1" after the cursor's line (ghost text 1 is on it).
  private static readonly MARKER_1: vscode.ThemableDecorationAttachmentRenderOptions = {
    contentText: '1', color: ghost, border: '1px solid', borderColor: ghost, margin: '0 0 0 2ch', width: '2ch', textDecoration: 'none; text-align: center; border-radius: 3px',
  };
  private readonly marker1 = vscode.window.createTextEditorDecorationType({ after: Arena.MARKER_1 });
  // With no line below the cursor's: the "1", then suggestion 2, after the cursor's line (one
  // decoration, so in that order).
  private readonly after2 = vscode.window.createTextEditorDecorationType({ before: Arena.MARKER_1, after: { color: ghost, fontStyle: 'italic', margin: '0 0 0 2ch' } });
  // Suggestion 2, one row per line below the cursor's: drawn over the line (the editor's
  // background hides it while the battle shows), as the ghost text is drawn.
  private readonly rows2 = vscode.window.createTextEditorDecorationType({
    before: {
      color: ghost,
      fontStyle: 'italic',
      backgroundColor: new vscode.ThemeColor('editor.background'),
      textDecoration: 'none; position: absolute; left: 0; top: 0; width: 100%; height: 100%; z-index: 1; white-space: pre; pointer-events: none',
    },
  });
  private readonly subscriptions: vscode.Disposable[];

  /** `log`: a line for the output channel (with `crossfile.trace.server` on). */
  constructor(
    private readonly execute: Execute,
    private readonly log: (line: string) => void,
  ) {
    this.subscriptions = [
      this.marker1,
      this.rows2,
      this.after2,
      vscode.workspace.onDidChangeTextDocument((e) => {
        const s = this.shown;
        if (!s || e.document.uri.toString() !== s.uri || e.contentChanges.length === 0) return;
        // VS Code inserts suggestion 1 (Tab), then runs its vote command.
        const text1 = itemText(s.first);
        if (e.contentChanges.some((c) => c.text === text1 || (c.text.length > 1 && text1.endsWith(c.text)))) this.expectVote(s.id);
        this.clear();
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const s = this.shown;
        if (s && e.textEditor === s.editor && !e.selections[0]?.active.isEqual(s.position)) this.clear();
      }),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (this.shown && editor !== this.shown.editor) this.clear();
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (this.shown?.uri === d.uri.toString()) this.clear();
      }),
    ];
  }

  /** Resolves once the votes in flight have reached the server (or waited VOTE_WAIT_MS). */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /**
   * The answer as VS Code gets it: a battle becomes its item 1 alone, and item 2 is drawn below
   * (when `document` is the active editor's, at `position`); anything else is left as it is.
   */
  shape(document: vscode.TextDocument, position: vscode.Position, answer: Answer): Answer {
    const items = itemsOf(answer);
    const id = battleOf(items);
    const [first, second] = items;
    if (id === undefined || !first || !second) return answer;
    if (this.finished.has(id)) return [];
    this.draw({ id, document, position, first, second });
    return [first];
  }

  private draw(b: { id: number; document: vscode.TextDocument; position: vscode.Position; first: vscode.InlineCompletionItem; second: vscode.InlineCompletionItem }): void {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document !== b.document || editor.document.version !== b.document.version || !editor.selection.active.isEqual(b.position)) return;
    if (this.shown?.id === b.id && this.shown.editor === editor) return;
    this.clear();
    this.shown = { id: b.id, editor, uri: b.document.uri.toString(), version: b.document.version, position: b.position, first: b.first, second: b.second };
    const line = b.document.lineAt(b.position.line);
    const tabSize = typeof editor.options.tabSize === 'number' ? editor.options.tabSize : 4;
    const column = visualColumn(line.text.slice(0, b.position.character), tabSize);
    const below = Math.min(MAX_ROWS, b.document.lineCount - 1 - b.position.line);
    const stacked = stackedRows(itemText(b.second), column, below, tabSize);
    editor.setDecorations(
      this.rows2,
      stacked.rows.map((text, i) => ({
        range: new vscode.Range(b.position.line + 1 + i, 0, b.position.line + 1 + i, 0),
        renderOptions: { before: { contentText: text } },
      })),
    );
    editor.setDecorations(this.after2, stacked.after === undefined ? [] : [{ range: new vscode.Range(line.range.end, line.range.end), renderOptions: { after: { contentText: stacked.after } } }]);
    editor.setDecorations(this.marker1, stacked.after === undefined ? [new vscode.Range(line.range.end, line.range.end)] : []);
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, true);
    this.log(`arena: battle ${b.id} shown at ${b.position.line + 1}:${b.position.character + 1} (${stacked.rows.length ? `${stacked.rows.length} rows below` : 'after the line'}; ${LABEL_2.trim()} ${JSON.stringify(itemText(b.second))})`);
  }

  /** Hides the battle (nothing is sent). */
  private clear(): void {
    const s = this.shown;
    if (!s) return;
    this.shown = undefined;
    for (const type of [this.marker1, this.rows2, this.after2]) s.editor.setDecorations(type, []);
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, false);
  }

  /** Shift+Tab: suggestion 2 into the document at its range, the ghost text hidden, the vote sent. */
  async pick2(): Promise<void> {
    const s = this.shown;
    if (!s) return;
    this.clear();
    this.finished.add(s.id);
    const editor = vscode.window.activeTextEditor;
    if (editor !== s.editor || editor.document.version !== s.version) return;
    // Sent first: the request the edit causes waits for it (settled()).
    const vote = this.vote(s.id, 2);
    await vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
    const range = s.second.range ?? new vscode.Range(s.position, s.position);
    const insert = s.second.insertText;
    if (typeof insert === 'string') {
      if (await editor.edit((b) => b.replace(range, insert))) {
        const end = endAfter(range.start, insert);
        editor.selection = new vscode.Selection(end.line, end.character, end.line, end.character);
      }
    } else {
      await editor.insertSnippet(insert, range);
    }
    await vote;
  }

  /** Escape: both suggestions hidden, no choice recorded. */
  async dismiss(): Promise<void> {
    const s = this.shown;
    if (!s) return;
    this.clear();
    this.finished.add(s.id);
    const vote = this.vote(s.id, null);
    await vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
    await vote;
  }

  /**
   * The middleware's `executeCommand` for `crossfile.arenaVote`: VS Code's own accept of
   * suggestion 1 runs the item's command, which vscode-languageclient sends to the server.
   */
  voted(args: unknown[], send: () => unknown): Promise<unknown> {
    const argument = args[0];
    const id = typeof argument === 'object' && argument !== null ? (argument as { battle?: unknown }).battle : undefined;
    if (typeof id === 'number') {
      this.finished.add(id);
      if (this.shown?.id === id) this.clear();
      if (this.expected?.id === id) this.expected.arrived();
    }
    const sent = Promise.resolve(send());
    this.track(sent.then((a) => this.logVote(args[0], a as ArenaVoteAnswer | undefined), (e: unknown) => this.failed(e)));
    return sent;
  }

  /** Crossfile: Arena Reveal Last: the server's last recorded battle, arms named. */
  async revealLast(): Promise<void> {
    const reveal = await this.execute<ArenaReveal>(REVEAL_COMMAND, {});
    if (!this.output) this.output = vscode.window.createOutputChannel('crossfile arena');
    this.output.replace(revealText(reveal));
    this.output.show(true);
    void vscode.window.showInformationMessage(revealSummary(reveal));
  }

  private vote(battle: number, pick: 1 | 2 | null): Promise<void> {
    const sent = this.execute<ArenaVoteAnswer>(VOTE_COMMAND, { battle, pick }).then(
      (a) => this.logVote({ battle, pick }, a),
      (e: unknown) => this.failed(e),
    );
    this.track(sent);
    return sent;
  }

  private logVote(argument: unknown, answer: ArenaVoteAnswer | undefined): void {
    const said = answer ? (answer.recorded ? `recorded in ${answer.votes}` : 'not recorded (the battle was no longer pending)') : 'no answer';
    this.log(`arena: vote ${JSON.stringify(argument)}: ${said}`);
  }

  private failed(e: unknown): void {
    void vscode.window.showWarningMessage(`crossfile arena: the vote was not recorded: ${e instanceof Error ? e.message : String(e)}`);
  }

  /** Suggestion 1 went into the document: its vote comes next, before any new request. */
  private expectVote(id: number): void {
    let arrived = (): void => undefined;
    const passed = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    this.expected = { id, arrived };
    this.track(passed.then(() => {
      if (this.expected?.id === id) this.expected = undefined;
    }));
  }

  private track(promise: Promise<void>): void {
    let timer: NodeJS.Timeout | undefined;
    const bounded = Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, VOTE_WAIT_MS)))]).then(() => {
      clearTimeout(timer);
      this.inFlight.delete(bounded);
    });
    this.inFlight.add(bounded);
  }

  dispose(): void {
    this.clear();
    for (const s of this.subscriptions) s.dispose();
    this.output?.dispose();
  }
}
