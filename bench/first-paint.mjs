#!/usr/bin/env node
// The first answer on a phone (issue 32): how long the Next.js fixture's two README pages take,
// from navigation start, until the live question's text is visible, with and without the
// server-rendering hand-off:
//   rest  /readme/tasks/task-1      the provider opens the store after init() (the .wasm), then
//                                   TaskFeed loads the REST state on mount; the socket adds;
//   ssr   /readme/tasks/ssr/task-1  a server component builds the store from the REST API and
//                                   hands `dehydrate()` to the provider as initialState (the
//                                   question is in the HTML; the browser fetches no REST).
//
//   node bench/first-paint.mjs [--runs N] [--bundler turbopack|webpack] [--no-build] [--cpu R]
//                              [--requests]
//
// Needs the packaging fixture installed (`bash scripts/test-packaging.sh --no-build` once after a
// build: the tarball in tests/packaging/next-app/node_modules and the README's pages in
// next-app/app/readme/). Builds the app (`next build --turbopack` by default; `--no-build`: the
// .next already there) and serves it with `next start` behind a small front server on the same
// origin, which answers what the reference server would: /api/v1/* from tests/js/readme-backend.mjs
// (REST_ASKED: the agent waits for its two-question bundle; plain JSON, as the reference server
// sends it) and the /api/v1/ws upgrade with its server.hello (helloFor: resumed when the
// connection asks for the stream position the REST state was read at). Everything else is piped
// to Next unchanged (gzip as Next serves it). The server component reads the same REST_ASKED from
// TASKS_API on loopback (no emulated latency between the Next server and its API).
//
// Headless Chromium, one fresh context per load (a phone viewport), and over CDP: CPU slowed
// R× (default 4), 150 ms latency, 1.6 Mbit/s down, 750 kbit/s up (Lighthouse's mobile profile),
// cache disabled. A MutationObserver installed before any page script records performance.now()
// (ms since navigation start) when both questions' texts are first in the body's innerText
// (visible: not in a hidden streaming placeholder), and whether "Nothing needs you." ever was;
// beside it the first contentful paint, when the (streamed) HTML finished arriving (the
// navigation's responseEnd) and when the page says "Live updates are on." (the store open, its
// WebSocket connected).
// Bytes: the sum of encodedDataLength of Network.loadingFinished until the page is live and the
// network quiet (the WebSocket's frames not included). One unmeasured load of each page first,
// then N rounds (default 7) alternating the pages (rest, ssr / ssr, rest / …). Prints a table of
// medians with their range; `--requests` also lists each page's requests (last load).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const app = path.join(root, 'tests', 'packaging', 'next-app');
const next = path.join(app, 'node_modules', '.bin', 'next');

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const RUNS = Number(option('--runs', 7));
const BUNDLER = option('--bundler', 'turbopack');
const CPU = Number(option('--cpu', 4));
assert.ok(Number.isInteger(RUNS) && RUNS >= 1, '--runs N: a positive integer');
assert.ok(['turbopack', 'webpack'].includes(BUNDLER), '--bundler turbopack|webpack');
assert.ok(CPU >= 1, '--cpu R: a slowdown factor, 1 or more');

for (const [file, what] of [
  [next, 'Next.js'],
  [path.join(app, 'node_modules', 'task-projection', 'package.json'), 'the packed task-projection'],
  [path.join(app, 'app', 'readme', 'tasks', 'ssr', '[taskId]', 'page.tsx'), "the README's pages"],
]) {
  if (!fs.existsSync(file)) {
    console.error(`first-paint: ${what} is not in the fixture (${path.relative(root, file)}): run bash scripts/test-packaging.sh --no-build (after node scripts/build.mjs)`);
    process.exit(1);
  }
}

// After the check: harness.mjs imports a file prepare.mjs generates.
const { QUESTION_TEXT, REST_ASKED, helloFor, restBody } = await import('../tests/js/readme-backend.mjs');
const { env, exec, freePort, launchBrowser, serve } = await import('../tests/packaging/harness.mjs');

const PAGES = { rest: '/readme/tasks/task-1', ssr: '/readme/tasks/ssr/task-1' };
const QUESTIONS = Object.values(QUESTION_TEXT);
const NOTHING = 'Nothing needs you.';
const LIVE = 'Live updates are on.';
const PHONE = { viewport: { width: 412, height: 823 }, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true };
const NETWORK = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 };

