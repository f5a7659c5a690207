#!/usr/bin/env node
// The first answer on a phone (issue 33): how long a page takes, from navigation start, until it
// knows one session's pending action and its live question, with the engine (the package's
// browser entry and its .wasm) and without (bench/baseline.mjs: the same answers in plain JS),
// and how many bytes each page pulls over the wire.
//
//   node bench/phone.mjs [--runs N] [--sizes 200,5000] [--cpu R] [--pages engine,plain]
//                        [--steps] [--requests] [--json]
//
// A small static site served here over HTTP/1.1 with gzip (static files precompressed at level 9,
// as a build step or nginx's gzip_static would; the REST JSON at level 6, as a server compressing
// its responses does), one page per pattern:
//   engine  imports the package's browser entry (pkg/package.json "exports" ".", the `default`
//           condition), init()s it and feeds a ProjectionStore the REST snapshot of one session
//           (GET …/tasks/:task/task-sessions, …/task-sessions/:id/turns, …/task-sessions/:id/messages,
//           as the reference server answers them: docs/server-api.md), then asks
//           `sessionPendingAction` and `pendingClarification`;
//   plain   fetches the same three responses and computes the same two answers with
//           bench/baseline.mjs (`sessionPendingAction`, `currentTurnId`, `pendingClarificationBundle`).
// The session (bench/workload.mjs `sessionHistory`, 200 and 5,000 messages by default) waits for a
// two-question bundle asked last in its open turn; both pages must find exactly that (checked
// against the generator's answer after every load).
//
// Each page exists in several loading patterns (PATTERNS below). By default: `engine`, the pattern
// the consumer README shows ("On a phone": `<link rel="preload" as="fetch">` for the .wasm and
// `<link rel="modulepreload">` for every module in the head, the REST requests before
// `await init()`), and `plain`, the fastest plain-JS page (the REST requests before its one import).
// `--steps` measures every pattern, from what the README showed before issue 33 (`engine-naive`:
// `await init()`, then the REST requests) step by step, plus `plain-naive` and the minified
// bundles. Hints are computed from pkg/ at start: the modules the entry imports, transitively, and
// the .wasm its glue fetches (`new URL("….wasm", import.meta.url)`), so the pages stay true when the
// package's files change. Every file is read once at start: a rebuild of pkg/ during a run changes
// nothing.
//
// Each load: a fresh browser context (cold HTTP cache and connections), viewport 390×844 at 3×, and
// over CDP: CPU slowed R× (default 4), 150 ms latency, 1.6 Mbit/s down, 750 kbit/s up (Lighthouse's
// mobile profile), cache disabled. The page records performance.now() (ms since navigation start)
// when it has both answers, beside its own marks (modules imported, init() resolved, REST parsed)
// and its Resource Timing entries. Bytes: the sum of encodedDataLength of every
// Network.loadingFinished of the load (headers included). One unmeasured load of each page first,
// then N rounds (default 7), the pages in a rotating order. Prints, per size, the median and range
// of the first answer, the bytes, the ratio engine/plain (with what the extra bytes cost at the
// emulated bandwidth), where each page's time goes, and the gzip sizes of what the pages load (the
// numbers of the README's "On a phone"). `--requests`: each page's requests of its last load.
// `--json`: the results as JSON on stdout (the table on stderr); bench/run.mjs runs it so (skip
// with `npm run bench -- --skip-phone`). About 1.5–2.5 minutes with the defaults on 2 cores.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { sessionHistory, timestamp, uuid } from './workload.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = path.join(root, 'pkg');

