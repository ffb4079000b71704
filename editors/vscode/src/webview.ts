// What both webviews share: escaping, a nonce, and the page frame with a strict content security
// policy (nothing remote; styles and the one script carry the nonce) and VS Code's theme colours.
// The page is written once; later contents come as a message and replace the body in place, so
// the reader's scroll position stays.

import { randomBytes } from 'node:crypto';

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function nonce(): string {
  return randomBytes(16).toString('base64').replace(/[^A-Za-z0-9]/g, '');
}

export function csp(cspSource: string, n: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource} 'nonce-${n}'`,
    `script-src 'nonce-${n}'`,
    `img-src ${cspSource}`,
  ].join('; ');
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size);
  color: var(--vscode-foreground); background: var(--vscode-editor-background); }
h1 { font-size: 1.1em; } h2 { font-size: 1em; margin: 0.6em 0 0.3em; }
pre, code { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
pre { white-space: pre-wrap; background: var(--vscode-textCodeBlock-background); padding: 0.4em; margin: 0.2em 0; }
.columns { display: flex; gap: 1em; align-items: flex-start; }
.column { flex: 1 1 0; min-width: 14em; border: 1px solid var(--vscode-panel-border); padding: 0.5em; }
.upper { border-color: var(--vscode-editorWarning-foreground); }
.badge { color: var(--vscode-editorWarning-foreground); font-weight: bold; }
.error { color: var(--vscode-errorForeground); }
a.chunk { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: none; display: block; }
a.chunk:hover { text-decoration: underline; }
.muted { color: var(--vscode-descriptionForeground); }
.origin, .source { color: var(--vscode-descriptionForeground); font-style: italic; }
.overlap { color: var(--vscode-descriptionForeground); font-size: 0.8em; font-weight: normal; }
del { background: var(--vscode-diffEditor-removedTextBackground); text-decoration: line-through; }
ins { background: var(--vscode-diffEditor-insertedTextBackground); text-decoration: none; }
table { border-collapse: collapse; } td, th { padding: 0.1em 0.6em 0.1em 0; text-align: left; }
`;

/**
 * Clicks on `a.chunk` post `{type: 'open', uri, line}` to the extension; a `{type: 'render', body}`
 * message replaces the contents (the body's HTML, escaped by render.ts) and keeps the scroll
 * position, which the page also keeps across being hidden and shown (the webview's state).
 */
const SCRIPT = `
const vscode = acquireVsCodeApi();
const content = document.getElementById('content');
const saved = vscode.getState();
if (saved && typeof saved.scrollY === 'number') window.scrollTo(0, saved.scrollY);
document.addEventListener('click', (e) => {
  const a = e.target.closest('a.chunk');
  if (a && a.dataset.uri) { e.preventDefault(); vscode.postMessage({ type: 'open', uri: a.dataset.uri, line: Number(a.dataset.line || 1) }); }
});
window.addEventListener('message', (e) => {
  const m = e.data;
  if (!m || m.type !== 'render' || typeof m.body !== 'string') return;
  const x = window.scrollX, y = window.scrollY;
  content.innerHTML = m.body;
  content.dataset.renders = String(Number(content.dataset.renders || 0) + 1);
  window.scrollTo(x, y);
});
window.addEventListener('scroll', () => vscode.setState({ scrollY: window.scrollY }), { passive: true });
`;

/** The message that replaces a page's contents with `body` (see SCRIPT). */
export function renderMessage(body: string): { type: 'render'; body: string } {
  return { type: 'render', body };
}

export function page(cspSource: string, title: string, body: string): string {
  const n = nonce();
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp(cspSource, n)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${n}">${STYLE}</style></head>
<body><main id="content">${body}</main><script nonce="${n}">${SCRIPT}</script></body></html>`;
}