/** Installed before any page script: when the question's texts are first visible, in ms since navigation start. */
const WATCH = `(() => {
  const questions = ${JSON.stringify(QUESTIONS)};
  const fp = (window.__firstPaint = { question: null, live: null, nothing: false });
  const shows = (body, raw, text) => raw.includes(text) && body.innerText.includes(text);
  const check = () => {
    const body = document.body;
    if (!body) return;
    const now = performance.now();
    const raw = body.textContent;
    if (fp.question === null && questions.every((q) => shows(body, raw, q))) fp.question = now;
    if (!fp.nothing && shows(body, raw, ${JSON.stringify(NOTHING)})) fp.nothing = true;
    if (fp.live === null && shows(body, raw, ${JSON.stringify(LIVE)})) fp.live = now;
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
  document.addEventListener('DOMContentLoaded', check);
})();`;

// The API the server component reads (TASKS_API).
const api = http.createServer((req, res) => {
  const body = restBody(req.url, REST_ASKED);
  res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: { code: 'not_found' } }));
});
await new Promise((resolve) => api.listen(0, 'localhost', resolve));
env.TASKS_API = `http://localhost:${api.address().port}/api/v1`;

if (!argv.includes('--no-build')) {
  const t0 = Date.now();
  fs.rmSync(path.join(app, '.next'), { recursive: true, force: true });
  await exec(next, ['build', `--${BUNDLER}`], { cwd: app, timeoutMs: 900_000 });
  console.log(`first-paint: next build --${BUNDLER} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
} else if (!fs.existsSync(path.join(app, '.next', 'BUILD_ID'))) {
  console.error('first-paint: --no-build, but tests/packaging/next-app/.next holds no build');
  process.exit(1);
}

const nextPort = await freePort();
const server = await serve(next, ['start', '--port', String(nextPort), '--hostname', 'localhost'], { cwd: app, url: `http://localhost:${nextPort}/api/answer` });

// The page's origin: /api/v1 and its WebSocket answered here, everything else piped to Next.
let browserApi = [];
const sockets = new Set();
const wsFrame = (text) => {
  const data = Buffer.from(text);
  const head = data.length < 126 ? Buffer.from([0x81, data.length]) : data.length < 65536 ? Buffer.from([0x81, 126, data.length >> 8, data.length & 255]) : null;
  assert.ok(head, 'a frame under 64 KiB');
  return Buffer.concat([head, data]);
};
const front = http.createServer((req, res) => {
  const { pathname } = new URL(req.url, 'http://localhost');
  if (pathname.startsWith('/api/v1/')) {
    browserApi.push(pathname);
    const body = restBody(req.url, REST_ASKED);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: { code: 'not_found' } }));
    return;
  }
  const upstream = http.request({ host: 'localhost', port: nextPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.rawHeaders);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
front.on('upgrade', (req, socket) => {
  socket.on('error', () => {});
  if (!new URL(req.url, 'http://localhost').pathname.endsWith('/api/v1/ws')) return socket.destroy();
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.write(wsFrame(JSON.stringify(helloFor(req.url))));
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  // The client sends nothing but its close frame: answer it and end.
  socket.on('data', (d) => {
    if ((d[0] & 0x0f) === 8) socket.end(Buffer.from([0x88, 0]));
  });
});
await new Promise((resolve) => front.listen(0, 'localhost', resolve));
const origin = `http://localhost:${front.address().port}`;

const browser = await launchBrowser();

/** One load of `page` in a fresh context on the phone profile. */
async function load(name) {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) errors.push(m.text());
  });
  const cdp = await context.newCDPSession(page);
  let bytes = 0;
  let requests = 0;
  const inflight = new Set();
  const listed = new Map();
  let lastNetwork = Date.now();
  cdp.on('Network.requestWillBeSent', (e) => {
    listed.set(e.requestId, { url: e.request.url.replace(origin, ''), encoding: '', bytes: 0 });
    inflight.add(e.requestId);
    lastNetwork = Date.now();
  });
  cdp.on('Network.responseReceived', (e) => {
    const entry = listed.get(e.requestId);
    if (entry) entry.encoding = Object.entries(e.response.headers).find(([k]) => k.toLowerCase() === 'content-encoding')?.[1] ?? 'identity';
  });
  cdp.on('Network.loadingFinished', (e) => {
    if (listed.has(e.requestId)) listed.get(e.requestId).bytes = e.encodedDataLength;
    bytes += e.encodedDataLength;
    requests += 1;
    inflight.delete(e.requestId);
    lastNetwork = Date.now();
  });
  cdp.on('Network.loadingFailed', (e) => {
    inflight.delete(e.requestId);
    lastNetwork = Date.now();
  });
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', NETWORK);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU });
  await page.addInitScript(WATCH);
  browserApi = [];
  try {
    await page.goto(`${origin}${PAGES[name]}`, { waitUntil: 'commit', timeout: 60_000 });
    const deadline = Date.now() + 60_000;
    let fp;
    // Until live, then until no request has been in flight for 1 s (what the load transfers).
    for (;;) {
      fp = await page.evaluate(() => window.__firstPaint);
      if (fp.question !== null && fp.live !== null && inflight.size === 0 && Date.now() - lastNetwork > 1000) break;
      if (Date.now() > deadline) {
        const shown = await page.locator('body').innerText().catch(() => '?');
        throw new Error(`${name}: not live with the question within 60 s (${JSON.stringify(fp)}); the page shows "${shown.trim()}"; errors: ${errors.join(' | ') || 'none'}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const { fcp, html } = await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
      html: performance.getEntriesByType('navigation')[0]?.responseEnd ?? null,
    }));
    return { name, question: fp.question, live: fp.live, fcp, html, nothing: fp.nothing, bytes, requests, api: browserApi.length, errors, listed: [...listed.values()] };
  } finally {
    await context.close();
  }
}

const results = { rest: [], ssr: [] };
try {
  const load1 = os.loadavg()[0];
  await load('rest');
  await load('ssr');
  for (let round = 0; round < RUNS; round++) {
    for (const name of round % 2 === 0 ? ['rest', 'ssr'] : ['ssr', 'rest']) {
      const r = await load(name);
      results[name].push(r);
      console.log(
        `first-paint: round ${round + 1} ${name.padEnd(4)} question ${r.question.toFixed(0)} ms, FCP ${r.fcp?.toFixed(0) ?? '-'} ms, HTML ${r.html?.toFixed(0) ?? '-'} ms, live ${r.live.toFixed(0)} ms, ` +
          `${r.bytes} B in ${r.requests} requests, ${r.api} REST from the browser${r.nothing ? `, showed "${NOTHING}"` : ''}${r.errors.length ? `, errors: ${r.errors.join(' | ')}` : ''}`,
      );
    }
  }
  const median = (xs) => {
    const s = xs.slice().sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const range = (xs) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  const ms = (rs, key) => `${median(rs.map((r) => r[key])).toFixed(0)} (${range(rs.map((r) => r[key]))})`;
  const chromium = browser.version();
  console.log(
    `\nNext.js fixture (next build --${BUNDLER}, next start), Chromium ${chromium}, CPU ${CPU}× slower, 150 ms / 1.6 Mbit/s / 750 kbit/s, ` +
      `cache off; ${RUNS} loads each, median (range); ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, load ${load1.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}`,
  );
  const rows = [['page', 'question visible, ms', 'first contentful paint, ms', 'HTML received, ms', 'live, ms', 'bytes (requests)', 'REST from the browser', `"${NOTHING}"`]];
  for (const [name, rs] of Object.entries(results)) {
    rows.push([
      `${name} ${PAGES[name]}`,
      ms(rs, 'question'),
      rs.every((r) => r.fcp !== null) ? ms(rs, 'fcp') : '-',
      rs.every((r) => r.html !== null) ? ms(rs, 'html') : '-',
      ms(rs, 'live'),
      `${median(rs.map((r) => r.bytes)).toFixed(0)} (${median(rs.map((r) => r.requests))})`,
      `${median(rs.map((r) => r.api))}`,
      rs.some((r) => r.nothing) ? `shown in ${rs.filter((r) => r.nothing).length} of ${rs.length}` : 'never',
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
  const ratio = median(results.rest.map((r) => r.question)) / median(results.ssr.map((r) => r.question));
  console.log(`the server-rendered page shows the question ${ratio.toFixed(1)}× sooner`);
  if (argv.includes('--requests')) {
    for (const [name, rs] of Object.entries(results)) {
      console.log(`\n${name}: the last load's requests`);
      for (const q of rs[rs.length - 1].listed) console.log(`  ${String(q.bytes).padStart(8)} B  ${q.encoding.padEnd(8)}  ${q.url}`);
    }
  }
  const errors = [...results.rest, ...results.ssr].flatMap((r) => r.errors);
  if (errors.length) console.log(`page errors: ${[...new Set(errors)].join(' | ')}`);
  assert.ok(results.ssr.every((r) => r.api === 0), 'the server-rendered page fetched REST from the browser');
} finally {
  await browser.close();
  for (const s of sockets) s.destroy();
  front.close();
  api.close();
  await server.stop();
}
