// Starting `crossfile serve` as the language client (which binary: locate.ts).

import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, type ServerOptions, TransportKind } from 'vscode-languageclient/node';

export const LANGUAGES = ['python', 'java', 'typescript', 'typescriptreact', 'csharp'];

export function createClient(binary: string, initializationOptions: Record<string, unknown>, middleware: LanguageClientOptions['middleware']): LanguageClient {
  const serverOptions: ServerOptions = {
    command: binary,
    args: ['serve'],
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
    initializationOptions,
    outputChannelName: 'crossfile',
    middleware,
  };
  const client = new LanguageClient('crossfile', 'crossfile', serverOptions, clientOptions);
  client.registerProposedFeatures();
  return client;
}

export async function showMissing(message: string): Promise<void> {
  const open = 'Open Settings';
  const choice = await vscode.window.showErrorMessage(message, open);
  if (choice === open) await vscode.commands.executeCommand('workbench.action.openSettings', 'crossfile.serverPath');
}
