// WebKit (WebKitGTK's MiniBrowser) and Gecko (Firefox ESR) for tests/engines/, driven through
// W3C WebDriver: Debian's WebKitWebDriver (webkit2gtk-driver) under an Xvfb display, and
// geckodriver (`cargo install geckodriver`, scripts/setup.sh) with headless Firefox ESR.
//
// The client is the few W3C WebDriver commands the tests use (new session, navigate, execute
// sync/async script, window rect, find element, element click/send keys, screenshot, delete
// session), each an HTTP request through Node's own `fetch` with a deadline. Chosen over an npm
// client: selenium-webdriver would be fine with explicit driver paths (it calls selenium-manager,
// which downloads drivers and browsers, only when none is given) but adds its dependencies for
// these eight commands, and webdriverio is much heavier; the protocol is small and both drivers
// speak it as specified, so a failure names the driver's own error code and message.
//
//   const browser = await launch('webkit');    // or 'firefox'
//   await browser.session.navigate(url); ...; await browser.close();
//
// Every process started here (Xvfb, the driver and the browser under it) runs in its own process
// group and is killed with it on close(), on exit and on SIGINT/SIGTERM.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Where Debian's webkit2gtk-driver and libwebkit2gtk-4.1-0 put WebKitWebDriver and MiniBrowser. */
const WEBKIT_DRIVER = process.env.WEBKIT_WEBDRIVER ?? '/usr/bin/WebKitWebDriver';
const MINIBROWSER = process.env.WEBKIT_MINIBROWSER ?? findMiniBrowser();
const GECKODRIVER = process.env.GECKODRIVER ?? path.join(process.env.CARGO_HOME ?? path.join(os.homedir(), '.cargo'), 'bin', 'geckodriver');
const FIREFOX = process.env.FIREFOX_BINARY ?? '/usr/bin/firefox-esr';

/** The engines run by default; `ENGINES=webkit` (comma-separated) runs fewer. */
export const ALL_ENGINES = ['webkit', 'firefox'];

export function selectedEngines() {
  const wanted = (process.env.ENGINES ?? ALL_ENGINES.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((e) => !ALL_ENGINES.includes(e));
  if (unknown.length) throw new Error(`ENGINES: unknown engine(s) ${unknown.join(', ')} (known: ${ALL_ENGINES.join(', ')})`);
  return wanted;
}

function findMiniBrowser() {
  // MiniBrowser ships in libwebkit2gtk-4.1-0 (webkit2gtk-driver depends on it), under the
  // architecture's multiarch directory.
  try {
    const files = execFileSync('dpkg', ['-L', 'libwebkit2gtk-4.1-0'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const found = files.split('\n').find((f) => f.endsWith('/MiniBrowser'));
    if (found) return found;
  } catch {
    // not installed: missingBinaries() names the default path
  }
  return '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
}

// ---- processes ---------------------------------------------------------------------------------

const live = new Set(); // process groups started here and not stopped yet (by their leader)

/** Signals the whole group: the leader may be gone while what it started (a browser) lives on. */
function killGroup(child, signal = 'SIGKILL') {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // no process left in the group
  }
}

process.on('exit', () => {
  for (const child of live) killGroup(child);
});
// `on`, not `once`: `timeout` signals the whole process group and node --test its children too,
// so a second SIGTERM may come, and with no listener left it would kill this process before the
// first one's clean-up.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of live) killGroup(child);
    process.exit(128 + os.constants.signals[signal]);
  });
}

/** Spawns `command` in its own process group; keeps the last lines of its output for errors. */
function start(command, args, { env = process.env, extraFds = 0 } = {}) {
  const stdio = ['ignore', 'pipe', 'pipe', ...Array(extraFds).fill('pipe')];
  const child = spawn(command, args, { env, stdio, detached: true });
  live.add(child);
  const log = [];
  const keep = (chunk) => {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      log.push(line);
      if (log.length > 60) log.shift();
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.once('error', (err) => keep(`spawn error: ${err.message}`));
  return { child, log, exited };
}

/** SIGTERM to the group, up to `graceMs` for its leader to exit, then SIGKILL to what is left. */
async function stop(proc, graceMs = 3000) {
  if (!live.has(proc.child)) return;
  killGroup(proc.child, 'SIGTERM');
  let timer;
  await Promise.race([proc.exited, new Promise((resolve) => { timer = setTimeout(resolve, graceMs); })]);
  clearTimeout(timer);
  killGroup(proc.child, 'SIGKILL');
  live.delete(proc.child);
}

function withDeadline(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
    }),
  ]);
}