// ---- the loading patterns ------------------------------------------------------------------------
// Flags: `rest` when the REST requests start: 'after-init' (after `await init()`), 'before-init'
// (at the start of the module body, which a static import makes wait for the whole module graph),
// 'at-once' (before any import: the page's script starts them, then imports dynamically);
// `wasm`: 'init' (init() fetches it when called), 'fetch' (`fetch(url)` at once, handed to
// `init({ module_or_path })`), 'compile' (`WebAssembly.compileStreaming(fetch(url))` at once, the
// Module handed to init); `modulepreload`: a hint per module of the graph; `preload`:
// `<link rel="preload" as="fetch" crossorigin>` for the .wasm; `bundle`: the JS as one esbuild
// bundle, minified (what an app's production build serves) instead of the package's files.
export const PATTERNS = {
  'engine-naive': { page: 'engine', rest: 'after-init', wasm: 'init', step: 'before issue 33: await init(), then the REST requests' },
  'engine-parallel': { page: 'engine', rest: 'before-init', wasm: 'init', step: 'REST requested before init() (after the static imports)' },
  'engine-rest-at-once': { page: 'engine', rest: 'at-once', wasm: 'init', step: '+ REST requested before the imports (dynamic import)' },
  'engine-wasm-at-once': { page: 'engine', rest: 'at-once', wasm: 'fetch', step: '+ the .wasm fetched at once, init({ module_or_path: fetch(url) })' },
  'engine-modulepreload': { page: 'engine', rest: 'at-once', wasm: 'fetch', modulepreload: true, step: '+ <link rel="modulepreload"> for every module' },
  'engine-preload': { page: 'engine', rest: 'at-once', wasm: 'fetch', modulepreload: true, preload: true, step: '+ <link rel="preload" as="fetch"> for the .wasm' },
  'engine-static': { page: 'engine', rest: 'before-init', wasm: 'fetch', modulepreload: true, preload: true, step: 'the same with a static import (REST requested once the modules are in)' },
  'engine-hints': { page: 'engine', rest: 'before-init', wasm: 'init', modulepreload: true, preload: true, step: 'the same with a plain init() (its request matches the preload)' },
  'engine-compile': { page: 'engine', rest: 'at-once', wasm: 'compile', modulepreload: true, preload: true, step: '+ WebAssembly.compileStreaming at once' },
  'engine-bundle': { page: 'engine', rest: 'at-once', wasm: 'fetch', modulepreload: true, preload: true, bundle: true, step: '+ the JS as one minified bundle (esbuild)' },
  'plain-naive': { page: 'plain', rest: 'before-init', step: 'static import of baseline.mjs, then the REST requests' },
  plain: { page: 'plain', rest: 'at-once', modulepreload: true, step: 'REST at once, baseline.mjs preloaded' },
  'plain-bundle': { page: 'plain', rest: 'at-once', modulepreload: true, bundle: true, step: 'REST at once, baseline.mjs minified' },
};
// The pattern the consumer README shows ("On a phone"), measured by default: the hints in the
// HTML, the REST requests before `await init()`.
PATTERNS.engine = { ...PATTERNS['engine-hints'], step: 'the README pattern: preload + modulepreload hints, a static import, the REST requests before a plain await init()' };
const STEPS = [
  'engine-naive', 'engine-parallel', 'engine-rest-at-once', 'engine-wasm-at-once', 'engine-modulepreload', 'engine-preload',
  'engine-static', 'engine-hints', 'engine-compile', 'engine-bundle', 'plain-naive', 'plain', 'plain-bundle',
];

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };
const NETWORK = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 };
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm' };

// ---- the package: entry, module graph, wasm ------------------------------------------------------
/** The browser entry of `exports["."]` (pkg/package.json): its `browser`, `import` or `default` condition. */
function browserEntry() {
  const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  let target = manifest.exports?.['.'] ?? manifest.module;
  while (target !== null && typeof target === 'object') {
    const condition = ['browser', 'import', 'default'].find((c) => c in target);
    assert.ok(condition, 'pkg/package.json exports["."] has no browser, import or default condition');
    target = target[condition];
  }
  return path.join(pkgDir, target);
}

