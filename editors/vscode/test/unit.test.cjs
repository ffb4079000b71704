// Unit tests of the extension's pure parts (settings mapping, escaping, the views' HTML, the
// Compare picker's items, the status report, scores in each benchmark's scale, the suggest list, the
// arena's battles: what is one, how the arena view shows both suggestions, the reveal; which
// server binary starts).
const test = require('node:test');
const assert = require('node:assert/strict');
const { nest, serverKeys } = require('../dist/unit/settings.js');
const { escapeHtml, csp, page, renderMessage } = require('../dist/unit/webview.js');
const { battleBody, battleOverBody, compareBody, contextBody } = require('../dist/unit/render.js');
const { compositePrefix, retrieverItems } = require('../dist/unit/retrievers.js');
const { escapeMarkdown, serverFact, statusFacts, statusMarkdown, statusText } = require('../dist/unit/statusReport.js');
const { BUNDLED, locate } = require('../dist/unit/locate.js');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { benchmarkName, caseLabel, formatMetric, headline, metricsLine } = require('../dist/unit/scores.js');
const { extendsSelected } = require('../dist/unit/suggestList.js');
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

test('compare shows each chunk\'s origin and source beside it and the overlap in the column header', () => {
  const body = compareBody({
    uri: 'file:///w/a.py', position: { line: 4, character: 2 }, caseId: 'c1', reference: 'abc',
    results: [
      { retriever: 'bm25', upperBound: false, overlap: 0.6667, suggestion: 'abc', latencyMs: 10,
        chunks: [
          { path: 'pkg/near.py', uri: 'file:///w/pkg/near.py', startLine: 3, endLine: 12, score: 2.5, origin: 'same_dir' },
          { path: 'lib/<x>.py', uri: null, startLine: null, endLine: null, score: 1, origin: 'imported' },
          { path: 'lib/y.py', uri: null, startLine: 1, endLine: 4, score: 0.5, origin: 'imported', source: 'definitions' },
        ] },
      { retriever: 'none', upperBound: false, chunks: [], suggestion: 'x', latencyMs: 3 },
    ],
  });
  assert.match(body, /pkg\/near\.py:3-12 · <span class="origin">same_dir<\/span> <span/);
  // A mix's chunk names its source after its origin.
  assert.match(body, /lib\/y\.py:1-4 · <span class="origin">imported<\/span> · <span class="source">definitions<\/span>/);
  assert.match(body, /lib\/&lt;x&gt;\.py · <span class="origin">imported<\/span>/);
  assert.match(body, /<h2>bm25 <span class="overlap"[^>]*>overlap 0\.67<\/span><\/h2>/);
  // No overlap without chunks: the header says nothing.
  assert.match(body, /<h2>none<\/h2>/);
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

// What `crossfile.retrievers` answers (src/retrieve/catalogue.rs), with no dense endpoint set.
const retriever = (spec, extra = {}) => ({
  spec, summary: `${spec} summary`, needs: 'nothing', available: true, upperBound: false, composite: false, default: false, ...extra,
});
const SERVER_RETRIEVERS = [
  retriever('none'), retriever('bm25', { default: true }), retriever('bm25-cceval'), retriever('bm25-cceval-rg1'), retriever('jaccard'),
  retriever('dense', { needs: 'dense-endpoint', available: false }), retriever('oracle', { upperBound: true }),
  retriever('dataset', { needs: 'case-context' }),
  retriever('mmr:<spec>[:<lambda in 0..1>]', { needs: 'parts', composite: true, summary: 'MMR rerank' }),
  retriever('hybrid:<spec>+<spec>[+<spec>...]', { needs: 'parts', composite: true, summary: 'RRF' }),
];

test("the Compare picker offers the server's specs in its order, the user's defaults picked, what each needs said", () => {
  const items = retrieverItems(SERVER_RETRIEVERS, ['none', 'oracle', 'mmr:bm25', 'hybrid:bm25+jaccard', 'mmr:bm25', ' ', 'my-own']);
  assert.deepEqual(items.map((i) => i.label), ['none', 'bm25', 'bm25-cceval', 'bm25-cceval-rg1', 'jaccard', 'dense', 'oracle', 'dataset',
    'mmr:bm25', 'hybrid:bm25+jaccard', 'my-own', 'mmr:<spec>[:<lambda in 0..1>]', 'hybrid:<spec>+<spec>[+<spec>...]']);
  const by = Object.fromEntries(items.map((i) => [i.label, i]));
  assert.deepEqual(items.filter((i) => i.picked).map((i) => i.spec), ['none', 'oracle', 'mmr:bm25', 'hybrid:bm25+jaccard', 'my-own']);
  assert.equal(by.bm25.description, 'bm25 summary');
  assert.equal(by.bm25.detail, 'completions use it');
  assert.equal(by.none.detail, undefined);
  assert.match(by.dense.detail, /needs an embeddings endpoint \(retrieve\.dense\.endpoint\)/);
  assert.match(by.oracle.detail, /upper bound: sees the reference/);
  assert.match(by.dataset.detail, /replayed CrossCodeEval case/);
  // The user's composite specs are described by their form; one the server does not list is kept.
  assert.equal(by['mmr:bm25'].description, 'MMR rerank');
  assert.equal(by['hybrid:bm25+jaccard'].description, 'RRF');
  assert.equal(by['my-own'].spec, 'my-own');
  // A composite form stands for no spec: picking it asks for one starting with its prefix.
  const mmr = by['mmr:<spec>[:<lambda in 0..1>]'];
  assert.equal(mmr.spec, undefined);
  assert.equal(mmr.prefix, 'mmr:');
  assert.equal(mmr.picked, false);
  assert.equal(compositePrefix('hybrid:<spec>+<spec>[+<spec>...]'), 'hybrid:');
  assert.equal(compositePrefix('bm25'), 'bm25');
  // No defaults, no list: nothing picked, nothing offered.
  assert.equal(retrieverItems(SERVER_RETRIEVERS, []).filter((i) => i.picked).length, 0);
  assert.deepEqual(retrieverItems([], []), []);
});

const STATUS = {
  version: '0.1.0',
  model: { label: 'qwen2.5-coder-0.5b', source: 'catalogue', name: 'qwen2.5-coder-0.5b', file: '/c/models/qwen_0.5b.gguf', present: false,
    loaded: false, downloading: null },
  backend: { kind: 'embedded', endpoint: null, model: null },
  cacheDir: '/c',
  userConfig: '/home/u/.config/crossfile/crossfile.toml',
  userConfigExists: false,
  retriever: 'bm25',
  folders: [
    { name: 'click', root: '/w/click', index: 'ready', files: 57, chunks: 1234, error: null, trusted: true },
    { name: 'new', root: '/w/new', index: 'building', files: null, chunks: null, error: null, trusted: false },
    { name: 'bad', root: '/w/bad', index: 'failed', files: null, chunks: null, error: 'permission denied', trusted: false },
  ],
};

test('the status report says what the server resolved: model, backend, cache, each folder', () => {
  const facts = Object.fromEntries(statusFacts(STATUS).map((f) => [f.label, f]));
  assert.equal(facts.server.text, 'crossfile 0.1.0');
  assert.equal(facts.model.text, 'qwen2.5-coder-0.5b (catalogue qwen2.5-coder-0.5b, /c/models/qwen_0.5b.gguf): not fetched: the server fetches it when it starts or the model changes');
  assert.equal(facts.model.warn, true);
  assert.equal(facts.backend.text, 'embedded (in-process)');
  assert.equal(facts.cache.text, '/c');
  assert.equal(facts['user config'].text, '/home/u/.config/crossfile/crossfile.toml (none there)');
  assert.equal(facts['folder click'].text, '/w/click: index ready, 57 files, 1234 chunks; trusted');
  assert.match(facts['folder new'].text, /^\/w\/new: index building…; not trusted/);
  assert.equal(facts['folder bad'].warn, true);
  assert.match(facts['folder bad'].text, /index failed: permission denied/);

  // Loaded from model.path; an HTTP backend is a warning naming where the code goes.
  const remote = statusFacts({ ...STATUS, userConfig: null, folders: [],
    model: { ...STATUS.model, source: 'path', name: null, file: '/m/x.gguf', present: true, label: 'openai gpt' },
    backend: { kind: 'openai', endpoint: 'http://10.0.0.1:8000/v1', model: 'gpt' } });
  const r = Object.fromEntries(remote.map((f) => [f.label, f]));
  assert.equal(r.model.text, 'openai gpt (model.path /m/x.gguf) (its vocabulary only): present, not loaded yet');
  assert.equal(r.model.warn, false);
  assert.equal(r.backend.text, "openai at http://10.0.0.1:8000/v1, model gpt: the workspace's code is sent there");
  assert.equal(r.backend.warn, true);
  assert.equal(r['user config'].text, 'none');
  const fetching = statusFacts({ ...STATUS, model: { ...STATUS.model, downloading: 'downloading 40%' } })[1];
  assert.match(fetching.text, /being fetched: downloading 40%$/);
  assert.equal(fetching.warn, false);
});

test('the status tooltip escapes Markdown in paths; the text form aligns its labels', () => {
  assert.equal(escapeMarkdown('a_b*[c](d)`<e>'), 'a\\_b\\*\\[c\\]\\(d\\)\\`\\<e\\>');
  const md = statusMarkdown(STATUS);
  assert.match(md, /^- \*\*server:\*\* crossfile 0\\\.1\\\.0$/m);
  assert.match(md, /^- ⚠ \*\*model:\*\* .*qwen\\_0\\\.5b/m);
  assert.match(md, /^- \*\*folder click:\*\* \/w\/click: index ready, 57 files, 1234 chunks; trusted$/m);
  assert.equal(md.split('\n').length, statusFacts(STATUS).length);
  const text = statusText(STATUS);
  assert.match(text, /^server:       crossfile 0\.1\.0$/m);
  assert.match(text, /^model:        ! qwen2\.5-coder-0\.5b/m);
  assert.match(text, /^folder click: \/w\/click: index ready/m);
  assert.ok(text.endsWith('\n'));
});

test("a replayed case's place, and a history case's line category, as the server names it", () => {
  assert.equal(caseLabel(2, 70), 'case 3/70');
  assert.equal(caseLabel(0, 6, 'inproject'), 'case 1/6 · inproject');
  assert.equal(caseLabel(5, 6, 'non_informative'), 'case 6/6 · non_informative');
  // History cases are CrossCodeEval lines: their metrics in its scale, under their own name.
  assert.equal(headline('history', { em: 0, es: 71.42857 }), 'History ES 71.4');
  assert.equal(metricsLine('history', { em: 100, es: 100, id_f1: 66.667 }), 'EM 100 · ES 100 · ID F1 66.7');
});

test("scores are shown in each benchmark's own scale, named: CrossCodeEval ES 0-100, RepoEval ES 0-1, EvoCodeBench pass@1", () => {
  // crossfile.score's metrics for a CrossCodeEval case (0-100) and a RepoEval case (0-1).
  assert.equal(headline('cceval', { em: 0, es: 71.42857, id_em: 0, id_f1: 33.333 }), 'CrossCodeEval ES 71.4');
  assert.equal(headline('repoeval', { em: 0, es: 0.7142857 }), 'RepoEval ES 0.714');
  assert.equal(headline('repoeval', { em: 1, es: 1 }), 'RepoEval ES 1');
  assert.equal(headline('cceval', { es: 100 }), 'CrossCodeEval ES 100');
  assert.equal(headline('evocodebench', { 'pass@1': 0, 'recall@1': 0.5 }), 'EvoCodeBench pass@1 0');
  // Nothing to show: no headline metric, or it could not be computed.
  assert.equal(headline('cceval', {}), undefined);
  assert.equal(headline('cceval', { error: 'the case has no reference' }), undefined);
  // A benchmark the extension does not know keeps its name and its values' precision.
  assert.equal(headline('newbench', { es: 0.12345 }), 'newbench ES 0.123');
  assert.equal(benchmarkName('repoeval'), 'RepoEval');

  assert.equal(metricsLine('cceval', { em: 0, es: 71.42857, id_em: 0, id_f1: 33.333 }), 'EM 0 · ES 71.4 · ID EM 0 · ID F1 33.3');
  assert.equal(metricsLine('repoeval', { em: 0, es: 0.7142857 }), 'EM 0 · ES 0.714');
  // chrF is sacrebleu's 0–100 in every benchmark.
  assert.equal(metricsLine('cceval', { es: 71.42857, chrf: 55.55555 }), 'ES 71.4 · chrF 55.6');
  assert.equal(metricsLine('repoeval', { es: 0.7142857, chrf: 55.55555 }), 'ES 0.714 · chrF 55.6');
  assert.equal(metricsLine('evocodebench', { 'pass@1': 0, 'recall@1': 0.5 }), 'pass@1 0 · recall@1 0.5');
  assert.equal(metricsLine('cceval', { error: 'no reference' }), 'not scored: no reference');
  assert.equal(formatMetric('cceval', 'es', null), '–');
  assert.equal(formatMetric('repoeval', 'es', 0.0004), '0');
});

test('a view page renders its body in a container that a render message replaces in place, keeping the scroll', () => {
  const html = page('vscode-webview://x', 't', '<h1>one</h1>');
  assert.match(html, /<main id="content"><h1>one<\/h1><\/main>/);
  // The script replaces the container's contents on {type: 'render'} and restores the scroll.
  assert.match(html, /m\.type !== 'render'/);
  assert.match(html, /content\.innerHTML = m\.body/);
  assert.match(html, /window\.scrollTo\(x, y\)/);
  assert.deepEqual(renderMessage('<p>two</p>'), { type: 'render', body: '<p>two</p>' });
});

test("a ghost text shows with VS Code's suggest list open only if it extends the selected item", () => {
  // `        formatter.w|`: the word list selects `write_usage` (replacing `w`, columns 18-19).
  const line = '        formatter.w';
  const item = (text, start = 18, end = 19) => ({ start, end, text });
  assert.equal(extendsSelected(line, 19, item('write_usage'), 'rite_usage(ctx.command_path)'), true);
  // Another word selected, a suggestion shorter than the item, or the item itself: nothing shows.
  assert.equal(extendsSelected(line, 19, item('write_usage'), 'rite_usage'), false);
  assert.equal(extendsSelected(line, 19, item('while'), 'rite_usage(ctx.command_path)'), false);
  assert.equal(extendsSelected(line, 19, item('write_usage'), 'rite'), false);
  // A fuzzy match (`wu` → `write_usage`) replaces what was typed: no insertion at the cursor extends it.
  assert.equal(extendsSelected('        formatter.wu', 20, item('write_usage', 18, 20), 'sage'), false);
  // An item ending elsewhere than the cursor, or an empty word: exact prefixes only.
  assert.equal(extendsSelected(line, 19, item('write_usage', 18, 21), 'rite_usage'), false);
  assert.equal(extendsSelected('x = ', 4, item('None', 4, 4), 'None)'), true);
  assert.equal(extendsSelected('x = ', 4, item('None', 4, 4), 'True'), false);
});

const { battleOf, endAfter, revealSummary, revealText } = require('../dist/unit/battle.js');

test('the arena settings are server keys; arms (arrays of strings and objects) reach the server intact', () => {
  const props = pkg.contributes.configuration.properties;
  const keys = serverKeys(props);
  for (const k of ['arena.enabled', 'arena.arms', 'arena.seed', 'arena.votes', 'arena.pairs']) assert.ok(keys.includes(k), k);
  assert.equal(props['crossfile.arena.enabled'].scope, 'window');
  assert.equal(props['crossfile.arena.enabled'].default, false);
  assert.deepEqual(props['crossfile.arena.pairs'].enum, ['uniform']);
  // An arm may choose an endpoint, a model file or a key variable; the votes file is a path.
  const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const k of ['crossfile.arena.arms', 'crossfile.arena.votes']) {
    assert.equal(props[k].scope, 'machine', k);
    assert.ok(restricted.includes(k), k);
  }
  const arms = ['bm25', { retriever: 'none', 'prompt.max_new_tokens': 3 }, { retrieve: { retriever: 'jaccard', top_k: 2 } }];
  assert.deepEqual(nest([['arena.enabled', true], ['arena.arms', arms], ['arena.seed', 7], ['arena.votes', '/tmp/v.jsonl'], ['retrieve.retriever', 'bm25']]),
    { arena: { enabled: true, arms, seed: 7, votes: '/tmp/v.jsonl' }, retrieve: { retriever: 'bm25' } });
  // The object's dotted keys stay as written (the server reads them dotted or nested).
  assert.deepEqual(nest([['arena.arms', arms]]).arena.arms[1], { retriever: 'none', 'prompt.max_new_tokens': 3 });
});

test('Shift+Tab and Escape belong to the arena only while a battle shows', () => {
  const bindings = Object.fromEntries(pkg.contributes.keybindings.map((b) => [b.command, b]));
  assert.equal(bindings['crossfile.arenaPick2'].key, 'shift+tab');
  assert.match(bindings['crossfile.arenaPick2'].when, /^crossfile\.arenaBattle && /);
  assert.equal(bindings['crossfile.arenaDismiss'].key, 'escape');
  assert.match(bindings['crossfile.arenaDismiss'].when, /^crossfile\.arenaBattle && .*!suggestWidgetVisible/);
  assert.ok(pkg.contributes.commands.some((c) => c.command === 'crossfile.arenaRevealLast' && c.title === 'Arena Reveal Last'));
});

const item = (text, battle, pick) => ({ insertText: text, command: { title: `crossfile arena: ${pick}`, command: 'crossfile.arenaVote', arguments: [{ battle, pick }] } });

test('a battle is two items voting through crossfile.arenaVote; any other answer is not', () => {
  assert.equal(battleOf([item('foo(bar)', 17, 1), item('foo(baz, 2)', 17, 2)]), 17);
  assert.equal(battleOf([item('a', 0, 1), { insertText: { value: 'b' }, command: item('b', 0, 2).command }]), 0);
  assert.equal(battleOf([]), undefined);
  assert.equal(battleOf([{ insertText: 'plain' }]), undefined);
  assert.equal(battleOf([{ insertText: 'plain', command: { command: 'other', arguments: [{ battle: 1 }] } }, { insertText: 'x' }]), undefined);
  assert.equal(battleOf([item('only one', 3, 1)]), undefined);
  assert.equal(battleOf([{ insertText: 'a', command: { command: 'crossfile.arenaVote', arguments: [] } }, item('b', 3, 2)]), undefined);
});

test('the arena view shows both suggestions whole, marked only 1 and 2 with their keys, escaped', () => {
  const first = 'foo(bar)\n    .baz()';
  const second = 'x = "<b>" & y\n\tz()';
  const body = battleBody(first, second);
  const html = page('vscode-webview://x', 'crossfile: arena', body);
  // Each in its own column, every line kept (no cut), 1 before 2.
  const one = body.indexOf('id="suggestion-1"');
  const two = body.indexOf('id="suggestion-2"');
  assert.ok(one >= 0 && two > one, body);
  assert.match(body, /<pre class="suggestion">foo\(bar\)\n    \.baz\(\)<\/pre>/);
  assert.ok(body.includes('<pre class="suggestion">x = &quot;&lt;b&gt;&quot; &amp; y\n\tz()</pre>'), body);
  assert.doesNotMatch(body, /<b>/);
  assert.match(body, /1 <span class="muted">· Tab/);
  assert.match(body, /2 <span class="muted">· Shift\+Tab/);
  assert.match(html, /default-src 'none'/);
  for (const [ended, said] of [['picked 1', 'You took 1.'], ['picked 2', 'You took 2.'], ['dismissed', 'You took neither.'], ['passed', 'no choice']]) {
    assert.ok(battleOverBody(ended).includes(said), ended);
  }
});

test('the cursor ends after the inserted text', () => {
  assert.deepEqual(endAfter({ line: 4, character: 8 }, 'abc'), { line: 4, character: 11 });
  assert.deepEqual(endAfter({ line: 4, character: 8 }, ''), { line: 4, character: 8 });
  assert.deepEqual(endAfter({ line: 4, character: 8 }, 'a(\n  b)'), { line: 5, character: 4 });
});

test('Arena Reveal Last names the arm of each suggestion, the pick, the texts and metrics', () => {
  const reveal = { battle: 17, arms: ['bm25', 'none'], picked: 2, texts: ['foo(bar)', 'foo(baz,\n  2)'], latencyMs: [120.4, 80],
    caseId: 'c1', metrics: [{ es: 71.43, em: 0 }, { es: 100, em: 1 }], votes: '/tmp/v.jsonl', path: 'src/a.py', line: 3, col: 9 };
  assert.equal(revealSummary(reveal), 'crossfile arena, battle 17 at src/a.py:3:9: 1 = bm25, 2 = none; picked 2 (none)');
  const text = revealText(reveal);
  assert.match(text, /^1: bm25, 120 ms$/m);
  assert.match(text, /^2: none, 80 ms \(picked\)$/m);
  assert.match(text, /es 71\.43, em 0/);
  assert.match(text, /│ foo\(baz,\n {3}│ {3}2\)/);
  assert.match(text, /case: c1\nvotes: \/tmp\/v\.jsonl/);
  const none = revealText({ ...reveal, picked: null, metrics: null, caseId: null, latencyMs: [] });
  assert.match(none, /no choice/);
  assert.doesNotMatch(none, /picked\)|case:|ms/);
});

