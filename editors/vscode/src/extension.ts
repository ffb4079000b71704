// Activation: starts `crossfile serve` through vscode-languageclient (ghost text from
// textDocument/inlineCompletion, completion items), sends the `crossfile.*` settings, and wires the
// commands, the status bar and the views. Everything it shows comes from the server.

import * as vscode from 'vscode';
import { DidChangeConfigurationNotification, ExecuteCommandRequest, InlineCompletionRequest, type LanguageClient, type Middleware } from 'vscode-languageclient/node';
import { Arena, isBattle } from './arena';
import { VOTE_COMMAND } from './battle';
import type { Execute, StatusResult } from './protocol';
import { type Answer, InlineRequests, type Next } from './inline';
import { Replay } from './replay';
import { RECENT_LINES, RecentLines, recentLinesParams, shownLines } from './recentLines';
import { retrieverItems } from './retrievers';
import { locate, sourceText } from './locate';
import { LANGUAGES, createClient, showMissing } from './server';
import { nest, serverKeys } from './settings';
import { Status } from './status';
import { type Launch, statusText } from './statusReport';
import { Typing } from './typing';
import { CompareView, ContextView } from './views';

let client: LanguageClient | undefined;

/** The server options: every contributed server setting the user set, nested by its dots. */
function serverSettings(contributed: Record<string, unknown>): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('crossfile');
  return nest([
    ...serverKeys(contributed).map((key): [string, unknown] => {
      const seen = config.inspect(key);
      const set = seen?.workspaceFolderValue ?? seen?.workspaceValue ?? seen?.globalValue;
      return [key, set === undefined || set === '' ? undefined : set];
    }),
    // VS Code's workspace trust decides what the workspace's own crossfile.toml may choose
    // (endpoints, API-key variables, model files, the cache directory).
    ['trust.workspace', vscode.workspace.isTrusted],
  ]);
}

