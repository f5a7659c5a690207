// End-to-end harness: the real `task-projection-server` binary on a throwaway SQLite file with the
// simulator mounted, the demo page (www/dist) in headless Chromium, a minimal WebSocket client for
// capturing frames, and condition waits (no fixed sleeps as assertions).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../js/browser.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts', 'e2e');
export { launchChromium };

/** The package directory the server serves at /pkg/ (TP_E2E_PKG: e.g. a snapshot of pkg/ while
 * another build rewrites it). */
const PKG = process.env.TP_E2E_PKG ?? 'pkg';

let binary;
let targetDir;
const debugBinary = (name) => {
  targetDir ??= JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: ROOT, encoding: 'utf8' })).target_directory;
  return path.join(targetDir, 'debug', name);
};

/** `task-projection-replay` (debug build: `cargo build --bin task-projection-replay`). */
export function replayBinary() {
  const replay = debugBinary('task-projection-replay');
  if (!fs.existsSync(replay)) throw new Error(`no ${replay}: run \`cargo build --bin task-projection-replay\` (npm run test:e2e does)`);
  return replay;
}

/** The server binary, located like scripts/start.mjs does (cargo metadata honours CARGO_TARGET_DIR). */
export function serverBinary() {
  if (binary) return binary;
  binary = debugBinary('task-projection-server');
  if (!fs.existsSync(binary)) {
    throw new Error(`no ${binary}: run \`cargo build -p task-projection-server --bin task-projection-server\` (npm run test:e2e does)`);
  }
  for (const need of ['www/dist/index.html', 'www/dist/app.js', path.join(PKG, 'index.js'), path.join(PKG, 'connect.js')]) {
    if (!fs.existsSync(path.resolve(ROOT, need))) throw new Error(`no ${need}: run \`node scripts/build.mjs && node www/build.mjs\``);
  }
  return binary;
}

const live = new Set();
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

/**
 * Starts the server with `--port 0 --simulator` (unless `simulator: false`) on a fresh SQLite
 * file; resolves when it printed
 * `task-projection-server listening on http://HOST:PORT`.
 */