/** Starts Xvfb on a free display (`-displayfd`: the server picks it and writes its number). */
async function startXvfb({ width = 1280, height = 1024 } = {}) {
  const proc = start('Xvfb', ['-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp', '-noreset'], { extraFds: 1 });
  const display = await withDeadline(new Promise((resolve, reject) => {
    let out = '';
    proc.child.stdio[3].on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(`:${out.trim()}`);
    });
    proc.exited.then(({ code, signal }) => reject(new Error(`Xvfb exited (${code ?? signal}) before choosing a display:\n${proc.log.join('\n')}`)));
  }), 20_000, 'Xvfb -displayfd').catch(async (err) => {
    await stop(proc);
    throw err;
  });
  return { display, stop: () => stop(proc) };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// ---- the W3C WebDriver client ------------------------------------------------------------------

/** The W3C element reference key (WebDriver §12.1). */
const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

export class WebDriverError extends Error {
  constructor(what, status, value) {
    super(`${what}: HTTP ${status} ${value?.error ?? ''}: ${value?.message ?? JSON.stringify(value)}`.trim());
    this.code = value?.error;
  }
}

async function request(base, method, route, body, timeoutMs) {
  const what = `WebDriver ${method} ${route}`;
  let res;
  try {
    res = await fetch(`${base}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new Error(`${what}: ${err.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : err.message}`);
  }
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${what}: HTTP ${res.status}, not JSON: ${text.slice(0, 300)}`);
  }
  if (!res.ok) throw new WebDriverError(what, res.status, json.value);
  return json.value;
}

/** One WebDriver session. Every command fails with the driver's error, or after its deadline. */
export class Session {
  constructor(base, id, capabilities, { scriptTimeoutMs }) {
    this.base = `${base}/session/${id}`;
    this.id = id;
    this.capabilities = capabilities;
    this.scriptTimeoutMs = scriptTimeoutMs;
  }

  cmd(method, route, body, timeoutMs = 30_000) {
    return request(this.base, method, route, body, timeoutMs);
  }

  /** Navigates and waits for the page's load event (pageLoadStrategy "normal"). */
  navigate(url) {
    return this.cmd('POST', '/url', { url }, 90_000);
  }

  /** Runs `script` (a function body; `arguments` are `args`) and returns its JSON-able result. */
  execute(script, args = []) {
    return this.cmd('POST', '/execute/sync', { script, args }, this.scriptTimeoutMs + 10_000);
  }

  /** Runs `script` with a callback as its last argument; resolves with what the page passes it. */
  executeAsync(script, args = []) {
    return this.cmd('POST', '/execute/async', { script, args }, this.scriptTimeoutMs + 10_000);
  }

  /** Polls `expression` (a JavaScript expression) in the page until it is not undefined. */
  waitFor(expression, timeoutMs = this.scriptTimeoutMs - 1000) {
    return this.executeAsync(`
      const done = arguments[arguments.length - 1];
      const deadline = Date.now() + ${Number(timeoutMs)};
      const poll = () => {
        let value;
        try { value = (${expression}); } catch (err) { return done({ __error: String(err && err.stack || err) }); }
        if (value !== undefined) return done({ value });
        if (Date.now() > deadline) return done({ __timeout: true });
        setTimeout(poll, 50);
      };
      poll();`).then((r) => {
      if (r?.__error) throw new Error(`waiting for ${expression}: ${r.__error}`);
      if (r?.__timeout) throw new Error(`waiting for ${expression}: still undefined after ${timeoutMs} ms`);
      return r.value;
    });
  }

  setWindowRect(rect) {
    return this.cmd('POST', '/window/rect', rect);
  }

  /** The element matching `selector` (CSS), as a reference for click/sendKeys. */
  async find(selector) {
    const ref = await this.cmd('POST', '/element', { using: 'css selector', value: selector });
    return ref[ELEMENT];
  }

  /** Element Click: scrolls the element into view and clicks its centre, as a user would. */
  click(element) {
    return this.cmd('POST', `/element/${element}/click`, {});
  }

  /**
   * Clicks the element matching `selector` once it is rendered and enabled (as Playwright's
   * actionability checks do; WebDriver clicks a disabled button without error). Found again
   * when the page re-rendered it between the lookup and the click (a stale reference).
   */
  async clickWhenReady(selector, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.waitFor(`(() => { const e = document.querySelector(${JSON.stringify(selector)}); return e && !e.disabled && e.getClientRects().length ? true : undefined; })()`,
        Math.max(1000, deadline - Date.now()));
      try {
        return await this.click(await this.find(selector));
      } catch (err) {
        if (!['stale element reference', 'no such element'].includes(err.code) || Date.now() > deadline) throw err;
      }
    }
  }

  /** Element Send Keys: focuses the element and types `text` key by key. */
  sendKeys(element, text) {
    return this.cmd('POST', `/element/${element}/value`, { text });
  }

  /** A PNG of the viewport. */
  async screenshot() {
    return Buffer.from(await this.cmd('GET', '/screenshot', undefined, 60_000), 'base64');
  }

  delete() {
    return this.cmd('DELETE', '', undefined, 20_000);
  }
}

