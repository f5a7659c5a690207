#!/usr/bin/env node
// `npm run bench`: builds what it needs and benchmarks the ProjectionStore against the stateless
// rescan and against a plain-JS baseline (bench/baseline.mjs: what an app would write instead),
// in Node (the package's `node` entry), headless Chromium (the `default` entry) and natively
// (criterion; store and stateless only), then prints one table and writes bench/results.json.
// Then the first answer on an emulated phone (bench/phone.mjs: the package's page against a
// plain-JS page, 200 and 5,000 messages; about 1.5–2.5 minutes).
//
//   npm run bench                      everything (about 6–7 minutes on 2 cores)
//   npm run bench -- --skip-native     without cargo bench     (also --skip-browser, --skip-node, --skip-phone)
//   npm run bench -- --no-build        reuse pkg/ as it is (--no-setup: skip scripts/setup.sh)
//   npm run bench -- --profile         also print a CPU profile of the Node event loop
//   npm run bench -- --skip-scale      without the 10⁶-element scale check (Node and native)
//   npm run bench -- --browser-parts=ingest,queries   only these Chromium parts
//
// Workloads: bench/workload.mjs (deterministic; bench/gen.mjs writes them to target/bench-data/
// for the native bench). Measurements: bench/store.bench.mjs. Node: bench/node.mjs, one fresh
// process per part. Chromium: bench/browser.html, one fresh page per part.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, defaultDir as dataDir } from './gen.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
/** `--browser-parts=ingest,queries`: only these Chromium parts (all by default). */
const browserParts = process.argv.find((a) => a.startsWith('--browser-parts='))?.slice('--browser-parts='.length).split(',');
const logDir = path.join(root, 'target', 'bench-logs');
fs.mkdirSync(logDir, { recursive: true });
const started = Date.now();
const say = (msg) => console.log(`bench: ${msg}`);
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;