/** The entry's static import graph (files under pkg/, entry first) and the .wasm its glue fetches. */
async function moduleGraph(entry) {
  const esbuild = await import('esbuild');
  const { metafile } = await esbuild.build({
    entryPoints: [entry], bundle: true, write: false, metafile: true, format: 'esm', outdir: path.join(os.tmpdir(), 'phone-graph'),
    absWorkingDir: root, logLevel: 'silent', platform: 'browser',
  });
  const inputs = metafile.inputs;
  const key = (file) => path.relative(root, file).split(path.sep).join('/');
  const modules = [];
  const seen = new Set();
  const walk = (k) => {
    if (seen.has(k)) return;
    seen.add(k);
    modules.push(path.join(root, k));
    for (const i of inputs[k]?.imports ?? []) if (i.kind === 'import-statement' && !i.external) walk(i.path);
  };
  walk(key(entry));
  const wasm = new Set();
  for (const file of modules) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/new URL\(\s*['"]([^'"]+\.wasm)['"]\s*,\s*import\.meta\.url\s*\)/g)) {
      wasm.add(path.resolve(path.dirname(file), m[1]));
    }
  }
  assert.equal(wasm.size, 1, `the entry's glue fetches one .wasm (found ${[...wasm].join(', ') || 'none'})`);
  return { modules, wasm: [...wasm][0] };
}

/** Minified one-file bundles (the app's production build): the engine's entry, and baseline.mjs. */
async function bundles(entry) {
  const esbuild = await import('esbuild');
  const one = async (contents, resolveDir) => {
    const out = await esbuild.build({
      stdin: { contents, resolveDir, loader: 'js' }, bundle: true, minify: true, write: false, format: 'esm', target: 'es2022',
      logLevel: 'silent', platform: 'browser',
    });
    return Buffer.from(out.outputFiles[0].contents);
  };
  return {
    '/bundle/engine.js': await one(`export { default, ProjectionStore } from ${JSON.stringify(entry)};`, root),
    '/bundle/baseline.js': await one(`export * from ${JSON.stringify(path.join(root, 'bench', 'baseline.mjs'))};`, root),
  };
}

// ---- the data --------------------------------------------------------------------------------------
/**
 * One session of `n` messages, REST-shaped, waiting for a two-question bundle asked last in its open
 * turn: `{ taskId, sessionId, rest: { path: body }, expected: { action, question } }`.
 */
export function sessionSnapshot(n) {
  const { taskId, session, turns, messages, nextStep } = sessionHistory(n - 2, { ns: n, state: 'WAITING_FOR_INPUT', sequence: 1000 });
  const open = turns[turns.length - 1];
  const pendingId = `pending-${n}-live`;
  const ids = [0, 1].map((i) => uuid(0x3f000000 + n, i));
  const texts = ['Which region should the new database run in?', 'May I drop the legacy audit table?'];
  ids.forEach((id, i) => {
    messages.push({
      id, session_id: session.id, task_id: taskId, turn_id: open.id, author_type: 'agent', type: 'clarification_request', content: texts[i],
      metadata: { pending_id: pendingId, question_id: `q-live-${i}`, question_index: i, question_total: 2, status: 'pending' },
      created_at: timestamp(nextStep + i), updated_at: timestamp(nextStep + i, 1),
    });
  });
  const waiting = { ...session, updated_at: timestamp(nextStep + 2), pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 1002 } };
  return {
    taskId,
    sessionId: session.id,
    rest: {
      [`/api/v1/tasks/${taskId}/task-sessions`]: { sessions: [waiting] },
      [`/api/v1/task-sessions/${session.id}/turns`]: { turns },
      [`/api/v1/task-sessions/${session.id}/messages`]: { messages },
    },
    expected: { action: 'clarification', question: { pending_id: pendingId, message_ids: ids } },
  };
}