/** An element reference returned by `execute` (W3C JSON serialisation of a DOM element). */
export const elementId = (value) => value?.[ELEMENT];

// ---- engines -------------------------------------------------------------------------------------

/**
 * The engines: how to start each one's driver and what to ask it for. WebKitGTK's MiniBrowser has
 * no headless mode, so it runs on an Xvfb display; `--full-screen` hides its toolbar, so the
 * viewport is the whole window (a 390×844 window rect is a 390×844 viewport; with the toolbar the
 * window cannot be narrower than about 450 px).
 */
const ENGINES = {
  webkit: {
    label: 'WebKit (WebKitGTK MiniBrowser)',
    binaries: () => [WEBKIT_DRIVER, MINIBROWSER],
    xvfb: true,
    driver: (port) => [WEBKIT_DRIVER, [`--port=${port}`]],
    capabilities: () => ({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation', '--full-screen'] },
    }),
  },
  firefox: {
    label: 'Gecko (Firefox ESR, headless)',
    binaries: () => [GECKODRIVER, FIREFOX],
    xvfb: false,
    driver: (port) => [GECKODRIVER, ['--port', String(port), '--host', '127.0.0.1']],
    capabilities: () => ({
      browserName: 'firefox',
      'moz:firefoxOptions': {
        binary: FIREFOX,
        args: ['-headless'],
        // No first-run pages, updates or telemetry pings.
        prefs: { 'browser.shell.checkDefaultBrowser': false, 'app.update.auto': false, 'datareporting.policy.dataSubmissionEnabled': false },
      },
    }),
  },
};

/** What is missing to run `engine` (paths of absent binaries), empty when it can run. */
export function missingBinaries(engine) {
  const need = [...ENGINES[engine].binaries(), ...(ENGINES[engine].xvfb ? ['/usr/bin/Xvfb'] : [])];
  return need.filter((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Starts `engine`'s driver (and Xvfb for WebKit) and a session. Resolves to `{ session, version,
 * close() }`; close() deletes the session and kills what was started, and never throws.
 */
export async function launch(engine, { scriptTimeoutMs = 120_000, startupTimeoutMs = 60_000 } = {}) {
  const spec = ENGINES[engine];
  if (!spec) throw new Error(`unknown engine ${engine}`);
  const missing = missingBinaries(engine);
  if (missing.length) throw new Error(`${spec.label}: missing ${missing.join(', ')} (run \`bash scripts/setup.sh\`)`);

  const started = [];
  const closeAll = async () => {
    while (started.length) await started.pop()().catch(() => {});
  };
  try {
    const env = { ...process.env };
    if (spec.xvfb) {
      // WebKitWebDriver starts MiniBrowser with its own environment: DISPLAY must be set before it starts.
      const xvfb = await startXvfb();
      started.push(xvfb.stop);
      env.DISPLAY = xvfb.display;
      delete env.WAYLAND_DISPLAY;
    }
    const port = await freePort();
    const [command, args] = spec.driver(port);
    const driver = start(command, args, { env });
    started.push(() => stop(driver));
    const base = `http://127.0.0.1:${port}`;

    // Ready when GET /status answers; fail early when the driver exits.
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (driver.child.exitCode !== null || driver.child.signalCode !== null) {
        throw new Error(`${command} exited (${driver.child.exitCode ?? driver.child.signalCode}):\n${driver.log.join('\n')}`);
      }
      try {
        await request(base, 'GET', '/status', undefined, 2000);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`${command} did not answer /status in 20 s: ${err.message}\n${driver.log.join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    const created = await request(base, 'POST', '/session', { capabilities: { alwaysMatch: spec.capabilities() } }, startupTimeoutMs)
      .catch((err) => {
        err.message += `\n${command} said:\n${driver.log.join('\n')}`;
        throw err;
      });
    const session = new Session(base, created.sessionId, created.capabilities, { scriptTimeoutMs });
    started.push(() => session.delete());
    await session.cmd('POST', '/timeouts', { script: scriptTimeoutMs, pageLoad: 90_000, implicit: 0 });
    const caps = created.capabilities;
    return {
      engine,
      label: spec.label,
      session,
      version: `${caps.browserName} ${caps.browserVersion}`,
      driverLog: driver.log,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
