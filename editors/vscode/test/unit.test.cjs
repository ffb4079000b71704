// Unit tests of the extension's pure parts (settings mapping, escaping, the views' HTML).
const test = require('node:test');
const assert = require('node:assert/strict');
const { nest, serverKeys } = require('../dist/unit/settings.js');
const { escapeHtml, csp, page } = require('../dist/unit/webview.js');
const { compareBody, contextBody } = require('../dist/unit/render.js');
const pkg = require('../package.json');

test('every server setting is contributed under its server key, and only those the user set are sent', () => {
  const keys = serverKeys(pkg.contributes.configuration.properties);
  for (const k of ['retrieve.retriever', 'retrieve.top_k', 'backend.kind', 'backend.endpoint', 'model.path', 'model.n_ctx',
    'prompt.max_new_tokens', 'postprocess.unit', 'lsp.debounce_ms']) assert.ok(keys.includes(k), k);
  assert.ok(!keys.includes('serverPath'));
  assert.deepEqual(nest([['retrieve.top_k', 5], ['retrieve.retriever', 'bm25'], ['prompt.max_new_tokens', undefined], ['retrieve.dense.endpoint', 'http://127.0.0.1:1']]),
    { retrieve: { top_k: 5, retriever: 'bm25', dense: { endpoint: 'http://127.0.0.1:1' } } });
});

test('settings that choose a binary, an endpoint, a model file or a key variable are machine-scoped and restricted', () => {
  const props = pkg.contributes.configuration.properties;
  const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const k of ['crossfile.serverPath', 'crossfile.backend.endpoint', 'crossfile.backend.api_key_env', 'crossfile.model.path',
    'crossfile.model.name', 'crossfile.retrieve.dense.endpoint', 'crossfile.retrieve.dense.api_key_env', 'crossfile.index.cache_dir']) {
    assert.equal(props[k].scope, 'machine', k);
    assert.ok(restricted.includes(k), k);
  }
});

test('webview pages load nothing remote and escape every text', () => {
  assert.equal(escapeHtml(`<img src=x onerror="a">&'`), '&lt;img src=x onerror=&quot;a&quot;&gt;&amp;&#39;');
  const policy = csp('vscode-webview://x', 'N');
  assert.match(policy, /^default-src 'none'/);
  assert.doesNotMatch(policy, /https?:|unsafe-inline|\*/);
  const html = page('vscode-webview://x', 't', contextBody({
    uri: 'file:///w/a.py', position: { line: 0, character: 0 }, caseId: null, retriever: 'bm25', upperBound: false,
    chunks: [{ path: '<b>.py', uri: 'file:///w/%3Cb%3E.py', startLine: 1, endLine: 2, score: 1.5, text: '</pre><script>x()</script>' }],
    promptTokens: { crossfile: 1, left: 2, right: 0, total: 3 }, suggestion: 's', latencyMs: 5, rawSuggestion: 's',
    prompt: '<script>', timingsMs: { retrieve: 1 } }));
  assert.doesNotMatch(html, /<script>x\(\)|<script>(?!.*acquireVsCodeApi)/s);
  assert.match(html, /&lt;\/pre&gt;&lt;script&gt;/);
});

test('compare shows one column per retriever, marks upper bounds and renders the server diff', () => {
  const body = compareBody({
    uri: 'file:///w/a.py', position: { line: 4, character: 2 }, caseId: 'c1', reference: 'abc',
    results: [
      { retriever: 'none', upperBound: false, chunks: [], promptTokens: { crossfile: 0, left: 9, right: 0, total: 9 }, suggestion: 'abd', latencyMs: 10,
        diff: [{ op: 'equal', text: 'ab' }, { op: 'delete', text: 'c' }, { op: 'insert', text: 'd' }], metrics: { es: 66.7, em: 0 } },
      { retriever: 'oracle', upperBound: true, error: 'boom' },
    ],
  });
  assert.equal((body.match(/class="column[ "]/g) || []).length, 2);
  assert.match(body, /data-retriever="oracle"[^>]*>.*upper bound/s);
  assert.match(body, /ab<del>c<\/del><ins>d<\/ins>/);
  assert.match(body, /data-metric="es">66\.7</);
});

test('compare at an EvoCodeBench cursor shows each body, its tests and the failing output, escaped', () => {
  const outcome = (status, output) => ({
    status, passed: status === 'pass', firstFailure: status === 'pass' ? null : 't.py::test_a', message: null, secs: 1.5, recall: 0.5,
    tests: [{ id: 't.py::test_a', status, exitCode: status === 'pass' ? 0 : 1, secs: 1.2, output }],
  });
  const body = compareBody({
    uri: 'file:///w/a.py', position: { line: 4, character: 8 }, caseId: 'm.f', reference: '    return 1\n',
    results: [
      { retriever: 'none', upperBound: false, chunks: [], suggestion: 'return 2', latencyMs: 10, body: '        return 2', outcome: outcome('fail', 'AssertionError: <2> != 1') },
      { retriever: 'bm25', upperBound: false, chunks: [], suggestion: 'return 1', latencyMs: 12, body: '        return 1', outcome: outcome('pass', '1 passed') },
    ],
  });
  assert.match(body, /data-retriever="none".*data-status="fail".*AssertionError: &lt;2&gt; != 1/s);
  assert.match(body, /data-retriever="bm25".*data-status="pass"/s);
  // Only a test that did not pass shows its output.
  assert.doesNotMatch(body, /1 passed/);
  assert.match(body, /recall 0\.5/);
});