// ---- the pages -------------------------------------------------------------------------------------
const html = ({ head, script }) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>task-projection on a phone</title>
${head.join('\n')}
<script type="module">
${script.trim()}
</script>
</head>
<body><p id="answer">Loading…</p></body>
</html>
`;

/** What both pages do once they have their answers: show them, and report to the bench. */
const REPORT = `
  const t = performance.now();
  document.getElementById('answer').textContent = action === null ? 'Nothing needs you.' : \`\${action}: \${question?.message_ids.length ?? 0} questions\`;
  const at = (e) => ({ name: new URL(e.name).pathname, start: e.startTime, responseStart: e.responseStart, end: e.responseEnd, transfer: e.transferSize, body: e.encodedBodySize });
  const nav = performance.getEntriesByType('navigation')[0];
  console.log('__phone ' + JSON.stringify({
    answer: t, marks, action, question, html: nav?.responseEnd ?? null,
    resources: performance.getEntriesByType('resource').map(at),
  }));
`;

/** The page of `pattern` for `data`, with the package's `graph`. */
function page(pattern, data, graph) {
  const p = PATTERNS[pattern];
  const url = (file) => `/${path.relative(root, file).split(path.sep).join('/')}`;
  const head = [];
  const rest = Object.keys(data.rest);
  const get = `const get = (path) => fetch(path).then((r) => { if (!r.ok) throw new Error(\`\${path}: HTTP \${r.status}\`); return r.json(); });
const load = () => Promise.all(${JSON.stringify(rest)}.map(get)).then((bodies) => { marks.rest = performance.now(); return bodies; });`;
  if (p.page === 'plain') {
    const module = p.bundle ? '/bundle/baseline.js' : '/bench/baseline.mjs';
    if (p.modulepreload) head.push(`<link rel="modulepreload" href="${module}">`);
    const names = 'currentTurnId, sessionPendingAction, pendingClarificationBundle, messageId';
    const script = `
${p.rest === 'at-once' ? '' : `import { ${names} } from ${JSON.stringify(module)};`}
const marks = { script: performance.now() };
${get}
const rest = load();
${p.rest === 'at-once' ? `const { ${names} } = await import(${JSON.stringify(module)});` : ''}
marks.imported = performance.now();
const [{ sessions }, { turns }, { messages }] = await rest;
const session = sessions.find((s) => s.id === ${JSON.stringify(data.sessionId)});
const action = sessionPendingAction({ session, turns, messages });
const bundle = pendingClarificationBundle(messages, { currentTurnId: currentTurnId(turns, session.state, messages), pendingAction: action });
const question = bundle.length === 0 ? null : { pending_id: bundle[0].metadata?.pending_id ?? null, message_ids: bundle.map(messageId) };
${REPORT}`;
    return html({ head, script });
  }
  const entry = p.bundle ? '/bundle/engine.js' : url(graph.modules[0]);
  const wasm = url(graph.wasm);
  if (p.preload) head.push(`<link rel="preload" href="${wasm}" as="fetch" crossorigin>`);
  if (p.modulepreload) for (const m of p.bundle ? [entry] : graph.modules.map(url)) head.push(`<link rel="modulepreload" href="${m}">`);
  const staticImport = p.rest !== 'at-once';
  const wasmStart = { init: '', fetch: `const wasm = fetch(${JSON.stringify(wasm)});`, compile: `const wasm = WebAssembly.compileStreaming(fetch(${JSON.stringify(wasm)}));` }[p.wasm];
  const script = `
${staticImport ? `import init, { ProjectionStore } from ${JSON.stringify(entry)};` : ''}
const marks = { script: performance.now() };
${get}
${p.rest === 'after-init' ? '' : 'const rest = load();'}
${wasmStart}
${staticImport ? '' : `const { default: init, ProjectionStore } = await import(${JSON.stringify(entry)});`}
marks.imported = performance.now();
await init(${p.wasm === 'init' ? '' : '{ module_or_path: wasm }'});
marks.init = performance.now();
const [{ sessions }, { turns }, { messages }] = await ${p.rest === 'after-init' ? 'load()' : 'rest'};
const store = new ProjectionStore();
store.applySessionList(${JSON.stringify(data.taskId)}, sessions);
store.applyTurnList(${JSON.stringify(data.sessionId)}, turns);
store.applyMessagePage(${JSON.stringify(data.sessionId)}, messages);
const action = store.sessionPendingAction(${JSON.stringify(data.sessionId)});
const question = store.pendingClarification(${JSON.stringify(data.sessionId)});
${REPORT}`;
  return html({ head, script });
}