export async function startServer({ args = [], simulator = true, timeoutMs = 30_000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tp-e2e-'));
  const database = `sqlite:${path.join(dir, 'e2e.db')}`;
  const argv = ['--database', database, '--port', '0', ...(simulator ? ['--simulator'] : []), '--www', 'www/dist', '--pkg', PKG, ...args];
  const proc = spawn(serverBinary(), argv, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'info' },
  });
  live.add(proc);
  const log = [];
  const keep = (line) => {
    log.push(line);
    if (log.length > 400) log.shift();
  };
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk) => chunk.split('\n').filter(Boolean).forEach(keep));
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => {
    live.delete(proc);
    resolve({ code, signal });
  }));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not announce itself in ${timeoutMs} ms:\n${log.join('\n')}`)), timeoutMs);
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /task-projection-server listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${log.join('\n')}`));
    });
  });
  const server = {
    url,
    log,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
    /** POST a simulator endpoint; asserts a 2xx `{"ok": true, ...}` answer and returns it. */
    async sim(route, body = {}) {
      const res = await fetch(`${url}/api/dev/sim/${route.replace(/^\//, '')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      assert.ok(res.ok, `POST /api/dev/sim/${route} ${JSON.stringify(body)} -> HTTP ${res.status}: ${text}`);
      const json = JSON.parse(text);
      assert.equal(json.ok, true, `POST /api/dev/sim/${route}: ${text}`);
      return json;
    },
    async get(route) {
      const res = await fetch(`${url}${route}`);
      const text = await res.text();
      assert.ok(res.ok, `GET ${route} -> HTTP ${res.status}: ${text}`);
      return JSON.parse(text);
    },
    async post(route, body) {
      const res = await fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
  };
  return server;
}

/** Retries `check` (which throws/asserts) until it passes; rethrows its last error on timeout. */
export async function eventually(check, { timeout = 10_000, interval = 50, message = '' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      if (message && last instanceof Error) last.message = `${message}: ${last.message}`;
      throw last;
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Opens the demo page; resolves once the task list loaded. `problems` collects page errors. */
export async function openDemo(context, url, hash = '') {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  await page.goto(`${url}/${hash}`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 20_000 });
  return { page, problems };
}

export const taskItem = (page, taskId) => page.locator(`[data-testid="task-item"][data-task-id="${taskId}"]`);
export const sessionTab = (page, sessionId) => page.locator(`[role="tab"][data-session-id="${sessionId}"]`);
export const overlay = (page) => page.getByRole('dialog');

/** The page's state as the tests read it (all from the DOM). */
export async function pageState(page) {
  return page.evaluate(() => {
    const status = document.querySelector('[data-testid="session-view"]');
    const dialog = document.querySelector('[role="dialog"]');
    const state = document.querySelector('[data-testid="session-state"]');
    return {
      hash: location.hash,
      epoch: document.querySelector('[data-testid="connection"]')?.getAttribute('data-epoch') ?? null,
      tasks: Object.fromEntries([...document.querySelectorAll('[data-testid="task-item"]')].map((b) => [b.dataset.taskId, b.dataset.pending])),
      session: status?.getAttribute('data-session-id') ?? null,
      sessionPending: status?.getAttribute('data-pending') ?? null,
      currentTurn: status?.getAttribute('data-current-turn') ?? null,
      tabs: Object.fromEntries([...document.querySelectorAll('[role="tab"]')].map((b) => [b.dataset.sessionId, b.dataset.pending])),
      overlay: dialog ? { pendingId: dialog.getAttribute('data-pending-id'), questions: [...dialog.querySelectorAll('label')].map((l) => l.textContent) } : null,
      // Questions shown as history: the wire status (an attribute), the text, and what the user
      // reads under it (the tag, or the answer they gave).
      history: [...document.querySelectorAll('[data-testid="history-question"]')].map((q) => ({
        id: q.dataset.messageId,
        status: q.dataset.status,
        text: q.querySelector('p')?.textContent,
        shown: q.querySelector('[data-testid="question-tag"]')?.textContent ?? `answer: ${q.querySelector('.answer-text')?.textContent}`,
      })),
      permissions: [...document.querySelectorAll('[data-testid="permission-row"]')].map((r) => r.querySelector('[data-testid="permission-tag"]')?.textContent ?? null),
      answerFields: document.querySelectorAll('textarea').length,
      sessionState: state?.getAttribute('data-state') ?? null,
      sessionWords: state?.textContent ?? null,
      transcript: [...document.querySelectorAll('[data-testid="transcript"] [data-message-id]')].map((m) => m.dataset.messageId),
    };
  });
}

/** `{ taskId, sessionId }` of the page's route (`#/task/ID/session/ID`). */
export async function route(page) {
  const hash = await page.evaluate(() => location.hash);
  const m = /^#\/task\/([^/]+)(?:\/session\/([^/]+))?/.exec(hash);
  return { taskId: m ? decodeURIComponent(m[1]) : null, sessionId: m?.[2] ? decodeURIComponent(m[2]) : null };
}

/**
 * After "New task": waits until the page has opened the new task's main session, working;
 * returns the route's `{ taskId, sessionId }`. Reads the DOM only (`page.evaluate`), so a
 * WebDriver page that runs `evaluate` serves as well as a Playwright one.
 */
export async function newTaskOpened(page) {
  return eventually(async () => {
    const r = await route(page);
    assert.ok(r.sessionId, `opened a session: ${JSON.stringify(r)}`);
    const s = await pageState(page);
    assert.equal(s.session, r.sessionId);
    assert.equal(s.sessionWords, 'Working');
    return r;
  }, { message: 'the new task opens' });
}

/**
 * Clicks a button of the page's "Play the agent" panel (`scenario`: the scenario card it sits in;
 * `panel`: the panel's own row, New task / Reset demo data) and waits until the simulator action finished; asserts it succeeded.
 */
export async function play(page, action, scenario = 'panel') {
  const panel = page.getByTestId('sim-panel');
  const status = panel.getByTestId('sim-status');
  const before = Number(await status.getAttribute('data-done'));
  await panel.locator(`[data-scenario="${scenario}"] [data-action="${action}"]`).click();
  await eventually(async () => assert.ok(Number(await status.getAttribute('data-done')) > before), { message: `${action} finished` });
  assert.equal(await status.getAttribute('data-kind'), 'info', `${action}: ${await status.textContent()}`);
}

/**
 * The text a person reads (header, the landing sentences, list, session, the agent panel, and the
 * "Why?" panel with its log when it is open), Details off, has no wire states, ids, revisions,
 * epochs, reason codes (`new_epoch`, `simulator_ok`) or frame types (`session.message.added`).
 */
export async function assertPlainWords(page) {
  const text = await page.evaluate(() => ['header', '.intro', 'main', '.dev']
    .map((sel) => document.querySelector(sel)?.innerText ?? '').join('\n'));
  const jargon = new RegExp([
    /WAITING_FOR_INPUT|RUNNING|\bIDLE\b|\bCOMPLETED\b|\brejected\b|\brev \d|\bepoch\b/.source,
    /\b(task|session|turn|msg|pending)-[0-9a-f]{6,}|\{"answers"/.source,
    /\b[a-z]+(?:_[a-z]+)+\b/.source, // a reason code
    /\b(?:session|turn|task|server)\.[a-z_]+/.source, // a frame type
    /\bGET \/|\/api\//.source, // a request
  ].join('|'));
  const found = jargon.exec(text);
  assert.equal(found, null, `jargon in the page text: ${found?.[0]} in\n${text}`);
}

/**
 * Every badge on screen (task list, session tabs) is whole: its text not cut (scrollWidth within
 * clientWidth), its box inside its row or tab, inside the visible part of the list or tab strip
 * (a scrolling strip clips what it scrolls away) and inside the viewport. Returns how many.
 */
export async function assertBadgesWhole(page) {
  const found = await page.evaluate(() => {
    window.scrollTo(0, 0); // a phone scrolls to a question: measure from the top of the page
    const inside = (a, b, slack = 0.5) => a.left >= b.left - slack && a.right <= b.right + slack && a.top >= b.top - slack && a.bottom <= b.bottom + slack;
    const box = (r) => ({ left: Math.round(r.left), right: Math.round(r.right), top: Math.round(r.top), bottom: Math.round(r.bottom) });
    const view = { left: 0, top: 0, right: window.innerWidth, bottom: Infinity };
    return [...document.querySelectorAll('.badge')].filter((b) => b.getClientRects().length > 0).map((badge) => {
      const rect = badge.getBoundingClientRect();
      const holder = badge.closest('[role="tab"], .task');
      const strip = badge.closest('[role="tablist"], ul');
      const holderRect = holder?.getBoundingClientRect();
      // The strip's visible part: its padding box (what a scrolling strip shows).
      const s = strip?.getBoundingClientRect();
      const visible = s && { left: s.left + strip.clientLeft, right: s.left + strip.clientLeft + strip.clientWidth, top: -Infinity, bottom: Infinity };
      return {
        text: badge.textContent,
        where: holder?.getAttribute('role') === 'tab' ? `tab ${holder.textContent}` : `task ${holder?.textContent}`,
        box: box(rect),
        whole: badge.scrollWidth <= badge.clientWidth && rect.width > 0,
        inHolder: Boolean(holderRect && inside(rect, holderRect)),
        inStrip: Boolean(visible && inside(rect, visible)),
        inViewport: inside(rect, view),
      };
    });
  });
  for (const b of found) {
    assert.ok(b.whole, `badge "${b.text}" (${b.where}) is cut: ${JSON.stringify(b)}`);
    assert.ok(b.inHolder, `badge "${b.text}" sticks out of its ${b.where}: ${JSON.stringify(b)}`);
    assert.ok(b.inStrip, `badge "${b.text}" (${b.where}) is outside the visible strip: ${JSON.stringify(b)}`);
    assert.ok(b.inViewport, `badge "${b.text}" (${b.where}) is outside the viewport: ${JSON.stringify(b)}`);
  }
  return found.length;
}

/**
 * Your answer to the open session's permission: clicks Approve or Deny in the session (the
 * permission banner above the transcript; the agent panel has no such button) and waits until
 * the permission row says so.
 */
export async function answerPermission(page, choice) {
  const before = (await pageState(page)).permissions.filter((p) => p !== null).length;
  await page.getByTestId('permission-banner').getByRole('button', { name: choice }).click();
  await eventually(async () => {
    const { permissions } = await pageState(page);
    assert.equal(permissions.filter((p) => p !== null).length, before + 1, `the permission is ${choice === 'Approve' ? 'approved' : 'denied'}`);
  }, { message: `${choice} in the session` });
}

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // From the top: a full-page capture of a scrolled page draws the sticky header mid-page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Asserts the page is no wider than its viewport (phone layouts). */
export async function assertNoOverflow(page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the viewport`);
}

/**
 * A minimal WebSocket client (RFC 6455; text frames, ping/pong, close) that records every frame
 * the server sends: the tests capture frames with it and later replay them through the simulator.
 */
export function connectFrames(url) {
  return new Promise((resolve, reject) => {
    const key = crypto.randomBytes(16).toString('base64');
    const req = http.request(`${url}/api/v1/ws`, {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key },
    });
    req.on('error', reject);
    req.on('response', (res) => reject(new Error(`websocket upgrade refused: HTTP ${res.statusCode}`)));
    req.on('upgrade', (res, socket, head) => {
      const accept = crypto.createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      if (res.headers['sec-websocket-accept'] !== accept) return reject(new Error('bad Sec-WebSocket-Accept'));
      const frames = [];
      let buffer = head ?? Buffer.alloc(0);
      let fragments = [];
      const send = (opcode, payload = Buffer.alloc(0)) => {
        const mask = crypto.randomBytes(4);
        const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
        socket.write(Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), mask, masked]));
      };
      const parse = () => {
        for (;;) {
          if (buffer.length < 2) return;
          const fin = (buffer[0] & 0x80) !== 0;
          const opcode = buffer[0] & 0x0f;
          let len = buffer[1] & 0x7f;
          let offset = 2;
          if (len === 126) {
            if (buffer.length < 4) return;
            len = buffer.readUInt16BE(2);
            offset = 4;
          } else if (len === 127) {
            if (buffer.length < 10) return;
            len = Number(buffer.readBigUInt64BE(2));
            offset = 10;
          }
          if (buffer.length < offset + len) return;
          const payload = buffer.subarray(offset, offset + len);
          buffer = buffer.subarray(offset + len);
          if (opcode === 0x9) send(0xa, payload);
          else if (opcode === 0x8) socket.end();
          else if (opcode === 0x1 || opcode === 0x0) {
            fragments.push(payload);
            if (fin) {
              frames.push(Buffer.concat(fragments).toString('utf8'));
              fragments = [];
            }
          }
        }
      };
      socket.on('data', (chunk) => {
        buffer = Buffer.concat([buffer, chunk]);
        parse();
      });
      socket.on('error', () => {});
      parse();
      resolve({
        frames,
        /** Parsed frames: [{ type, payload }]. */
        events: () => frames.map((f) => JSON.parse(f)),
        close() {
          try {
            send(0x8);
          } catch {
            // already closed
          }
          socket.destroy();
        },
      });
    });
    req.end();
  });
}

/**
 * The "Why?" panel (opened if closed) beside the store's own explanations of the session and task
 * being viewed (`store.explain`, `store.explainOwner`, read through `window.demo`): what the panel
 * says, by code, and what the package says.
 */
export async function why(page) {
  const panel = page.getByTestId('dev-panel');
  if ((await panel.getAttribute('open')) === null) await panel.locator('summary').click();
  await page.getByTestId('why').locator('[data-testid="why-question"], p.muted').first().waitFor();
  return page.evaluate(() => {
    const app = window.demo;
    const { taskId, sessionId } = app.route;
    const root = document.getElementById('why');
    const codes = (sel, attr) => [...root.querySelectorAll(sel)].map((e) => [e.dataset[attr.id], e.dataset[attr.code]]);
    return {
      explain: sessionId ? app.store.explain(sessionId) : null,
      explainOwner: taskId ? app.store.explainOwner(taskId) : null,
      shown: {
        owner: root.querySelector('[data-testid="why-owner"]')?.dataset.reason ?? null,
        currentTurn: root.querySelector('[data-testid="why-current-turn"]')?.dataset.reason ?? null,
        question: root.querySelector('[data-testid="why-question"]')?.dataset.reason ?? null,
        turns: codes('[data-testid="why-turns"] li', { id: 'turnId', code: 'standing' }),
        requests: codes('[data-testid="why-requests"] li', { id: 'messageId', code: 'standing' }),
        rejected: [...root.querySelectorAll('[data-testid="why-rejected-list"] li')].map((e) => [e.dataset.input, e.dataset.reason]),
        rejectedCount: Number(root.querySelector('[data-testid="why-rejected"]')?.dataset.count ?? NaN),
        text: root.innerText,
      },
    };
  });
}

/** The panel shows exactly what the store explains (codes per row; up to 8 rejections listed). */
export function assertWhyMatches({ explain, explainOwner, shown }) {
  if (explainOwner) assert.equal(shown.owner, explainOwner.owner.reason);
  if (!explain) return;
  assert.equal(shown.currentTurn, explain.current_turn.reason);
  assert.equal(shown.question, explain.clarification.reason);
  assert.deepEqual(shown.requests, explain.requests.map((r) => [r.id, r.standing]));
  if (shown.turns.length) assert.deepEqual(shown.turns, explain.turns.map((t) => [t.id, t.standing]));
  assert.equal(shown.rejectedCount, explain.rejected.length);
  assert.deepEqual(shown.rejected, explain.rejected.slice(0, 8).map((r) => [r.input, r.reason]));
  const codes = new Set([
    explain.current_turn.reason, explain.clarification.reason, ...explain.turns.map((t) => t.standing),
    ...explain.requests.map((r) => r.standing), ...explain.rejected.map((r) => r.reason),
  ].filter((c) => c.includes('_')));
  for (const code of codes) assert.ok(!shown.text.includes(code), `the code ${code} is worded, not shown`);
}

/**
 * The lifecycle of an e2e file: `binaries` checked before anything runs (a clear message when
 * something is not built), one Chromium for the file, and per test `setup(viewport, serverOptions)`: a server and
 * a browser context, both torn down after the test, pass or fail (`cleanups` takes more).
 */
export function browserSuite({ binaries = [serverBinary] } = {}) {
  let browser;
  const cleanups = [];
  before(async () => {
    for (const check of binaries) check();
    browser = await launchChromium();
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()().catch(() => {});
  });
  after(async () => {
    await browser?.close();
  });
  async function setup(viewport = { width: 1280, height: 800 }, serverOptions = undefined) {
    const server = await startServer(serverOptions);
    cleanups.push(() => server.stop());
    const context = await browser.newContext({ viewport });
    cleanups.push(() => context.close());
    return { server, context };
  }
  return { setup, cleanups, browser: () => browser };
}
