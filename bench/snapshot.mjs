#!/usr/bin/env node
// Snapshots (SPEC §12): what a `dehydrate()` weighs per 1,000 messages (JSON text, raw and gzip
// -9), and what `dehydrate()` and `ProjectionStore.hydrate()` cost at 5,000 and 50,000 messages,
// in Node (the package's `node` entry) and in headless Chromium (the browser entry), against the
// same store fed its REST state the usual way (the calls a page makes instead of hydrating).
//
//   node bench/snapshot.mjs [--skip-browser] [--runs N]
//
// Workload: bench/workload.mjs `sessionHistory` (one session, turns of 20–50 messages, ~1 in 20 a
// request), content included in what the page would fetch, never in the snapshot. Prints one
// table; medians of N runs (default 7) after one warm-up.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { sessionHistory } from './workload.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const RUNS = Number(argv[argv.indexOf('--runs') + 1]) || 7;
const SIZES = [1_000, 5_000, 50_000];

/** The measurement, as source: run in Node and, stringified, in the page. */
function measure(ProjectionStore, histories, runs) {
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const time = (f) => {
    f();
    const out = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      f();
      out.push(performance.now() - t0);
    }
    return median(out);
  };
  const rows = [];
  for (const h of histories) {
    const feed = () => {
      const store = new ProjectionStore();
      store.applySessionList(h.taskId, [h.session]);
      store.applyTurnList(h.session.id, h.turns);
      store.applyMessagePage(h.session.id, h.messages);
      return store;
    };
    const source = feed();
    const text = JSON.stringify(source.dehydrate());
    const fedMs = time(() => feed().free());
    const dehydrateMs = time(() => JSON.stringify(source.dehydrate()));
    const hydrateMs = time(() => ProjectionStore.hydrate(text).free());
    const hydrated = ProjectionStore.hydrate(text);
    const same = JSON.stringify(hydrated.dehydrate()) === JSON.stringify(source.dehydrate());
    hydrated.free();
    source.free();
    rows.push({ messages: h.messages.length, bytes: text.length, text: h.messages.length === 1000 ? text : undefined, fedMs, dehydrateMs, hydrateMs, same });
  }
  return rows;
}

function histories() {
  return SIZES.map((n) => sessionHistory(n, { ns: 3, seed: 5 }));
}

async function inNode() {
  const { ProjectionStore } = await import(path.join(root, 'pkg', 'node.js'));
  return measure(ProjectionStore, histories(), RUNS);
}

async function inChromium() {
  const { chromium } = await import('playwright-core');
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/') {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><meta charset="utf-8"><title>snapshot bench</title>');
      return;
    }
    const file = path.join(root, url.pathname);
    if (!file.startsWith(path.join(root, 'pkg')) && !file.startsWith(path.join(root, 'bench'))) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
    res.setHeader('content-type', types[path.extname(file)] ?? 'application/octet-stream');
    fs.createReadStream(file).on('error', () => { res.statusCode = 404; res.end(); }).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    return await page.evaluate(async ({ source, runs, sizes }) => {
      const { default: init, ProjectionStore } = await import('/pkg/index.js');
      await init();
      const { sessionHistory } = await import('/bench/workload.mjs');
      // eslint-disable-next-line no-new-func
      const measure = new Function(`return (${source})`)();
      return measure(ProjectionStore, sizes.map((n) => sessionHistory(n, { ns: 3, seed: 5 })), runs);
    }, { source: measure.toString(), runs: RUNS, sizes: SIZES });
  } finally {
    await browser.close();
    server.close();
  }
}

const fmt = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
function table(engine, rows) {
  for (const r of rows) {
    const per1000 = (r.bytes / r.messages) * 1000;
    console.log(
      `${engine.padEnd(8)} ${String(r.messages).padStart(6)} msgs  snapshot ${String(r.bytes).padStart(9)} B (${Math.round(per1000)} B / 1,000 msgs)  ` +
        `dehydrate ${fmt(r.dehydrateMs).padStart(6)} ms  hydrate ${fmt(r.hydrateMs).padStart(6)} ms  ` +
        `REST calls instead ${fmt(r.fedMs).padStart(6)} ms  equal digest ${r.same}`,
    );
  }
}

const node = await inNode();
const thousand = node.find((r) => r.messages === 1000);
const gzip = zlib.gzipSync(thousand.text, { level: 9 }).length;
console.log(`snapshot of 1,000 messages: ${thousand.bytes} B JSON, ${gzip} B gzip -9`);
table('node', node);
if (!argv.includes('--skip-browser')) table('chromium', await inChromium());
