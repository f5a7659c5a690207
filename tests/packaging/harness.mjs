// Shared helpers of the packaging tests: fixture paths, servers on free ports, headless Chromium
// (playwright-core, Debian's /usr/bin/chromium), screenshots, and two browser emulations:
// no WebAssembly at all (iOS Lockdown Mode) and an engine without reference-types/multi-value
// (WebViews before Safari/iOS 15.1).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
export const artifacts = path.join(root, 'tests', 'artifacts', 'packaging');
fs.mkdirSync(artifacts, { recursive: true });

/** The scenario's expected answer (tests/packaging/shared/scenario.ts, compiled by prepare.mjs). */
export const scenario = await import(pathToFileURL(path.join(here, 'node-app', '_shared', 'scenario.mjs')).href);

export const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' };
/** For the dev servers: no NODE_ENV, as a developer runs them (Vite resolves its
 * `development|production` condition from NODE_ENV, so NODE_ENV=production would make `vite`
 * resolve the production build). */
export const devEnv = () => ({ ...env, NODE_ENV: undefined });

/** The installed tarball (prepare.mjs unpacks the same one into every app); not pkg/, which may
 * be rebuilt while the tests run. */
export const installed = path.join(here, 'node-app', 'node_modules', 'task-projection');
/** The package's store wasm of each build. */
export const STORE_WASM = {
  production: fs.readFileSync(path.join(installed, 'task_projection_bg.wasm')),
  development: fs.readFileSync(path.join(installed, 'development', 'task_projection_bg.wasm')),
};
const KNOWN_WASM = new Map(['task_projection_bg.wasm', 'development/task_projection_bg.wasm', 'mvp/task_projection_bg.wasm', 'rules/task_projection_bg.wasm', 'rules/mvp/task_projection_bg.wasm']
  .map((f) => [fs.readFileSync(path.join(installed, f)).toString('base64'), f]));
/** Which of the package's .wasm files `bytes` is (its path in the package), or 'unknown'. */
export const wasmName = (bytes) => KNOWN_WASM.get(Buffer.from(bytes).toString('base64')) ?? 'unknown';

/**
 * The files under `dir` (relative paths; `skip`: top-level folders left out) that hold each
 * build's store wasm, as bytes (an emitted asset) or as the base64 the `node` / `edge-light`
 * entries embed: { production: [...], development: [...] }.
 */
export function filesWithStoreWasm(dir, { skip = [] } = {}) {
  const needles = Object.entries(STORE_WASM).map(([build, bytes]) => [build, [bytes, Buffer.from(bytes.toString('base64'))]]);
  const found = { production: [], development: [] };
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    if (skip.includes(rel.split(path.sep)[0])) continue;
    const file = path.join(dir, rel);
    if (!fs.statSync(file).isFile()) continue;
    const data = fs.readFileSync(file);
    for (const [build, forms] of needles) if (forms.some((n) => data.includes(n))) found[build].push(rel);
  }
  return found;
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, 'localhost', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Runs a command to completion; rejects with its output on failure. Resolves to its output. */
export function exec(cmd, args, { cwd, timeoutMs = 300_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
      reject(new Error(`${cmd} ${args.join(' ')} timed out after ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} (in ${path.relative(root, cwd)}) exited with ${code ?? signal}:\n${out}`));
    });
  });
}

/**
 * Starts a long-running server in its own process group and resolves once `url` answers
 * (`env`: its environment, by default `env` above). Returns { url, log(), stop() }; stop() ends
 * that process group only.
 */
export async function serve(cmd, args, { cwd, url, timeoutMs = 60_000, env: childEnv = env }) {
  const child = spawn(cmd, args, { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  let exited = null;
  child.on('exit', (code, signal) => (exited = code ?? signal));
  const stop = () =>
    new Promise((resolve) => {
      if (exited !== null) return resolve();
      child.once('exit', () => resolve());
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        resolve();
      }
      setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {}
      }, 5000).unref();
    });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== null) throw new Error(`${cmd} ${args.join(' ')} exited with ${exited} before serving:\n${out}`);
    try {
      const r = await fetch(url);
      if (r.status < 500) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return { url, log: () => out, stop };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
  });
}

/** Removes WebAssembly before any page script runs (iOS Lockdown Mode, locked-down WebViews). */
export const NO_WEBASSEMBLY = 'delete globalThis.WebAssembly;';