async function guarded(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (e) {
    void vscode.window.showErrorMessage(e instanceof Error ? e.message : String(e));
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const contributed = (context.extension.packageJSON as { contributes: { configuration: { properties: Record<string, unknown> } } })
    .contributes.configuration.properties;
  const status = new Status();
  // What was started, once the server has answered (the status report names it).
  let launch: Launch | undefined;
  const contextView = new ContextView();
  const compareView = new CompareView();
  const trace = (line: string) => {
    if (vscode.workspace.getConfiguration('crossfile').get<string>('trace.server', 'off') !== 'off') client?.outputChannel.appendLine(line);
  };
  const inline = new InlineRequests(trace);
  context.subscriptions.push(status, inline);

  const execute: Execute = async (command, argument) => {
    if (!client) throw new Error('crossfile: the server is not running (see the setting crossfile.serverPath)');
    const args = argument === undefined ? [] : [argument];
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as Awaited<ReturnType<Execute>>;
  };
  // The output of a scored body's tests (EvoCodeBench), made when first shown.
  let testOutput: vscode.OutputChannel | undefined;
  const tests = (): vscode.OutputChannel => {
    if (!testOutput) {
      testOutput = vscode.window.createOutputChannel('crossfile tests');
      context.subscriptions.push(testOutput);
    }
    return testOutput;
  };
  const replay = new Replay(execute, context.workspaceState, status, tests);

  // The status item's tooltip follows the server's `crossfile.status`: followStatus(ms) asks once,
  // ms later (calls in the meantime fold into it), and again every 2 s while an index is building.
  let statusTimer: NodeJS.Timeout | undefined;
  const askStatus = async (): Promise<StatusResult> => {
    const answer = await execute('crossfile.status');
    status.serverStatus(answer);
    if (answer.folders.some((f) => f.index === 'building')) followStatus(2_000);
    return answer;
  };
  const followStatus = (delayMs: number): void => {
    if (statusTimer || !client) return;
    statusTimer = setTimeout(() => {
      statusTimer = undefined;
      void askStatus().catch(() => undefined);
    }, delayMs);
  };
  context.subscriptions.push({ dispose: () => clearTimeout(statusTimer) });

  // After each inline completion: what it was made from, for the status bar and the context view.
  let lastDocument: vscode.Uri | undefined;
  const followLast = async (document: vscode.TextDocument): Promise<void> => {
    lastDocument = document.uri;
    const answer = await execute('crossfile.context', { uri: document.uri.toString() });
    if (!answer) return;
    status.completed(answer.retriever, answer.latencyMs, answer.model);
    followStatus(3_000);
    contextView.update(answer);
  };
  const arena = new Arena(execute, trace);
  context.subscriptions.push(arena);
  // The server's inline completion, as vscode-languageclient asks for it; a request waits for the
  // arena's votes in flight.
  const inlineRequest: Next = async (document, position, ctx, token) => {
    await arena.settled();
    if (!client) return null;
    const running = client;
    try {
      const result = await running.sendRequest(InlineCompletionRequest.type, running.code2ProtocolConverter.asInlineCompletionParams(document, position, ctx), token);
      return token.isCancellationRequested ? null : await running.protocol2CodeConverter.asInlineCompletionResult(result, token);
    } catch (error: unknown) {
      return running.handleFailedRequest(InlineCompletionRequest.type, token, error, null);
    }
  };
  // After each answer, what made it (the status bar, the context view); not a battle's, which
  // would name an arm.
  const answered = (document: vscode.TextDocument, answer: Answer): void => {
    if (!isBattle(answer)) void followLast(document).catch(() => undefined);
  };
  // On each keystroke the server is asked at once, and VS Code is asked to ask when it forgot
  // (typing.ts).
  const typing = new Typing(
    (d) => launch !== undefined && d.uri.scheme === 'file' && LANGUAGES.includes(d.languageId),
    (d, position) => inline.ahead(d, position, inlineRequest, answered),
    trace,
  );
  context.subscriptions.push(typing);
  const middleware: Middleware = {
    // One suggestion, shown once: with ghost text on, the suggest list gets no crossfile item (a
    // second model request per keystroke, which would also cancel the ghost text's: the server
    // answers one completion per document at a time). With it off, the list has the item.
    provideCompletionItem: (document, position, ctx, token, next) =>
      vscode.workspace.getConfiguration('editor.inlineSuggest', document).get<boolean>('enabled', true)
        ? undefined
        : next(document, position, ctx, token),
    // One server request per text and cursor, shared by VS Code's repeated asks (and started
    // ahead of them on a keystroke); the suggest list gives way to an answer it would hide
    // (inline.ts). A battle is shown as two blind suggestions (arena.ts).
    provideInlineCompletionItems: async (document, position, ctx, token) => {
      typing.asked(document);
      const answer = await inline.provide(document, position, ctx, token, inlineRequest, answered);
      return arena.shape(document, position, answer);
    },
    // VS Code's accept of a battle's suggestion 1 runs its `crossfile.arenaVote`, registered by
    // vscode-languageclient as the server announces it.
    executeCommand: (command, args, next) =>
      command === VOTE_COMMAND ? arena.voted(args, () => next(command, args)) : next(command, args),
  };

  const register = (id: string, run: () => Promise<unknown>) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, () => guarded(run)));
  register('crossfile.replay', () => replay.pickAndReplay());
  register('crossfile.next', () => replay.step('crossfile.nextCase'));
  register('crossfile.previous', () => replay.step('crossfile.previousCase'));
  register('crossfile.scoreBuffer', () => replay.score());
  register('crossfile.compareRetrievers', async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new Error('crossfile: open a file and put the cursor where to compare');
    const defaults = vscode.workspace.getConfiguration('crossfile').get<string[]>('compare.retrievers') ?? [];
    // The specs the server accepts, with what each needs; the user's defaults picked.
    const items = retrieverItems(await execute('crossfile.retrievers'), defaults);
    const picked = await vscode.window.showQuickPick(items, { canPickMany: true, title: 'crossfile: retrievers to compare', ignoreFocusOut: true });
    if (!picked || picked.length === 0) return;
    const specs: string[] = [];
    for (const item of picked) {
      if (item.spec !== undefined) {
        specs.push(item.spec);
        continue;
      }
      // A composite form: the user types the whole spec; the server refuses one that does not parse.
      const prefix = item.prefix ?? '';
      const typed = await vscode.window.showInputBox({
        title: `crossfile: ${item.label}`,
        prompt: item.description,
        value: prefix,
        valueSelection: [prefix.length, prefix.length],
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() === '' || v.trim() === prefix || v.includes('<') ? `a spec of the form ${item.label}` : undefined),
      });
      if (typed === undefined) return;
      specs.push(typed.trim());
    }
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `crossfile: comparing ${specs.length} retrievers…` },
      () =>
        execute('crossfile.compare', {
          uri: editor.document.uri.toString(),
          position: { line: editor.selection.active.line, character: editor.selection.active.character },
          retrievers: specs,
        }),
    );
    compareView.show(answer);
  });
  // The server's status as text, in its own output channel (made when first shown).
  let statusOutput: vscode.OutputChannel | undefined;
  register('crossfile.showStatus', async () => {
    const answer = await askStatus();
    if (!statusOutput) {
      statusOutput = vscode.window.createOutputChannel('crossfile status');
      context.subscriptions.push(statusOutput);
    }
    statusOutput.replace(statusText(answer, launch));
    statusOutput.show(true);
  });
  register('crossfile.arenaPick2', () => arena.pick2());
  register('crossfile.arenaDismiss', () => arena.dismiss());
  register('crossfile.arenaRevealLast', () => arena.revealLast());
  register('crossfile.showContext', async () => {
    // The active editor's last completion, else (a webview has the focus) the last one anywhere.
    const uri = vscode.window.activeTextEditor?.document.uri ?? lastDocument;
    contextView.show(uri ? await execute('crossfile.context', { uri: uri.toString() }) : null);
  });

  const located = locate(vscode.workspace.getConfiguration('crossfile').get<string>('serverPath') ?? '', context.extensionPath);
  if ('error' in located) {
    status.problem('no server');
    void showMissing(located.error);
    return;
  }
  client = createClient(located.path, serverSettings(contributed), middleware);
  // The server resolves them again (and may rebuild the index): its status follows.
  const sendSettings = () => {
    void client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { crossfile: serverSettings(contributed) } });
    followStatus(1_000);
  };
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!client || !e.affectsConfiguration('crossfile')) return;
      if (e.affectsConfiguration('crossfile.serverPath')) {
        void vscode.window.showInformationMessage('crossfile: reload the window to start the server from the new crossfile.serverPath');
      }
      sendSettings();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(sendSettings),
  );
  // What the user looks at, for the server's ring of recent chunks (`recent`).
  const recent = new RecentLines((lines) => {
    void client?.sendNotification(RECENT_LINES, recentLinesParams(lines));
  });
  const shown = (editor: vscode.TextEditor | undefined) =>
    editor && editor.document.uri.scheme === 'file' ? shownLines(editor.document.uri.toString(), editor.visibleRanges) : undefined;
  context.subscriptions.push(
    recent,
    vscode.window.onDidChangeActiveTextEditor((editor) => recent.activated(shown(editor))),
    vscode.window.onDidChangeTextEditorVisibleRanges((e) => recent.moved(shown(e.textEditor))),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      const selection = e.selections[0];
      if (!selection || selection.isEmpty || e.textEditor.document.uri.scheme !== 'file') return;
      recent.moved({ uri: e.textEditor.document.uri.toString(), first: selection.start.line, last: selection.end.line });
    }),
  );
  try {
    await client.start();
    const info = client.initializeResult?.serverInfo;
    launch = { ...located, extensionVersion: String(context.extension.packageJSON.version) };
    // Which binary answered, and its release, whatever the trace setting.
    client.outputChannel.appendLine(`crossfile: started ${located.path} (${sourceText(located.source)}): ${info?.name ?? 'crossfile'} ${info?.version ?? '(no version given)'}`);
    recent.activated(shown(vscode.window.activeTextEditor));
    status.ready(launch);
    followStatus(0);
  } catch (e) {
    status.problem('server failed');
    void vscode.window.showErrorMessage(`crossfile: the server ${located.path} did not start: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