// ---- the server ----------------------------------------------------------------------------------
/** Serves the pages, pkg/, bench/baseline.mjs, the bundles and the REST snapshots, gzip-encoded. */
function serve({ sizes, data, graph, bundled }) {
  const files = new Map(); // url path -> { type, gzip }
  const add = (url, bytes, type, level) => files.set(url, { type, gzip: zlib.gzipSync(bytes, { level }) });
  for (const file of [...graph.modules, graph.wasm, path.join(root, 'bench', 'baseline.mjs')]) {
    add(`/${path.relative(root, file).split(path.sep).join('/')}`, fs.readFileSync(file), MIME[path.extname(file)], 9);
  }
  for (const [url, bytes] of Object.entries(bundled)) add(url, bytes, MIME['.js'], 9);
  for (const n of sizes) {
    for (const [url, body] of Object.entries(data[n].rest)) add(url, Buffer.from(JSON.stringify(body)), MIME['.json'], 6);
    for (const pattern of Object.keys(PATTERNS)) add(`/${n}/${pattern}.html`, Buffer.from(page(pattern, data[n], graph)), MIME['.html'], 6);
  }
  const server = http.createServer((req, res) => {
    const file = files.get(new URL(req.url, 'http://x').pathname);
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    assert.match(req.headers['accept-encoding'] ?? '', /\bgzip\b/, 'the browser accepts gzip');
    res.writeHead(200, { 'content-type': file.type, 'content-encoding': 'gzip', 'content-length': file.gzip.length, 'cache-control': 'no-cache', vary: 'accept-encoding' });
    res.end(file.gzip);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, files })));
}