/**
 * An engine that only knows WebAssembly 1.0 (MVP): modules declaring an externref/funcref value
 * type, a multi-value result or an externref table fail to compile, as on WebViews before
 * Safari/iOS 15.1. The MVP wasm passes.
 */
export const MVP_ONLY_ENGINE = `(() => {
  const W = globalThis.WebAssembly;
  const orig = { instantiate: W.instantiate, compile: W.compile, validate: W.validate, Module: W.Module };
  function postMvp(b) {
    let p = 8;
    const u32 = () => { let r = 0, s = 0, x; do { x = b[p++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80); return r; };
    while (p < b.length) {
      const id = b[p++]; const size = u32(); const end = p + size;
      if (id === 1) {
        for (let n = u32(); n > 0; n--) {
          p++;
          for (let k = 0; k < 2; k++) {
            const m = u32();
            if (k === 1 && m > 1) return 'multi-value';
            for (let j = 0; j < m; j++) if (b[p++] === 0x6f) return 'reference-types';
          }
        }
      } else if (id === 4) {
        for (let n = u32(); n > 0; n--) { if (b[p++] !== 0x70) return 'reference-types'; const f = u32(); u32(); if (f & 1) u32(); }
      }
      p = end;
    }
    return null;
  }
  function bytesOf(src) {
    if (src instanceof ArrayBuffer) return new Uint8Array(src);
    if (ArrayBuffer.isView(src)) return new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
    return null;
  }
  function check(src) {
    const b = bytesOf(src);
    const feature = b && postMvp(b);
    if (feature) throw new W.CompileError('emulated WebAssembly 1.0 engine: ' + feature + ' is not supported');
  }
  W.validate = function (src) { try { check(src); } catch { return false; } return orig.validate.call(W, src); };
  W.compile = function (src) { try { check(src); } catch (e) { return Promise.reject(e); } return orig.compile.call(W, src); };
  W.instantiate = function (src, imports) {
    if (src instanceof orig.Module) return orig.instantiate.call(W, src, imports);
    try { check(src); } catch (e) { return Promise.reject(e); }
    return orig.instantiate.call(W, src, imports);
  };
  W.instantiateStreaming = async (resp, imports) => W.instantiate(await (await resp).arrayBuffer(), imports);
  W.compileStreaming = async (resp) => W.compile(await (await resp).arrayBuffer());
  W.Module = new Proxy(orig.Module, { construct(target, args) { check(args[0]); return new target(...args); } });
})();`;

/**
 * Opens `url` in a fresh context (with optional init script), waits until the demo component
 * has applied the whole script, checks the rendered answer and which build of the package the
 * page runs (`build`: its `explain()`), screenshots it, and returns { backend, requests, wasm }
 * (`wasm`: the .wasm files the page received, by their path in the package). Page errors fail the check.
 */
export async function checkDemoPage(browser, url, { initScript, screenshot, backend, strictMode = false, build = 'production' }) {
  const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  const wasm = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.endsWith('.wasm')) wasm.push(r.body().then(wasmName, (e) => `unread: ${e.message}`));
  });
  page.on('pageerror', (e) => errors.push(e.message));
  // React reports hydration mismatches and misuse (in development builds) as console errors.
  // (A resource that failed to load is not one: the answer checks below cover what the page
  // needs, and a browser asks for a /favicon.ico no fixture has.)
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => requests.push(r.url()));
  if (initScript) await page.addInitScript(initScript);
  try {
    await page.goto(url);
    await page.waitForSelector('[data-testid="answer"][data-done="true"], [data-testid="error"]', { timeout: 30_000 });
    const error = await page.locator('[data-testid="error"]').count();
    if (error) assert.fail(`the page shows an error: ${await page.locator('[data-testid="error"]').innerText()}`);
    const text = async (id) => (await page.locator(`[data-testid="${id}"]`).innerText()).trim();
    const { EXPECTED } = scenario;
    assert.equal(await text('pending-action'), EXPECTED.pendingAction);
    assert.equal(await text('task-pending'), EXPECTED.taskPendingAction);
    assert.equal(await text('owner'), EXPECTED.owner);
    assert.equal(await text('pending-id'), EXPECTED.pendingId);
    assert.deepEqual(await page.locator('[data-testid="questions"] li').allInnerTexts(), EXPECTED.questions);
    assert.equal(await text('applied'), String(scenario.SCRIPT.length));
    // The question's component re-renders when its answer changes, not on every store change.
    const renders = Number(await page.locator('[data-testid="question"]').getAttribute('data-renders'));
    const version = Number(await text('version'));
    // Under StrictMode in development React renders every component twice.
    const factor = strictMode ? 2 : 1;
    assert.ok(renders >= 2 && renders <= 4 * factor, `the question rendered ${renders} times`);
    assert.ok(version > renders / factor + 2, `store version ${version}, question renders ${renders}`);
    // One store per page: the provider called `open` once, however often it mounted.
    assert.equal(await text('opens'), '1', 'open() ran once');
    assert.equal(await text('mounts'), strictMode ? '2' : '1', strictMode ? 'StrictMode mounted, unmounted and mounted again' : 'mounted once');
    const got = await text('backend');
    if (backend) assert.equal(got, backend);
    assert.equal(await text('explain'), scenario.EXPLAINED[build], `explain(): the ${build} build`);
    await page.screenshot({ path: path.join(artifacts, screenshot), fullPage: true });
    assert.deepEqual(errors, [], 'page errors');
    return { backend: got, requests, wasm: await Promise.all(wasm) };
  } finally {
    await context.close();
  }
}

