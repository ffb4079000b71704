// Which `crossfile` binary the extension starts: the setting crossfile.serverPath when set, else
// the server a platform VSIX carries (server/crossfile inside the extension), else `crossfile` on
// PATH. No vscode import, so it can be unit-tested on real files.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where the started binary came from, as the status report and the output channel say it. */
export type ServerSource = 'setting' | 'bundled' | 'path';

export interface Located {
  path: string;
  source: ServerSource;
}

/** The binary a platform VSIX carries, relative to the extension's folder. */
export const BUNDLED = path.join('server', 'crossfile');

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, pathVar: string): string | undefined {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (executable(file)) return file;
  }
  return undefined;
}

/**
 * The binary to start. `setting` is crossfile.serverPath (a path, or a name looked up on PATH;
 * empty when unset), `extensionPath` the extension's folder, `env` the environment (PATH, HOME).
 * A set path wins, and a set path that does not work is an error, never a silent fallback.
 */
export function locate(setting: string, extensionPath: string, env: NodeJS.ProcessEnv = process.env): Located | { error: string } {
  const pathVar = env.PATH ?? '';
  const name = setting.trim();
  if (name) {
    if (name.includes('/') || name.includes(path.sep)) {
      const file = path.resolve(name.replace(/^~(?=\/)/, env.HOME ?? '~'));
      return executable(file)
        ? { path: file, source: 'setting' }
        : { error: `crossfile: the server binary "${file}" (setting crossfile.serverPath) is missing or not executable` };
    }
    const found = onPath(name, pathVar);
    return found ? { path: found, source: 'setting' } : { error: `crossfile: "${name}" (setting crossfile.serverPath) is not on PATH (${pathVar})` };
  }
  const bundled = path.join(extensionPath, BUNDLED);
  if (executable(bundled)) return { path: bundled, source: 'bundled' };
  const found = onPath('crossfile', pathVar);
  if (found) return { path: found, source: 'path' };
  return {
    error:
      'crossfile: no server to start: this extension carries none (a VSIX packed without --target) and no `crossfile` is on PATH ' +
      `(${pathVar}). Install a VSIX for your platform, put crossfile on PATH (scripts/install) or set crossfile.serverPath.`,
  };
}

/** How the output channel and the status report say where the binary came from. */
export function sourceText(source: ServerSource): string {
  switch (source) {
    case 'setting':
      return 'crossfile.serverPath';
    case 'bundled':
      return 'carried by the extension';
    case 'path':
      return 'found on PATH';
  }
}