test("Show Status has the arena's line when a folder has it on", () => {
  const arena = { arms: ['bm25', 'none'], seed: 7, votes: '/d/votes.jsonl', battles: 3, recorded: 2, failed: 0, blank: 1 };
  const fact = statusFacts({ ...STATUS, arena }).find((f) => f.label === 'arena');
  assert.equal(fact.text, 'on, arms bm25, none, seed 7; 3 battles shown, 2 votes recorded, 0 failed, 1 left out (a blank suggestion); votes in /d/votes.jsonl');
  assert.equal(statusFacts({ ...STATUS, arena: null }).find((f) => f.label === 'arena'), undefined);
  assert.equal(statusFacts(STATUS).find((f) => f.label === 'arena'), undefined);
});

const { RecentLines, recentLinesParams, shownLines, RECENT_LINES } = require('../dist/unit/recentLines.js');

test('what is shown is told at once on activation, a scroll or selection once it rests, never the same lines twice', async () => {
  const sent = [];
  const recent = new RecentLines((lines) => sent.push(lines), 30);
  const uri = 'file:///w/a.py';
  recent.activated(shownLines(uri, [{ start: { line: 0 }, end: { line: 40 } }]));
  assert.deepEqual(sent, [{ uri, first: 0, last: 40 }]);
  // Scrolling: only where it rests.
  for (const top of [10, 20, 30]) recent.moved(shownLines(uri, [{ start: { line: top }, end: { line: top + 40 } }]));
  assert.equal(sent.length, 1);
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(sent[1], { uri, first: 30, last: 70 });
  // The same lines again: nothing; folded ranges: from the first's start to the last's end.
  recent.moved({ uri, first: 30, last: 70 });
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(sent.length, 2);
  recent.activated(shownLines(uri, [{ start: { line: 100 }, end: { line: 110 } }, { start: { line: 150 }, end: { line: 170 } }]));
  assert.deepEqual(sent[2], { uri, first: 100, last: 170 });
  // A pending scroll is dropped when another editor becomes active; nothing shown, nothing told.
  recent.moved({ uri, first: 5, last: 6 });
  recent.activated(undefined);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(sent.length, 3);
  recent.dispose();
  assert.equal(RECENT_LINES, 'crossfile/recentLines');
  assert.deepEqual(recentLinesParams({ uri, first: 9, last: 11 }),
    { textDocument: { uri }, range: { start: { line: 9, character: 0 }, end: { line: 11, character: 0 } } });
});