/**
 * Opens the devtools page at `url` (shared/DevtoolsDemo.tsx: the scenario's store, the panel open)
 * and checks the panel: one panel; on the development build a session's and a task's explanation
 * as the page's store gives them (`explain`, `explainOwner`, through `window.__store`), on the
 * production build the one line that says it needs the development build. Screenshots it; page
 * errors fail the check.
 */
export async function checkDevtoolsPage(browser, url, { build, screenshot }) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  try {
    await page.goto(url);
    await page.waitForSelector('[data-testid="devtools-ready"]:not([data-version="-1"])', { timeout: 30_000 });
    // (The host element has no size of its own: attached, not "visible".)
    await page.waitForSelector('task-projection-devtools', { state: 'attached' });
    assert.equal(await page.locator('task-projection-devtools').count(), 1, 'one panel (StrictMode mounts twice)');
    // Playwright's CSS locators pierce the panel's open shadow root.
    const panel = page.locator('task-projection-devtools');
    if (build === 'production') {
      await panel.locator('.notice').waitFor();
      assert.match(await panel.locator('.notice').innerText(), /needs the development build of task-projection/);
      assert.equal(await panel.locator('button.row').count(), 0);
    } else {
      await panel.locator('button.row[data-id="sess-owner"]').click();
      assert.equal((await panel.locator('[data-testid="detail"] h3').innerText()).trim(), 'Session sess-owner');
      const e = await page.evaluate(() => {
        const x = window.__store.explain('sess-owner');
        return { turn: x.current_turn.reason, question: x.clarification.reason, rejected: x.rejected.length, requests: x.requests.map((r) => `${r.id} ${r.standing}`) };
      });
      const attr = (testid, name) => panel.locator(`[data-testid="${testid}"]`).getAttribute(name);
      assert.equal(await attr('why-current-turn', 'data-reason'), e.turn);
      assert.equal(await attr('why-question', 'data-reason'), e.question);
      assert.equal(await attr('why-rejected', 'data-count'), String(e.rejected));
      assert.ok(e.rejected >= 1, 'the scenario\'s stale input is in the log');
      const requests = await panel.locator('[data-testid="why-requests"] li').evaluateAll((lis) => lis.map((li) => `${li.dataset.messageId} ${li.dataset.standing}`));
      assert.deepEqual(requests, e.requests);
      assert.match(await panel.locator('[data-testid="why-question"]').innerText(), /^Question: the open question of the current turn is shown\./);
      await panel.locator('#tp-tab-tasks').click();
      await panel.locator('button.row[data-id="task-42"]').click();
      const owner = await page.evaluate(() => window.__store.explainOwner('task-42').owner.reason);
      assert.equal(await attr('why-owner', 'data-reason'), owner);
      assert.match(await panel.locator('[data-testid="why-owner"]').innerText(), /^Clicking the task opens sess-owner: it is the session that waits for you\./);
    }
    await page.screenshot({ path: path.join(artifacts, screenshot) });
    assert.deepEqual(errors, [], 'page errors');
  } finally {
    await context.close();
  }
}