function run(name, cmd, argv, opts = {}) {
  const log = path.join(logDir, `${name}.log`);
  const t0 = Date.now();
  const r = spawnSync(cmd, argv, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  fs.writeFileSync(log, `$ ${cmd} ${argv.join(' ')}\n${r.stdout ?? ''}\n${r.stderr ?? ''}`);
  if (r.error || r.status !== 0) {
    console.error(`bench: ${name} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}); log: ${path.relative(root, log)}`);
    console.error((r.stderr || r.stdout || '').split('\n').slice(-30).join('\n'));
    process.exit(1);
  }
  say(`${name} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return r.stdout;
}

// ---- setup and build ---------------------------------------------------------------------------
// scripts/setup.sh installs only what is missing (wasm target, wasm-bindgen-cli, Chromium, npm
// dev packages); a second run only checks.
if (!args.has('--no-setup')) run('setup', 'bash', ['scripts/setup.sh']);
if (!args.has('--no-build')) run('build', process.execPath, ['scripts/build.mjs']);
const link = path.join(root, 'bench', 'node_modules', 'task-projection');
fs.mkdirSync(path.dirname(link), { recursive: true });
fs.rmSync(link, { recursive: true, force: true });
fs.symlinkSync(path.relative(path.dirname(link), path.join(root, 'pkg')), link, 'dir');
generate(dataDir);
const snapshotPath = path.join(dataDir, 'snapshot.json');

const results = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, loadavgAtStart: os.loadavg() },
  versions: { node: process.version },
};

// ---- Node ----------------------------------------------------------------------------------
const node = (part, options = {}) =>
  JSON.parse(run(`node-${part}`, process.execPath, ['--expose-gc', 'bench/node.mjs', part, JSON.stringify({ snapshot: snapshotPath, ...options })]));
if (!args.has('--skip-node')) {
  results.node = {
    events: node('events'),
    paths: node('paths', { n: 5000 }),
    queries: node('queries'),
    ingest: node('ingest'),
    memory: node('memory'),
    memoryBoot: node('memory-boot'),
  };
  if (!args.has('--skip-scale')) results.node.scale = node('scale');
  if (args.has('--profile')) {
    // The store's wasm as cargo builds it for pkg/, before wasm-opt (which would drop the function
    // names the profile shows), with pkg/'s own JS around it.
    const { buildRawWasm } = await import('../scripts/build/wasm.mjs');
    const { MODULES } = await import('../scripts/build/common.mjs');
    const raw = buildRawWasm({ libName: 'task_projection', module: MODULES[0], targetDir: path.join(root, 'target') });
    const named = path.join(dataDir, 'pkg-named');
    fs.rmSync(named, { recursive: true, force: true });
    run('profile-bindgen', 'wasm-bindgen', ['--target', 'web', '--out-dir', named, '--out-name', 'task_projection', raw]);
    for (const file of MODULES[0].js) fs.copyFileSync(path.join(root, 'pkg', file), path.join(named, file));
    fs.writeFileSync(path.join(named, 'node.js'), [
      "import fs from 'node:fs';",
      "import { initSync } from './task_projection.js';",
      "export { ProjectionStore } from './store.js';",
      "export { boundedLoad } from './load.js';",
      "const wasm = initSync({ module: fs.readFileSync(new URL('./task_projection_bg.wasm', import.meta.url)) });",
      'export default async function init() { return wasm; }',
      '',
    ].join('\n'));
    results.node.profile = run('node-profile', process.execPath, ['bench/profile.mjs', '5000', '3'], {
      env: { ...process.env, TP_MODULE: path.join(named, 'node.js') },
    });
  }
}

// ---- Chromium ------------------------------------------------------------------------------
const MIME = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm' };
function serve() {
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.resolve(root, `.${pathname}`);
    const allowed = ['bench', 'pkg', path.join('target', 'bench-data')].some((dir) => file.startsWith(path.join(root, dir) + path.sep));
    if (!allowed || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': MIME[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
      // Cross-origin isolation: performance.now() at 5 µs instead of 100 µs.
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

if (!args.has('--skip-browser')) {
  const { chromium } = await import('playwright-core');
  const { CHROMIUM, CHROMIUM_ARGS } = await import('../tests/js/browser.mjs');
  const server = await serve();
  const base = `http://127.0.0.1:${server.address().port}/bench/browser.html`;
  // The test suites' launch settings, plus gc() for the ingest benchmark.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, '--js-flags=--expose-gc'], headless: true });
  results.versions.chromium = browser.version();
  const page = async (part, options = {}) => {
    const t0 = Date.now();
    const p = await browser.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`${base}?part=${part}&options=${encodeURIComponent(JSON.stringify(options))}`);
    await p.waitForFunction(() => window.__bench !== undefined, null, { timeout: 240_000, polling: 250 });
    const out = await p.evaluate(() => window.__bench);
    await p.close();
    if (!out.ok) throw new Error(`chromium ${part}: ${out.error} ${errors.join('; ')}`);
    if (!out.crossOriginIsolated) say(`warning: chromium page not cross-origin isolated (coarse clock)`);
    say(`chromium-${part} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    return out.result;
  };
  try {
    results.chromium = {};
    for (const [key, part] of [['events', 'events'], ['queries', 'queries'], ['ingest', 'ingest'], ['memory', 'memory'], ['memoryBoot', 'memory-boot']]) {
      if (browserParts === undefined || browserParts.includes(part)) results.chromium[key] = await page(part);
    }
  } finally {
    await browser.close();
    server.close();
  }
}

// ---- the first answer on a phone (bench/phone.mjs) -----------------------------------------------
if (!args.has('--skip-phone')) results.phone = JSON.parse(run('phone', process.execPath, ['bench/phone.mjs', '--json']));

// ---- native (criterion) ----------------------------------------------------------------------
function criterionSample(id) {
  const file = path.join(root, 'target', 'criterion', ...id.split('/'), 'new', 'sample.json');
  const { iters, times } = JSON.parse(fs.readFileSync(file, 'utf8'));
  const perIter = times.map((t, i) => t / iters[i]).sort((a, b) => a - b); // ns
  const at = (q) => perIter[Math.min(perIter.length - 1, Math.ceil(q * perIter.length) - 1)];
  return { median: at(0.5) / 1000, p90: at(0.9) / 1000, best: perIter[0] / 1000, samples: perIter.length }; // µs
}
if (!args.has('--skip-native')) {
  results.versions.rustc = spawnSync('rustc', ['--version'], { encoding: 'utf8' }).stdout.trim();
  run('native-build', 'cargo', ['bench', '--bench', 'store', '--no-run']);
  const nativeEnv = { ...process.env, BENCH_DATA: dataDir, ...(args.has('--skip-scale') ? { BENCH_SKIP: 'scale' } : {}) };
  run('native', 'cargo', ['bench', '--bench', 'store', '--', '--noplot'], { env: nativeEnv });
  const sizes = [100, 1000, 5000, 50000];
  const bytes = fs.statSync(snapshotPath).size;
  const mbps = (id) => {
    const s = criterionSample(id);
    return { ms: s.median / 1000, MBps: bytes / 1e6 / (s.median / 1e6), bestMBps: bytes / 1e6 / (s.best / 1e6) };
  };
  const boot = { parse: mbps('boot/json_parse'), parseAndFeed: mbps('boot/parse_and_ingest'), feed: mbps('boot/ingest') };
  results.native = {
    events: sizes.map((n) => {
      const wire = criterionSample(`event/store_wire/${n}`);
      const typed = criterionSample(`event/store_typed/${n}`);
      const fromText = criterionSample(`event/store_json_text/${n}`);
      const stateless = criterionSample(`event/stateless/${n}`);
      return { n, store: wire, storeFromJsonText: fromText, storeTyped: typed, stateless, ratio: stateless.median / wire.median };
    }),
    ingest: {
      mb: bytes / 1e6,
      parseMs: boot.parse.ms,
      feedMs: boot.feed.ms,
      parseAndFeedMs: boot.parseAndFeed.ms,
      parseMBps: boot.parse.MBps,
      feedMBps: boot.feed.MBps,
      parseAndFeedMBps: boot.parseAndFeed.MBps,
      bestParseMBps: boot.parse.bestMBps,
      bestFeedMBps: boot.feed.bestMBps,
      bestParseAndFeedMBps: boot.parseAndFeed.bestMBps,
      feedVsParse: boot.feed.MBps / boot.parse.MBps,
      endToEndVsParse: boot.parseAndFeed.MBps / boot.parse.MBps,
    },
  };
  if (!args.has('--skip-scale')) {
    // One call per sample (criterion's time per iteration), in ms.
    const ms = (id) => {
      const s = criterionSample(id);
      return { median: s.median / 1000, best: s.best / 1000, runs: s.samples };
    };
    const n = 1_000_000;
    results.native.scale = {
      n,
      visibleTurnHistory: ms(`scale/visible_turn_history/${n}`),
      applySessionList: ms(`scale/apply_session_list/${n}`),
      applySessionListMerge: ms(`scale/apply_session_list_merge/${n}`),
      visibleTurnHistoryTape: ms(`scale/visible_turn_history_tape/${n}`),
      applySessionListTape: ms(`scale/apply_session_list_tape/${n}`),
    };
  }
}
results.machine.loadavgAtEnd = os.loadavg();
results.seconds = (Date.now() - started) / 1000;

// ---- report ----------------------------------------------------------------------------------
fs.writeFileSync(path.join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
const f = (x, digits) => {
  if (x === undefined || Number.isNaN(x)) return '—';
  const d = digits ?? (x >= 100 ? 0 : x >= 10 ? 1 : 2);
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
};
const cell = (s) => (s ? `${f(s.median)} (${f(s.p90)})` : '—');
const W0 = 34;
const WC = 20;
const line = (label, cells) => `${label.padEnd(W0)}${cells.map((c) => String(c).padStart(WC)).join('')}`;
const out = [];
out.push('');
out.push(`task-projection ProjectionStore benchmark, ${results.date}`);
out.push(`${results.machine.cpus} × ${results.machine.cpu}; node ${results.versions.node}` +
  `${results.versions.chromium ? `, chromium ${results.versions.chromium}` : ''}${results.versions.rustc ? `, ${results.versions.rustc}` : ''}` +
  `; load avg ${results.machine.loadavgAtStart.map((x) => x.toFixed(1)).join('/')} → ${results.machine.loadavgAtEnd.map((x) => x.toFixed(1)).join('/')}`);
out.push('');
out.push('µs per WebSocket message event: applyMessageEvent + sessionPendingAction + pendingClarification');
out.push('(stateless: currentTurnId + sessionPendingAction + pendingClarificationBundle over the whole transcript;');
out.push(' baseline: the same three answers in plain JS, rescanning the arrays per event: bench/baseline.mjs)');
out.push('median (p90); baseline/store = how many times faster the store is, stateless/baseline over the same events');
out.push(line('messages in session', [100, 1000, 5000, 50000].map((n) => f(n, 0))));
const envs = [['node', results.node], ['chromium', results.chromium], ['native', results.native]];
for (const [env, r] of envs) {
  if (!r?.events) continue;
  out.push(line(`${env} store`, r.events.map((e) => cell(e.store))));
  if (r.events[0].recording) {
    out.push(line(`${env} store, recording on`, r.events.map((e) => cell(e.recording))));
    out.push(line(`${env} ratio recording on/off`, r.events.map((e) => `${f(e.recording.vsStore)}×`)));
  }
  if (r.events[0].storeFromJsonText) out.push(line(`${env} store, from JSON text`, r.events.map((e) => cell(e.storeFromJsonText))));
  if (r.events[0].storeTyped) out.push(line(`${env} store, pre-decoded`, r.events.map((e) => cell(e.storeTyped))));
  if (r.events[0].baseline) out.push(line(`${env} baseline (plain JS)`, r.events.map((e) => cell(e.baseline))));
  out.push(line(`${env} stateless`, r.events.map((e) => cell(e.stateless))));
  out.push(line(`${env} ratio stateless/store`, r.events.map((e) => `${f(e.ratio, 0)}×`)));
  if (r.events[0].baseline) {
    out.push(line(`${env} ratio baseline/store`, r.events.map((e) => `${f(e.storeVsBaseline)}×`)));
    out.push(line(`${env} ratio stateless/baseline`, r.events.map((e) => `${f(e.statelessVsBaseline)}×`)));
  }
  if (r.events[0].floor) {
    // What any stateless call must do per render (store.bench.mjs, statelessFloor), no engine.
    out.push(line(`${env} floor: read`, r.events.map((e) => cell(e.floor.read))));
    out.push(line(`${env} floor: read + UTF-8`, r.events.map((e) => cell(e.floor.text))));
    out.push(line(`${env} ratio floor/baseline`, r.events.map((e) => `${f(e.floorVsBaseline.text)}×`)));
  }
}
const checked = results.node?.events ?? results.chromium?.events;
if (checked?.some((e) => e.agreement)) {
  out.push(line('same answers, events (bundle)', checked.map((e) => (e.agreement ? `${e.agreement.same}/${e.agreement.events} (${e.agreement.withBundle})` : '—'))));
}
if (checked?.some((e) => e.baselineAgreement)) {
  // eventBench throws on any difference, so these are counts of events checked, all equal.
  out.push(line('baseline = store (stateless)', checked.map((e) => {
    const a = e.baselineAgreement;
    return a ? `${a.storeChecked}/${a.events} (${a.statelessChecked})` : '—';
  })));
}
out.push('');
const ing = envs.filter(([, r]) => r?.ingest);
if (ing.length) {
  const i0 = ing[0][1].ingest;
  out.push(`boot ingest: ${f(i0.mb, 1)} MB of JSON${i0.messages ? ` (${f(i0.messages, 0)} messages)` : ''}; MB/s of JSON text, median (best) of runs`);
  out.push(line('', ['JSON.parse', 'feed store', 'parse + feed', 'parse+feed / parse', 'feed / parse', 'floor (JS only)']));
  const both = (m, b) => (b === undefined ? f(m) : `${f(m)} (${f(b)})`);
  for (const [env, r] of ing) {
    const i = r.ingest;
    out.push(line(env === 'native' ? 'native (serde_json)' : env, [
      both(i.parseMBps, i.bestParseMBps), both(i.feedMBps, i.bestFeedMBps), both(i.parseAndFeedMBps, i.bestParseAndFeedMBps),
      `${f(i.endToEndVsParse * 100, 0)}%`, `${f(i.feedVsParse * 100, 0)}%`,
      i.floorMBps === undefined ? '—' : both(i.floorMBps, i.bestFloorMBps),
    ]));
  }
  out.push('');
}
const mem = envs.flatMap(([env, r]) => (r?.memory ? [[`${env}, one session`, r.memory], [`${env}, boot snapshot`, r.memoryBoot]] : []));
if (mem.length) {
  out.push('wasm memory per retained message (fresh instance; WebAssembly.Memory growth / messages; store.stats())');
  out.push(line('', ['messages', 'memory growth', 'growth B/msg', 'messageBytes/msg']));
  for (const [label, m] of mem) out.push(line(label, [f(m.messages, 0), f(m.growthBytes, 0), f(m.growthPerMessage, 1), f(m.messageBytesPerMessage, 1)]));
  out.push('');
}
if (results.node?.paths) {
  const p = results.node.paths.rows;
  out.push(`input paths in Node, µs per message event at ${f(results.node.paths.n, 0)} messages, median (p90)`);
  const rows = [
    ['event: apply + 2 queries', p.event],
    ['applyMessageEvent (object; js/store.js fast path)', p.applyOnly],
    ['apply + sessionPendingAction', p.applyPlusAction],
    ['applyMessageEvents batch, per event', p.batchApply],
    ['event + subscriber flush (own task)', p.eventWithFlush],
    ['sessionPendingAction, unchanged', p.sessionPendingActionCached],
    ['pendingClarification, unchanged', p.pendingClarificationCached],
    ['store.version() (call floor)', p.versionCall],
    ['JSON.stringify(payload) (JS only)', p.jsonStringify],
    ['read the 13 needed fields (JS only)', p.fieldReads],
  ];
  for (const [label, s] of rows) out.push(`${label.padEnd(40)}${cell(s).padStart(WC)}`);
  out.push('');
}
const queried = envs.filter(([, r]) => r?.queries);
if (queried.length) {
  const q0 = queried[0][1].queries;
  const counts = Object.keys(q0.rows);
  out.push(`store queries, µs per call, one session of ${f(q0.messages, 0)} messages in ${counts.join(' or ')} turns ` +
    '(repeat: nothing changed since the last call; after event: (event + query) − event, noisy)');
  out.push(line('', counts.flatMap((c) => [`${c} turns, repeat`, `${c}, after event`])));
  for (const [env, r] of queried) {
    for (const name of Object.keys(r.queries.rows[counts[0]]).filter((k) => typeof r.queries.rows[counts[0]][k] === 'object')) {
      out.push(line(`${env} ${name}`, counts.flatMap((c) => [f(r.queries.rows[c][name].repeat), f(r.queries.rows[c][name].afterEvent)])));
    }
  }
  out.push('');
}
const scales = envs.filter(([, r]) => r?.scale);
if (scales.length) {
  out.push(`scale: one call over ${f(scales[0][1].scale.n, 0)} elements, ms, median (best; the first call of the process, which grows the`);
  out.push('wasm memory: page faults) (issue 11 goal: native < 1,000, Node < 2,000)');
  out.push(line('', ['visibleTurnHistory', 'applySessionList', 'onto a held list']));
  const both = (s) => `${f(s.median, 0)} (${f(s.best, 0)}${s.all ? `; ${f(s.all[0], 0)}` : ''})`;
  for (const [env, r] of scales) {
    const s = r.scale;
    out.push(line(env, [both(s.visibleTurnHistory), both(s.applySessionList), both(s.applySessionListMerge)]));
    if (s.applySessionListTape) out.push(line(`${env}, from the tape`, [both(s.visibleTurnHistoryTape), both(s.applySessionListTape), '—']));
  }
  out.push('');
}
if (results.node?.profile) {
  out.push('CPU profile, Node store event loop at 5,000 messages (self time):');
  out.push(results.node.profile.trimEnd());
  out.push('');
}
// The package's artifacts, as the build of this run (or the last one, with --no-build) measured them.
const sizesFile = path.join(root, 'target', 'pkg-sizes.json');
if (fs.existsSync(sizesFile)) {
  const sizes = JSON.parse(fs.readFileSync(sizesFile, 'utf8'));
  results.sizes = sizes;
  fs.writeFileSync(path.join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  out.push(`package artifacts, bytes (scripts/build.mjs, ${sizes.date}${sizes.dev ? ', --dev' : ''}): raw / gzip / brotli, budget raw / gzip`);
  for (const [name, m] of Object.entries(sizes.measured)) {
    const b = sizes.budgets[name];
    out.push(`${name.padEnd(40)}${`${f(m.raw, 0)} / ${f(m.gzip, 0)} / ${f(m.brotli, 0)}`.padStart(30)}${b ? `${f(b.raw, 0)} / ${f(b.gzip, 0)}`.padStart(22) : ''}`);
  }
  out.push('');
}
if (results.phone) {
  const { table } = await import('./phone.mjs');
  out.push(table(results.phone));
  out.push('');
}
out.push(`results: bench/results.json; logs: ${path.relative(root, logDir)}/; total ${elapsed()}`);
console.log(out.join('\n'));
