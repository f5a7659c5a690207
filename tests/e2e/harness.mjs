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
/** The question's dialog (the page's own: the devtools panel is a dialog too, in its shadow root). */
export const overlay = (page) => page.locator('#overlay-slot').getByRole('dialog');
/** The header's connection line (the devtools panel has one too). */
export const connectionLine = (page) => page.locator('header [data-testid="connection"]');

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

/** What the package's devtools panel shows (its shadow root): the toggle, and the open panel's
 * text without its details lines (where its codes are) and without what is hidden. */
export async function panelWords(page) {
  return page.evaluate(() => {
    const root = document.querySelector('task-projection-devtools')?.shadowRoot;
    if (!root) return null;
    const out = [root.querySelector('.toggle')?.textContent ?? ''];
    const panel = root.querySelector('.panel');
    if (panel && !panel.hidden) {
      // A copy without the details lines, the hidden parts and the styles.
      const copy = panel.cloneNode(true);
      for (const n of copy.querySelectorAll('.details, [hidden], style')) n.remove();
      out.push(copy.textContent);
    }
    return out.join('\n');
  });
}

const JARGON = [
  /WAITING_FOR_INPUT|RUNNING|\bIDLE\b|\bCOMPLETED\b|\brejected\b|\brev \d|\bepoch\b/.source,
  /\{"answers"/.source,
  /\b[a-z]+(?:_[a-z]+)+\b/.source, // a reason code
  /\b(?:session|turn|task|server)\.[a-z_]+/.source, // a frame type
  /\bGET \/|\/api\//.source, // a request
];
const IDS = /\b(task|session|turn|msg|pending)-[0-9a-f]{6,}/.source;

/**
 * The text a person reads (header, the landing sentences, list, session, the agent panel, the
 * page's log when it is open), Details off, has no wire states, ids, revisions, epochs, reason
 * codes (`new_epoch`, `simulator_ok`) or frame types (`session.message.added`). Nor has the
 * package's devtools panel (its toggle; open, its text outside its details lines), whose subject
 * is the ids the store holds: ids are the one thing it names in words.
 */
export async function assertPlainWords(page) {
  const text = await page.evaluate(() => ['header', '.intro', 'main', '.log']
    .map((sel) => document.querySelector(sel)?.innerText ?? '').join('\n'));
  const jargon = new RegExp([...JARGON, IDS].join('|'));
  const found = jargon.exec(text);
  assert.equal(found, null, `jargon in the page text: ${found?.[0]} in\n${text}`);
  const panel = await panelWords(page);
  assert.notEqual(panel, null, 'the page has the devtools panel');
  const inPanel = new RegExp(JARGON.join('|')).exec(panel);
  assert.equal(inPanel, null, `jargon in the devtools panel outside its details lines: ${inPanel?.[0]} in\n${panel}`);
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
 * The controls that open the devtools panel are whole and on screen: its own toggle (its shadow
 * root) and the session's "Why?" (when a session is open). Returns what was measured.
 */
export async function assertPanelControlsWhole(page) {
  const found = await page.evaluate(() => {
    const toggle = document.querySelector('task-projection-devtools')?.shadowRoot?.querySelector('.toggle');
    const why = document.querySelector('[data-testid="why-button"]');
    return [['the panel\'s toggle', toggle], ['Why?', why]].filter(([, el]) => el && el.getClientRects().length > 0).map(([name, el]) => {
      el.scrollIntoView({ block: 'nearest' });
      const r = el.getBoundingClientRect();
      return {
        name, text: el.textContent, box: { left: Math.round(r.left), right: Math.round(r.right), top: Math.round(r.top), bottom: Math.round(r.bottom) },
        whole: el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight && r.width > 0,
        inViewport: r.left >= -0.5 && r.right <= window.innerWidth + 0.5 && r.top >= -0.5 && r.bottom <= window.innerHeight + 0.5,
      };
    });
  });
  for (const c of found) {
    assert.ok(c.whole, `${c.name} is cut: ${JSON.stringify(c)}`);
    assert.ok(c.inViewport, `${c.name} is outside the viewport: ${JSON.stringify(c)}`);
  }
  return found;
}

/**
 * Your answer to the open session's permission: clicks Approve or Deny in the session (the
 * permission banner above the transcript; the agent panel has no such button) and waits until
 * the permission row says so.
 */
/** Writes to the agent from the session's message box (a new turn starts with it) and waits for it to be sent. */
export async function sendPrompt(page) {
  const box = page.getByTestId('composer');
  const before = Number(await box.getAttribute('data-sent'));
  await box.getByTestId('prompt-send').click();
  await eventually(async () => {
    assert.equal(Number(await box.getAttribute('data-sent')), before + 1, await box.getByTestId('composer-notice').textContent());
    assert.match(await box.getByTestId('composer-notice').textContent(), /^Sent: /, 'the message box says it was sent');
  }, { message: 'the message was sent' });
}

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

/** The devtools panel's element (in its shadow root; Playwright's CSS locators pierce it). */
export const devtools = (page, selector = '') => page.locator(`task-projection-devtools ${selector}`.trim());

/** Closes the devtools panel with its close button (its toggle stays). */
export async function closePanel(page) {
  if (await devtools(page, '.panel').isVisible()) await devtools(page, 'button.close').click();
  await devtools(page, '.panel').waitFor({ state: 'hidden' });
}

/** What the open panel's explanation says (codes from its elements' data-* attributes, words
 * without its details lines), read in the page. */
function readExplanation() {
  const root = document.querySelector('task-projection-devtools').shadowRoot.querySelector('[data-testid="detail"]');
  const all = (sel) => [...root.querySelectorAll(sel)];
  const codes = (sel, id, code) => all(sel).map((e) => [e.dataset[id], e.dataset[code]]);
  const copy = root.cloneNode(true);
  for (const d of copy.querySelectorAll('.details')) d.remove();
  const answers = Object.fromEntries(all('[data-answer]').map((dd) => {
    const words = dd.cloneNode(true);
    for (const d of words.querySelectorAll('.details')) d.remove();
    return [dd.dataset.answer, words.textContent];
  }));
  const h3 = root.querySelector('h3');
  return {
    heading: h3 ? { kind: h3.dataset.kind, id: h3.dataset.id } : null,
    answers,
    owner: root.querySelector('[data-testid="why-owner"]')?.dataset.reason ?? null,
    currentTurn: root.querySelector('[data-testid="why-current-turn"]')?.dataset.reason ?? null,
    question: root.querySelector('[data-testid="why-question"]')?.dataset.reason ?? null,
    turns: codes('[data-testid="why-turns"] li', 'turnId', 'standing'),
    requests: codes('[data-testid="why-requests"] li', 'messageId', 'standing'),
    rejected: all('[data-testid="why-rejected-list"] li').map((e) => [e.dataset.input, e.dataset.reason]),
    rejectedCount: Number(root.querySelector('[data-testid="why-rejected"]')?.dataset.count ?? NaN),
    text: copy.textContent,
  };
}

/**
 * The package's devtools panel, opened by the session's "Why?" on the session being viewed (or,
 * `task: true`, then on its task through the explanation's link to it), beside the store's own
 * explanations (`store.explain`, `store.explainOwner`, read through `window.demo`): what the panel
 * says, by code and in words, and what the package says. The panel is closed again after, unless
 * `keepOpen`.
 */
export async function why(page, { task = false, keepOpen = false } = {}) {
  const { taskId, sessionId } = await page.evaluate(() => window.demo.route);
  assert.ok(sessionId, 'a session is open');
  await page.getByTestId('why-button').click();
  await devtools(page, `h3[data-kind="session"][data-id="${sessionId}"]`).waitFor();
  if (task) {
    await devtools(page, '[data-testid="detail"] p.muted button.link[data-kind="tasks"]').click();
    await devtools(page, `h3[data-kind="task"][data-id="${taskId}"]`).waitFor();
  }
  const shown = await page.evaluate(readExplanation);
  const store = await page.evaluate(({ t, s, task }) => ({
    explain: task ? null : window.demo.store.explain(s),
    explainOwner: task ? window.demo.store.explainOwner(t) : null,
  }), { t: taskId, s: sessionId, task });
  if (!keepOpen) await closePanel(page);
  return { ...store, shown };
}

/** The panel shows exactly what the store explains (codes per row; up to 20 rejections listed). */
export function assertWhyMatches({ explain, explainOwner, shown }) {
  const rejected = (e) => {
    assert.equal(shown.rejectedCount, e.rejected.length);
    assert.deepEqual(shown.rejected, e.rejected.slice(0, 20).map((r) => [r.input, r.reason]));
    assert.match(shown.text, new RegExp(`Late updates ignored: ${e.rejected.length || 'none'}\\.`));
  };
  const codes = new Set();
  if (explainOwner) {
    assert.deepEqual(shown.heading, { kind: 'task', id: explainOwner.task_id });
    assert.equal(shown.owner, explainOwner.owner.reason);
    rejected(explainOwner);
    for (const c of [explainOwner.owner.reason, explainOwner.pending_action.reason, ...explainOwner.rejected.map((r) => r.reason)]) codes.add(c);
  }
  if (explain) {
    assert.deepEqual(shown.heading, { kind: 'session', id: explain.session_id });
    assert.equal(shown.currentTurn, explain.current_turn.reason);
    assert.equal(shown.question, explain.clarification.reason);
    assert.deepEqual(shown.requests, explain.requests.map((r) => [r.id, r.standing]));
    if (shown.turns.length) assert.deepEqual(shown.turns, explain.turns.map((t) => [t.id, t.standing]));
    rejected(explain);
    for (const c of [
      explain.current_turn.reason, explain.clarification.reason, explain.pending_action.reason, explain.permission.reason,
      ...explain.turns.map((t) => t.standing), ...explain.requests.map((r) => r.standing), ...explain.rejected.map((r) => r.reason),
    ]) codes.add(c);
  }
  for (const code of codes) if (code.includes('_')) assert.ok(!shown.text.includes(code), `the code ${code} is worded, not shown`);
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