// ---- one load --------------------------------------------------------------------------------------
async function load(browser, url, { cpu, timeoutMs = 60_000 }) {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  let resolveReport;
  const reported = new Promise((resolve) => (resolveReport = resolve));
  page.on('console', (m) => {
    const text = m.text();
    if (text.startsWith('__phone ')) resolveReport(JSON.parse(text.slice('__phone '.length)));
    else if (m.type() === 'error' || m.type() === 'warning') errors.push(text);
  });
  const cdp = await context.newCDPSession(page);
  const requests = new Map();
  let bytes = 0;
  cdp.on('Network.requestWillBeSent', (e) => requests.set(e.requestId, { url: new URL(e.request.url).pathname, bytes: 0, done: false }));
  cdp.on('Network.loadingFinished', (e) => {
    bytes += e.encodedDataLength;
    const r = requests.get(e.requestId);
    if (r) Object.assign(r, { bytes: e.encodedDataLength, done: true });
  });
  cdp.on('Network.loadingFailed', (e) => {
    const r = requests.get(e.requestId);
    if (r) Object.assign(r, { done: true, failed: e.errorText });
  });
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', NETWORK);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: cpu });
  try {
    await page.goto(url, { waitUntil: 'commit', timeout: timeoutMs });
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${url}: no answer within ${timeoutMs / 1000} s; errors: ${errors.join(' | ') || 'none'}`)), timeoutMs);
    });
    const report = await Promise.race([reported, timeout]).finally(() => clearTimeout(timer));
    // What the load transferred: wait until nothing is in flight (a hint whose request nobody used).
    for (let waited = 0; [...requests.values()].some((r) => !r.done) && waited < 5000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    return { ...report, bytes, requests: [...requests.values()], errors };
  } finally {
    await context.close();
  }
}

// ---- statistics and the report ---------------------------------------------------------------------
const median = (xs) => {
  const s = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const stat = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), all: xs });

/** Summary of one pattern's loads. */
function summarize(loads, graph) {
  const wasmPath = `/${path.relative(root, graph.wasm).split(path.sep).join('/')}`;
  const resource = (l, test) => l.resources.filter((r) => test(r.name));
  const endOf = (l, test) => {
    const rs = resource(l, test);
    return rs.length ? Math.max(...rs.map((r) => r.end)) : null;
  };
  const isJs = (n) => n.endsWith('.js') || n.endsWith('.mjs');
  const isRest = (n) => n.startsWith('/api/');
  return {
    answer: stat(loads.map((l) => l.answer)),
    bytes: stat(loads.map((l) => l.bytes)),
    requests: median(loads.map((l) => l.requests.length)),
    // Where the time goes, medians over the loads (ms since navigation start).
    html: median(loads.map((l) => l.html)),
    jsEnd: median(loads.map((l) => endOf(l, isJs))),
    imported: median(loads.map((l) => l.marks.imported)),
    wasmStart: median(loads.map((l) => resource(l, (n) => n === wasmPath)[0]?.start ?? null)),
    wasmEnd: median(loads.map((l) => endOf(l, (n) => n === wasmPath))),
    init: median(loads.map((l) => l.marks.init ?? null)),
    restStart: median(loads.map((l) => (resource(l, isRest).length ? Math.min(...resource(l, isRest).map((r) => r.start)) : null))),
    restEnd: median(loads.map((l) => endOf(l, isRest))),
    restParsed: median(loads.map((l) => l.marks.rest)),
    // After everything arrived: compile/instantiate left after the .wasm's last byte, and the answer after init and REST.
    compileAfterDownload: median(loads.map((l) => (l.marks.init === undefined ? null : l.marks.init - Math.max(endOf(l, (n) => n === wasmPath), l.marks.imported)))),
    compute: median(loads.map((l) => l.answer - Math.max(l.marks.rest, l.marks.init ?? 0))),
    wasmRequests: median(loads.map((l) => l.requests.filter((r) => r.url === wasmPath).length)),
    errors: [...new Set(loads.flatMap((l) => l.errors))],
  };
}

const fmt = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

/** The printed report of a result object (also used by bench/run.mjs). */
export function table(result) {
  const out = [];
  const { profile: pr } = result;
  out.push(`first answer on a phone (bench/phone.mjs), ${result.date}; Chromium ${result.chromium}; ${result.machine}`);
  out.push(`profile: CPU ${pr.cpu}× slower, ${pr.latency} ms latency, ${pr.down} down, ${pr.up} up, cache off, gzip; ${result.runs} loads per page, median (range)`);
  out.push(`what a page loads, gzip bytes (level 9): store wasm ${fmt(result.sizes.wasmGzip)} (${fmt(result.sizes.wasmRaw)} raw), ` +
    `its JS ${fmt(result.sizes.jsGzip)} in ${result.sizes.jsFiles} files (${fmt(result.sizes.jsRaw)} raw; one minified bundle ${fmt(result.sizes.bundleGzip)}), ` +
    `baseline.mjs ${fmt(result.sizes.baselineGzip)} (minified ${fmt(result.sizes.baselineBundleGzip)})`);
  for (const [n, bySize] of Object.entries(result.bySize)) {
    out.push('');
    out.push(`${fmt(Number(n))} messages (REST snapshot ${fmt(bySize.restGzip)} B gzip, ${fmt(bySize.restRaw)} raw)`);
    const rows = [['page', 'first answer, ms', 'bytes', 'req.', 'HTML', 'JS in', 'imported', '.wasm', 'init', 'REST', 'parsed', 'compile*', 'compute']];
    for (const [pattern, s] of Object.entries(bySize.patterns)) {
      rows.push([
        pattern,
        `${fmt(s.answer.median)} (${fmt(s.answer.min)}–${fmt(s.answer.max)})`,
        fmt(s.bytes.median),
        fmt(s.requests),
        fmt(s.html),
        fmt(s.jsEnd),
        fmt(s.imported),
        s.wasmEnd === null ? '—' : `${fmt(s.wasmStart)}–${fmt(s.wasmEnd)}`,
        fmt(s.init),
        `${fmt(s.restStart)}–${fmt(s.restEnd)}`,
        fmt(s.restParsed),
        fmt(s.compileAfterDownload),
        fmt(s.compute),
      ]);
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows) out.push(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
    for (const [a, b] of bySize.ratios) {
      const ratio = bySize.patterns[a].answer.median / bySize.patterns[b].answer.median;
      const extra = bySize.patterns[a].bytes.median - bySize.patterns[b].bytes.median;
      out.push(`${a}/${b}: ${ratio.toFixed(2)}× (${fmt(bySize.patterns[a].answer.median - bySize.patterns[b].answer.median)} ms more; ` +
        `${fmt(extra)} more bytes = ${fmt(extra / NETWORK.downloadThroughput * 1000)} ms at ${pr.down})`);
    }
    const twice = Object.entries(bySize.patterns).filter(([, s]) => s.wasmRequests > 1).map(([p]) => p);
    if (twice.length) out.push(`the .wasm was requested more than once (a hint not matched by init()'s request): ${twice.join(', ')}`);
    const errors = Object.entries(bySize.patterns).flatMap(([p, s]) => s.errors.map((e) => `${p}: ${e}`));
    if (errors.length) out.push(`page errors or warnings: ${errors.join(' | ')}`);
  }
  out.push('');
  for (const [p, step] of Object.entries(result.patterns ?? {})) out.push(`${p}: ${step}`);
  out.push('columns: ms since navigation start, medians: HTML received, last JS module received, modules imported, the .wasm');
  out.push('requested–received, init() resolved, REST requested–received, REST parsed (response.json()); compile* = init() − max(.wasm');
  out.push('received, imported): what compiling adds after the last byte; compute = answer − max(REST parsed, init): feeding and asking');
  return out.join('\n');
}

// ---- main ------------------------------------------------------------------------------------------
async function main() {
  const argv = process.argv.slice(2);
  const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
  const RUNS = Number(option('--runs', 7));
  const CPU = Number(option('--cpu', 4));
  const SIZES = option('--sizes', '200,5000').split(',').map(Number);
  const pages = argv.includes('--steps') ? STEPS : option('--pages', 'engine,plain').split(',');
  const json = argv.includes('--json');
  assert.ok(Number.isInteger(RUNS) && RUNS >= 1, '--runs N: a positive integer');
  assert.ok(CPU >= 1, '--cpu R: 1 or more');
  assert.ok(SIZES.every((n) => Number.isInteger(n) && n >= 3), '--sizes: integers ≥ 3');
  for (const p of pages) assert.ok(PATTERNS[p], `--pages: unknown pattern ${p} (known: ${Object.keys(PATTERNS).join(', ')})`);
  const log = (msg) => (json ? process.stderr : process.stdout).write(`phone: ${msg}\n`);
  if (!fs.existsSync(path.join(pkgDir, 'package.json'))) {
    console.error('phone: pkg/ is not built (node scripts/build.mjs)');
    process.exit(1);
  }

  const entry = browserEntry();
  const graph = await moduleGraph(entry);
  const bundled = await bundles(entry);
  const data = Object.fromEntries(SIZES.map((n) => [n, sessionSnapshot(n)]));
  const { server, files } = await serve({ sizes: SIZES, data, graph, bundled });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const gz = (url) => files.get(url).gzip.length;
  const rel = (file) => `/${path.relative(root, file).split(path.sep).join('/')}`;
  const sizes = {
    wasm: rel(graph.wasm),
    wasmRaw: fs.statSync(graph.wasm).size,
    wasmGzip: gz(rel(graph.wasm)),
    js: graph.modules.map(rel),
    jsFiles: graph.modules.length,
    jsRaw: graph.modules.reduce((a, f) => a + fs.statSync(f).size, 0),
    jsGzip: graph.modules.reduce((a, f) => a + gz(rel(f)), 0),
    bundleGzip: gz('/bundle/engine.js'),
    baselineGzip: gz('/bench/baseline.mjs'),
    baselineBundleGzip: gz('/bundle/baseline.js'),
  };
  log(`entry ${rel(entry)}: ${graph.modules.length} modules (${sizes.js.join(', ')}), ${fmt(sizes.jsGzip)} B gzip; ${sizes.wasm} ${fmt(sizes.wasmGzip)} B gzip`);

  const { chromium } = await import('playwright-core');
  const { CHROMIUM, CHROMIUM_ARGS } = await import('../tests/js/browser.mjs');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const started = Date.now();
  const load1 = os.loadavg()[0];
  const result = {
    date: new Date().toISOString(),
    chromium: browser.version(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, load ${load1.toFixed(2)}`,
    profile: { cpu: CPU, latency: NETWORK.latency, down: '1.6 Mbit/s', up: '750 kbit/s', viewport: '390×844' },
    runs: RUNS,
    patterns: Object.fromEntries(pages.map((p) => [p, PATTERNS[p].step])),
    sizes,
    bySize: {},
  };
  try {
    for (const n of SIZES) {
      const loads = Object.fromEntries(pages.map((p) => [p, []]));
      const check = (p, r) => {
        assert.deepEqual({ action: r.action, question: r.question }, data[n].expected, `${p} at ${n} messages: wrong answers`);
      };
      for (const p of pages) check(p, await load(browser, `${origin}/${n}/${p}.html`, { cpu: CPU })); // warm-up, unmeasured
      for (let round = 0; round < RUNS; round++) {
        const order = pages.map((_, i) => pages[(i + round) % pages.length]);
        for (const p of round % 2 ? order.reverse() : order) {
          const r = await load(browser, `${origin}/${n}/${p}.html`, { cpu: CPU });
          check(p, r);
          loads[p].push(r);
          log(`${n} messages, round ${round + 1}, ${p}: first answer ${r.answer.toFixed(0)} ms, ${r.bytes} B in ${r.requests.length} requests` +
            `${r.errors.length ? `; ${r.errors.join(' | ')}` : ''}`);
        }
      }
      const rest = Object.keys(data[n].rest);
      const bySize = {
        restRaw: rest.reduce((a, u) => a + Buffer.byteLength(JSON.stringify(data[n].rest[u])), 0),
        restGzip: rest.reduce((a, u) => a + gz(u), 0),
        patterns: Object.fromEntries(pages.map((p) => [p, summarize(loads[p], graph)])),
        ratios: [],
        lastRequests: Object.fromEntries(pages.map((p) => [p, loads[p].at(-1).requests])),
      };
      // Each engine pattern against the plain page of the same kind (bundled or not), else any plain page.
      for (const a of pages.filter((p) => PATTERNS[p].page === 'engine')) {
        const b = [PATTERNS[a].bundle ? 'plain-bundle' : 'plain', ...pages.filter((p) => PATTERNS[p].page === 'plain')].find((p) => pages.includes(p));
        if (b) bySize.ratios.push([a, b]);
      }
      result.bySize[n] = bySize;
    }
  } finally {
    await browser.close();
    server.close();
  }
  result.seconds = (Date.now() - started) / 1000;
  result.machine += ` → ${os.loadavg()[0].toFixed(2)}`;
  const report = table(result);
  if (json) {
    process.stderr.write(`${report}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    console.log(`\n${report}`);
    if (argv.includes('--requests')) {
      for (const [n, bySize] of Object.entries(result.bySize)) {
        for (const [p, reqs] of Object.entries(bySize.lastRequests)) {
          console.log(`\n${n} messages, ${p}: the last load's requests`);
          for (const q of reqs) console.log(`  ${String(q.bytes).padStart(8)} B  ${q.url}${q.failed ? ` (${q.failed})` : ''}`);
        }
      }
    }
    console.log(`\ntotal ${result.seconds.toFixed(0)} s`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
