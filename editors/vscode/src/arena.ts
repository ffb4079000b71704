// Arena battles in the editor (issue 34): suggestion 1 is VS Code's own ghost text (Tab accepts it
// and runs its `crossfile.arenaVote` command), marked "1" after the cursor's line; both
// suggestions show whole in the arena view beside the editor, marked 1 and 2 (Shift+Tab takes 2),
// so suggestion 2 covers no line of the code. Escape takes neither. Both are marked only 1 and 2:
// the server alone knows which arm made which, and says so only in Crossfile: Arena Reveal Last,
// after the vote.
//
// Only item 1 goes to VS Code, so its own next/previous suggestion cannot show item 2 as if it
// were a plain suggestion. VS Code asks again at the same text and cursor (the suggest list
// opening, closing…): the battle is shown once, and once voted on or dismissed it is never shown
// again. Typing on or moving the cursor ends it; the server records no choice when the next
// request supersedes the battle. So that a vote reaches the server before the request that
// supersedes its battle, a new completion request waits for the votes in flight (at most 2 s).

import * as vscode from 'vscode';
import { battleOf, endAfter, itemText, REVEAL_COMMAND, revealSummary, revealText, VOTE_COMMAND } from './battle';
import type { ArenaVoteResult, Execute } from './protocol';
import type { BattleEnd } from './render';
import { ArenaView } from './views';

type Answer = vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined;

/** The context key the Shift+Tab and Escape bindings require (package.json). */
const CONTEXT_KEY = 'crossfile.arenaBattle';
/** At most this long a new completion request waits for a vote in flight. */
const VOTE_WAIT_MS = 2_000;

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
  private readonly marker1 = vscode.window.createTextEditorDecorationType({
    after: {
      contentText: '1', color: ghost, border: '1px solid', borderColor: ghost, margin: '0 0 0 2ch', width: '2ch', textDecoration: 'none; text-align: center; border-radius: 3px',
    },
  });
  private readonly view = new ArenaView();
  private readonly subscriptions: vscode.Disposable[];

  /** `log`: a line for the output channel (with `crossfile.trace.server` on). */
  constructor(
    private readonly execute: Execute,
    private readonly log: (line: string) => void,
  ) {
    this.subscriptions = [
      this.marker1,
      vscode.workspace.onDidChangeTextDocument((e) => {
        const s = this.shown;
        if (!s || e.document.uri.toString() !== s.uri || e.contentChanges.length === 0) return;
        // VS Code inserts suggestion 1 (Tab), then runs its vote command.
        const text1 = itemText(s.first);
        const took1 = e.contentChanges.some((c) => c.text === text1 || (c.text.length > 1 && text1.endsWith(c.text)));
        if (took1) this.expectVote(s.id);
        this.clear(took1 ? 'picked 1' : 'passed');
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const s = this.shown;
        if (s && e.textEditor === s.editor && !e.selections[0]?.active.isEqual(s.position)) this.clear('passed');
      }),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        // The arena view beside does not count: it never takes the focus, so the editor stays active.
        if (this.shown && editor !== this.shown.editor) this.clear('passed');
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (this.shown?.uri === d.uri.toString()) this.clear('passed');
      }),
    ];
  }

  /** Resolves once the votes in flight have reached the server (or waited VOTE_WAIT_MS). */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /**
   * The answer as VS Code gets it: a battle becomes its item 1 alone, and both are shown in the
   * arena view (when `document` is the active editor's, at `position`); anything else is left as
   * it is.
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
    this.clear('passed');
    this.shown = { id: b.id, editor, uri: b.document.uri.toString(), version: b.document.version, position: b.position, first: b.first, second: b.second };
    const end = b.document.lineAt(b.position.line).range.end;
    editor.setDecorations(this.marker1, [new vscode.Range(end, end)]);
    this.view.battle(itemText(b.first), itemText(b.second));
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, true);
    this.log(`arena: battle ${b.id} shown at ${b.position.line + 1}:${b.position.character + 1} (2: ${JSON.stringify(itemText(b.second))})`);
  }

  /** Ends the battle shown, if any (nothing is sent): its marks go, the arena view says how it ended. */
  private clear(ended: BattleEnd): void {
    const s = this.shown;
    if (!s) return;
    this.shown = undefined;
    s.editor.setDecorations(this.marker1, []);
    this.view.over(ended);
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, false);
  }

  /** Shift+Tab: suggestion 2 into the document at its range, the ghost text hidden, the vote sent. */
  async pick2(): Promise<void> {
    const s = this.shown;
    if (!s) return;
    this.clear('picked 2');
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
    this.clear('dismissed');
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
      if (this.shown?.id === id) this.clear('picked 1');
      if (this.expected?.id === id) this.expected.arrived();
    }
    const sent = Promise.resolve(send());
    this.track(sent.then((a) => this.logVote(args[0], a as ArenaVoteResult | undefined), (e: unknown) => this.failed(e)));
    return sent;
  }

  /** Crossfile: Arena Reveal Last: the server's last recorded battle, arms named. */
  async revealLast(): Promise<void> {
    const reveal = await this.execute(REVEAL_COMMAND, {});
    if (!this.output) this.output = vscode.window.createOutputChannel('crossfile arena');
    this.output.replace(revealText(reveal));
    this.output.show(true);
    void vscode.window.showInformationMessage(revealSummary(reveal));
  }

  private vote(battle: number, pick: 1 | 2 | null): Promise<void> {
    const sent = this.execute(VOTE_COMMAND, { battle, pick }).then(
      (a) => this.logVote({ battle, pick }, a),
      (e: unknown) => this.failed(e),
    );
    this.track(sent);
    return sent;
  }

  private logVote(argument: unknown, answer: ArenaVoteResult | undefined): void {
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
    this.clear('passed');
    for (const s of this.subscriptions) s.dispose();
    this.output?.dispose();
  }
}