test('the server started is the set path, else the one the extension carries, else crossfile on PATH', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'crossfile-locate-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const exe = (file, mode = 0o755) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\n');
    fs.chmodSync(file, mode);
    return file;
  };
  const ext = path.join(root, 'ext');
  const binDir = path.join(root, 'bin');
  const onPath = exe(path.join(binDir, 'crossfile'));
  const env = { PATH: `/nonexistent${path.delimiter}${binDir}`, HOME: root };

  // Nothing set, nothing carried: crossfile on PATH.
  assert.deepEqual(locate('', ext, env), { path: onPath, source: 'path' });
  // A VSIX for a platform carries server/crossfile: it comes before PATH.
  const bundled = exe(path.join(ext, BUNDLED));
  assert.deepEqual(locate('  ', ext, env), { path: bundled, source: 'bundled' });
  // A set path wins over both; `~/` is the home folder; a name is looked up on PATH.
  const own = exe(path.join(root, 'own', 'crossfile'));
  assert.deepEqual(locate(own, ext, env), { path: own, source: 'setting' });
  assert.deepEqual(locate('~/own/crossfile', ext, env), { path: own, source: 'setting' });
  assert.deepEqual(locate('crossfile', ext, env), { path: onPath, source: 'setting' });
  // A set path that does not work is an error naming it, never a fallback to the others.
  const broken = locate(path.join(root, 'missing'), ext, env);
  assert.match(broken.error, /missing" \(setting crossfile\.serverPath\) is missing or not executable/);
  assert.match(locate('nope', ext, env).error, /"nope" \(setting crossfile\.serverPath\) is not on PATH/);
  // A carried file that is not executable is not started; with nothing on PATH the error says what to do.
  fs.chmodSync(bundled, 0o644);
  assert.deepEqual(locate('', ext, env), { path: onPath, source: 'path' });
  const none = locate('', ext, { PATH: '/nonexistent', HOME: root });
  assert.match(none.error, /carries none .* no `crossfile` is on PATH \(\/nonexistent\)\. Install a VSIX for your platform/);
});

test('the status report names the binary started and whether it is the extension\'s release', () => {
  const launch = { path: '/x/ext/server/crossfile', source: 'bundled', extensionVersion: '0.1.0' };
  assert.deepEqual(serverFact('0.1.0', launch),
    { label: 'server', text: "crossfile 0.1.0, the extension's release, /x/ext/server/crossfile (carried by the extension)" });
  const other = serverFact('0.2.0', { ...launch, path: '/usr/bin/crossfile', source: 'path' });
  assert.equal(other.warn, true);
  assert.equal(other.text, 'crossfile 0.2.0, /usr/bin/crossfile (found on PATH); this extension is 0.1.0: install the same release of both (its protocol may differ)');
  assert.match(statusText(STATUS, { ...launch, source: 'setting' }), /^server: +crossfile 0\.1\.0, the extension's release, \/x\/ext\/server\/crossfile \(crossfile\.serverPath\)$/m);
  assert.equal(serverFact('0.1.0').text, 'crossfile 0.1.0');
});
