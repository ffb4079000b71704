// Finding the `crossfile` binary and starting `crossfile serve` as the language client.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, type ServerOptions, TransportKind } from 'vscode-languageclient/node';

export const LANGUAGES = ['python', 'java', 'typescript', 'typescriptreact', 'csharp'];

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The binary `setting` names (a path, or a name looked up on PATH), or an error saying what was tried. */
export function locate(setting: string): { path: string } | { error: string } {
  const name = setting.trim() || 'crossfile';
  if (name.includes('/') || name.includes(path.sep)) {
    const file = path.resolve(name.replace(/^~(?=\/)/, process.env.HOME ?? '~'));
    return executable(file)
      ? { path: file }
      : { error: `crossfile: the server binary "${file}" (setting crossfile.serverPath) is missing or not executable` };
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (executable(file)) return { path: file };
  }
  return { error: `crossfile: "${name}" (setting crossfile.serverPath) is not on PATH (${process.env.PATH ?? ''})` };
}

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
