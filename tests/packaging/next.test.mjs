// The packed tarball in a stock Next.js App Router app (tests/packaging/next-app: the
// next.config.ts `create-next-app` generates, `cacheComponents` on, strict TypeScript, no wasm
// configuration), built with webpack and with Turbopack, served by `next start`: a server
// component and a route handler on the Node.js runtime, the edge runtime (middleware.ts), and
// client components (static import, and the loader in an engine without WebAssembly / with
// WebAssembly 1.0 only) in headless Chromium, and the package README's React example (its tsx
// blocks, written into app/readme/ by prepare.mjs) against a mocked REST + WebSocket server, and
// with REST only (no WebSocket server at all), and its server-rendered page (the store built by a
// server component from the REST API below and handed over with dehydrate()). Each build holds the
// production wasm and nothing of the development build's, and serves the production wasm; under
// `next dev` the page, the route handler and the edge runtime run the development build (explain()
// works). The devtools panel (<ProjectionDevtools />): under `next dev` it explains the page's store,
// in the production builds it says it needs the development build, and the README's pages (which
// render it in development only) carry none of it. The README's Answering form (useRespond) on its
// task page, with the socket connected but silent, under `next dev` and both builds, at 1280×800 and
// 390×844: Send, a double click, a 503 then Retry, a 409, Skip. Then `tsc --noEmit` of the app,
// the README's example included.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FRAMES, FRAME_GAP_MS, OFFSET, QUESTION_TEXT, REST, REST_ASKED, REST_TWO, SECOND_TASK, STREAM, helloFor, respondPendingId, respondReply, restBody } from '../js/readme-backend.mjs';
import { startServer } from '../e2e/harness.mjs';
import { MVP_ONLY_ENGINE, NO_WEBASSEMBLY, artifacts, checkDemoPage, checkDevtoolsPage, devEnv, env, exec, filesWithStoreWasm, freePort, here, launchBrowser, scenario, serve, wasmName } from './harness.mjs';

const app = path.join(here, 'next-app');
const next = path.join(app, 'node_modules', '.bin', 'next');
const { EXPECTED, EXPLAINED } = scenario;

let browser;
// The REST API the README's server component reads (TASKS_API in the Next server's environment):
// REST_TWO, the state in which the agent waits for the two-question bundle in task-1 (and another
// in task-2, which its page links to). `apiRequests`: the paths it was asked for.
let api;
const apiRequests = [];
before(async () => {
  browser = await launchBrowser();
  api = http.createServer((req, res) => {
    apiRequests.push(new URL(req.url, 'http://localhost').pathname);
    const body = restBody(req.url, REST_TWO);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: { code: 'not_found' } }));
  });
  await new Promise((resolve) => api.listen(0, 'localhost', resolve));
  env.TASKS_API = `http://localhost:${api.address().port}/api/v1`;
  // The reference server, for the README as a user runs it: it allows the origin of the app
  // server started for it (`appPort`), and the builds forward /api/v1 to it (TASKS_API_ORIGIN).
  appPort = await freePort();
  reference = await startServer({ args: ['--allow-origin', `http://localhost:${appPort}`] });
  env.TASKS_API_ORIGIN = reference.url;
});
after(async () => {
  await browser?.close();
  await reference?.stop();
  await new Promise((resolve) => (api ? api.close(resolve) : resolve()));
});
let reference;
let appPort;

// ---- Answering (the README's "Answering" section: its AnswerForm below TaskStatus) ---------------

/** What the tests type into the README's form, and the body it must post (the reference server's). */
const TYPED = { 'Answer 1': 'eu-west-1', 'Answer 2': 'No' };
const ANSWERS = { answers: [{ question_id: 'q-1', answer: 'eu-west-1' }, { question_id: 'q-2', answer: 'No' }] };
/** How long the mocked server takes to answer a POST respond (the page shows it as submitting meanwhile). */
const RESPOND_MS = 400;
const VIEWPORTS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];
/** What the page shows for a failed or refused answer. */
const FAILURE_TEXT = /not confirmed|refused/;
/** Chromium's console line for a response with an error status (the 409 and 503 the tests send). */
const STATUS_LINE = /^Failed to load resource: the server responded with a status of (409|503)/;

/**
 * The README's task page at `url` with the question asked (REST_ASKED on mount) and the socket
 * connected but silent (it resumes the stream, then sends nothing), the answers typed; `mark`:
 * how many REST requests the page had made by then.
 */
async function openToAnswer(url, { replies = [], viewport }) {
  const run = await openReadmePage(browser, url, { rest: REST_ASKED, socket: 'resume', replies, viewport });
  try {
    await run.waitForQuestion();
    await run.page.getByText('Live updates are on.').waitFor({ timeout: 15_000 });
    for (const [label, text] of Object.entries(TYPED)) await run.page.getByLabel(label).fill(text, { timeout: 10_000 });
  } catch (e) {
    await run.close();
    throw e;
  }
  return Object.assign(run, { mark: run.requested.length });
}

/** The answer settled: the question is gone and nothing needs the user, from the reply alone. */
async function expectSettled(run, what) {
  await run.page.getByText('Nothing needs you.').waitFor({ timeout: 10_000 }).catch(async () => {
    assert.fail(`${what}: the page never said "Nothing needs you."; it shows "${(await run.page.locator('body').innerText()).trim()}"; posts ${JSON.stringify(run.posts)}`);
  });
  assert.equal(await run.page.getByRole('status').count(), 0, `${what}: the question is gone`);
  const text = await run.page.locator('body').innerText();
  for (const q of Object.values(QUESTION_TEXT)) assert.ok(!text.includes(q), `${what}: "${q}" is still shown`);
  assert.equal(await run.page.getByRole('button', { name: 'Send' }).count(), 0, `${what}: the form is gone`);
  assert.deepEqual(run.requested.slice(run.mark), [], `${what}: no REST read after the answer`);
  assert.equal(run.sockets(), 1, `${what}: one WebSocket`);
  assert.equal(run.framesSent(), 1, `${what}: the socket sent nothing but its hello`);
}

/** Every text the page showed (window.__shownTexts) that says an answer failed. */
const failuresShown = async (run) => (await run.page.evaluate(() => window.__shownTexts)).filter((t) => FAILURE_TEXT.test(t));

/** The Answering tests on the README's client-loaded page of the server at `base()`. */
function answeringTests(base, name) {
  const url = () => `${base()}/readme/tasks/task-1`;
  const sizes = VIEWPORTS.map(({ width, height }) => `${width}×${height}`).join(', ');

  test(`Answering (README): Send posts the answers once; while in flight the question stays, marked as sending; then it goes with the socket silent and no REST read (${sizes})`, async () => {
    for (const viewport of VIEWPORTS) {
      const size = `${viewport.width}x${viewport.height}`;
      const run = await openToAnswer(url(), { viewport });
      try {
        await run.page.screenshot({ path: path.join(artifacts, `${name}-readme-answer-${size}.png`), fullPage: true });
        await run.page.getByRole('button', { name: 'Send' }).click();
        await expectSettled(run, `Send at ${size}`);
        assert.deepEqual(run.posts, [ANSWERS], 'one POST with the reference server\'s body');
        const texts = await run.page.evaluate(() => window.__shownTexts);
        assert.ok(texts.some((t) => t.includes('Sending…') && t.includes(QUESTION_TEXT['q-1'])), `in flight: the question shown with "Sending…"; the page showed, in order:\n${texts.join('\n---\n')}`);
        assert.deepEqual(await failuresShown(run), [], 'no failure shown');
        assert.deepEqual(run.errors, [], 'page errors');
      } finally {
        await run.close();
      }
    }
  });

  test(`Answering (README): a double click (two clicks before any render) sends exactly one POST and shows no failure (${sizes})`, async () => {
    for (const viewport of VIEWPORTS) {
      const size = `${viewport.width}x${viewport.height}`;
      const run = await openToAnswer(url(), { viewport });
      try {
        // Both clicks in one task: React has not re-rendered (the fieldset is still enabled) when
        // the second one reaches the form, so only useRespond can join it to the first.
        await run.page.getByRole('button', { name: 'Send' }).evaluate((button) => {
          button.click();
          button.click();
        });
        await expectSettled(run, `double click at ${size}`);
        await new Promise((r) => setTimeout(r, RESPOND_MS));
        assert.deepEqual(run.posts, [ANSWERS], 'exactly one POST');
        assert.deepEqual(await failuresShown(run), [], 'no failure shown');
        assert.deepEqual(run.errors, [], 'page errors');
      } finally {
        await run.close();
      }
    }
  });

  test(`Answering (README): a 503 (retryable_error, the agent detached) shows the failure and keeps the question; Retry posts the same answers and succeeds (${sizes})`, async () => {
    for (const viewport of VIEWPORTS) {
      const size = `${viewport.width}x${viewport.height}`;
      const run = await openToAnswer(url(), { viewport, replies: ['retryable', 'claimed'] });
      try {
        await run.page.getByRole('button', { name: 'Send' }).click();
        // (Next's route announcer is a role="alert" too.)
        const alert = run.page.getByRole('alert').filter({ hasText: FAILURE_TEXT });
        await alert.waitFor({ timeout: 10_000 });
        assert.equal((await alert.innerText()).trim(), 'The answer was not confirmed (retryable). Retry');
        assert.deepEqual(await run.shown(), { heading: 'The agent asks you 2 questions:', questions: [QUESTION_TEXT['q-1'], QUESTION_TEXT['q-2']] }, 'the question stays');
        assert.ok(await run.page.getByRole('button', { name: 'Send' }).isEnabled(), 'answerable again');
        assert.equal(run.posts.length, 1);
        await run.page.screenshot({ path: path.join(artifacts, `${name}-readme-answer-503-${size}.png`), fullPage: true });
        await alert.getByRole('button', { name: 'Retry' }).click();
        await expectSettled(run, `Retry at ${size}`);
        assert.equal(await alert.count(), 0, 'the failure is gone');
        assert.deepEqual(run.posts, [ANSWERS, ANSWERS], 'the retry posted the same answers');
        assert.deepEqual(run.errors.filter((e) => !STATUS_LINE.test(e)), [], 'page errors');
      } finally {
        await run.close();
      }
    }
  });

  test(`Answering (README): a 409 (no longer active) takes the question away and never shows a failure (${sizes})`, async () => {
    for (const viewport of VIEWPORTS) {
      const size = `${viewport.width}x${viewport.height}`;
      const run = await openToAnswer(url(), { viewport, replies: ['not_active'] });
      try {
        await run.page.getByRole('button', { name: 'Send' }).click();
        await expectSettled(run, `409 at ${size}`);
        assert.deepEqual(run.posts, [ANSWERS]);
        assert.deepEqual(await failuresShown(run), [], 'no failure shown');
        assert.deepEqual(run.errors.filter((e) => !STATUS_LINE.test(e)), [], 'page errors');
      } finally {
        await run.close();
      }
    }
  });

  test(`Answering (README): Skip posts { reject: true } through the same hook; the question goes (${sizes})`, async () => {
    for (const viewport of VIEWPORTS) {
      const size = `${viewport.width}x${viewport.height}`;
      const run = await openToAnswer(url(), { viewport });
      try {
        await run.page.getByRole('button', { name: 'Skip' }).click();
        await expectSettled(run, `Skip at ${size}`);
        assert.deepEqual(run.posts, [{ reject: true }]);
        assert.deepEqual(await failuresShown(run), [], 'no failure shown');
        assert.deepEqual(run.errors, [], 'page errors');
      } finally {
        await run.close();
      }
    }
  });
}

// `next dev`: React's development build, where StrictMode (on by default in the App Router)
// mounts, unmounts and mounts again every component and runs each render twice. The provider must
// still open one store, the hooks must still show the answer, and nothing may log an error
// (hydration mismatches included). `next dev` sets the `development` export condition: the page,
// the route handler and the edge runtime get the package's development build.
describe('Next.js dev server (StrictMode double mount)', () => {
  let server;
  // `next dev` adds its own paths to tsconfig.json: the fixture's file is put back afterwards.
  const tsconfig = path.join(app, 'tsconfig.json');
  const tsconfigText = fs.readFileSync(tsconfig, 'utf8');
  before(async () => {
    fs.rmSync(path.join(app, '.next'), { recursive: true, force: true });
    const port = await freePort();
    server = await serve(next, ['dev', '--port', String(port), '--hostname', 'localhost'], { cwd: app, url: `http://localhost:${port}/api/answer`, timeoutMs: 120_000, env: devEnv() });
    server.url = `http://localhost:${port}`;
  });
  after(async () => {
    await server?.stop();
    fs.writeFileSync(tsconfig, tsconfigText);
  });

  test('client component under StrictMode: one store, the answer, no errors; the development build (explain() works, its wasm)', async () => {
    const { wasm } = await checkDemoPage(browser, `${server.url}/client`, { screenshot: 'next-dev-strict-client.png', backend: 'wasm (static import)', strictMode: true, build: 'development' });
    assert.deepEqual(wasm, ['development/task_projection_bg.wasm']);
  });

  test('the devtools panel (<ProjectionDevtools />, StrictMode): one panel; a session\'s and a task\'s explanation as the store gives them', async () => {
    await checkDevtoolsPage(browser, `${server.url}/devtools`, { build: 'development', screenshot: 'next-dev-devtools.png' });
  });

  test('route handler and edge runtime: the development build (explain() works)', async () => {
    assert.deepEqual(await (await fetch(`${server.url}/api/answer`)).json(), { runtime: 'nodejs', ...EXPECTED, explain: EXPLAINED.development });
    assert.deepEqual(await (await fetch(`${server.url}/api/edge`)).json(), { runtime: 'edge', ...EXPECTED, explain: EXPLAINED.development });
  });

  test('the README\'s server-rendered page under StrictMode: no hydration warning, no REST from the browser', async () => {
    const run = await openReadmePage(browser, `${server.url}/readme/tasks/ssr/task-1`, { rest: REST_ASKED, socket: 'resume' });
    try {
      assert.deepEqual(await run.waitForQuestion(), { heading: 'The agent asks you 2 questions:', questions: [QUESTION_TEXT['q-1'], QUESTION_TEXT['q-2']] });
      await run.page.getByText('Live updates are on.').waitFor({ timeout: 30_000 });
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(run.hellos().length >= 1 && run.hellos().every((h) => h.payload.resumed), 'every connection resumed the stream');
      assert.deepEqual(run.requested, [], 'no REST request from the browser');
      assert.deepEqual(run.errors, [], 'page errors (React\'s development warnings included)');
    } finally {
      await run.close();
    }
  });

  answeringTests(() => server.url, 'next-dev');
});

for (const bundler of ['webpack', 'turbopack']) {
  describe(`Next.js (${bundler})`, () => {
    let server;
    before(async () => {
      // A clean build each time: the package keeps its version while its contents change, and
      // bundler caches key node_modules packages by version.
      fs.rmSync(path.join(app, '.next'), { recursive: true, force: true });
      const out = await exec(next, ['build', `--${bundler}`], { cwd: app });
      fs.writeFileSync(path.join(artifacts, `next-${bundler}-build.log`), out);
      const port = await freePort();
      server = await serve(next, ['start', '--port', String(port), '--hostname', 'localhost'], { cwd: app, url: `http://localhost:${port}/api/answer` });
      server.url = `http://localhost:${port}`;
    });
    after(async () => {
      await server?.stop();
    });

    test('server component: the answer is in the server-rendered HTML', async () => {
      const html = await (await fetch(`${server.url}/`)).text();
      assert.match(html, /data-testid="pending-action">clarification</);
      assert.match(html, new RegExp(`data-testid="owner">${EXPECTED.owner}<`));
      assert.match(html, new RegExp(`data-testid="pending-id">${EXPECTED.pendingId}<`));
      for (const q of EXPECTED.questions) assert.ok(html.includes(`<li>${q}</li>`), `HTML lists ${q}`);
      assert.match(html, /data-testid="compare">1</);
      assert.match(html, /data-testid="policy">new</);
      const page = await browser.newPage();
      try {
        await page.goto(`${server.url}/`);
        await page.screenshot({ path: path.join(artifacts, `next-${bundler}-server.png`), fullPage: true });
      } finally {
        await page.close();
      }
    });

    test('route handler (Node.js runtime) answers from the package (the production build: explain() throws development_only)', async () => {
      const body = await (await fetch(`${server.url}/api/answer`)).json();
      assert.deepEqual(body, { runtime: 'nodejs', ...EXPECTED, explain: EXPLAINED.production });
    });

    test('edge runtime (middleware.ts: cacheComponents refuses edge route handlers) answers from the package (the production build)', async () => {
      const body = await (await fetch(`${server.url}/api/edge`)).json();
      assert.deepEqual(body, { runtime: 'edge', ...EXPECTED, explain: EXPLAINED.production });
    });

    test('the build holds the production wasm and nothing of the development build\'s', () => {
      // .next/ but its cache: the browser's assets (the .wasm) and the server's bundles (the node
      // and edge-light entries embed the wasm as base64).
      const found = filesWithStoreWasm(path.join(app, '.next'), { skip: ['cache'] });
      assert.deepEqual(found.development, [], 'files holding the development wasm');
      const served = found.production.filter((f) => f.startsWith(`static${path.sep}`));
      assert.ok(served.length >= 1 && served.every((f) => wasmName(fs.readFileSync(path.join(app, '.next', f))) === 'task_projection_bg.wasm'), `the browser's wasm: ${served.join(', ')}`);
      assert.ok(found.production.some((f) => f.startsWith(`server${path.sep}`)), `the server's wasm (base64): ${found.production.join(', ')}`);
    });

    test('client component: ProjectionStoreProvider and the hooks render the pending question and owner (server-rendered fallback, then hydrated)', async () => {
      const html = await (await fetch(`${server.url}/client`)).text();
      assert.match(html, /loading task-projection/, 'the client component was server-rendered (node condition) too');
      // The production build: explain() throws development_only, and the .wasm served is its own.
      const { wasm } = await checkDemoPage(browser, `${server.url}/client`, { screenshot: `next-${bundler}-client.png`, backend: 'wasm (static import)' });
      assert.deepEqual(wasm, ['task_projection_bg.wasm']);
    });

    test('the devtools page on the production build: one line says the panel needs the development build', async () => {
      await checkDevtoolsPage(browser, `${server.url}/devtools`, { build: 'production', screenshot: `next-${bundler}-devtools.png` });
    });

    test('the README\'s pages, which import the panel in development only, carry no devtools code; the devtools page does', async () => {
      /** The JavaScript a page at `route` loads (by its load event and `ready`). */
      const scripts = async (route, ready) => {
        const page = await browser.newPage();
        const bodies = [];
        page.on('response', (r) => {
          if (new URL(r.url()).pathname.endsWith('.js')) bodies.push(r.text().catch(() => ''));
        });
        try {
          // (No backend here: the README page's REST and socket fail, and retry; its scripts load.)
          await page.goto(`${server.url}${route}`, { waitUntil: 'load' });
          await ready(page);
          return await Promise.all(bodies);
        } finally {
          await page.close();
        }
      };
      // A string of js/devtools-dom.js that minification keeps.
      const MARKER = 'tp-devtools-panel';
      const readme = await scripts('/readme/tasks/task-1', (page) => page.waitForTimeout(1500));
      assert.ok(readme.length > 0, 'the README page loads scripts');
      assert.deepEqual(readme.filter((text) => text.includes(MARKER)).length, 0, 'a README page script holds the panel');
      const devtools = await scripts('/devtools', (page) => page.waitForSelector('task-projection-devtools', { state: 'attached' }));
      assert.ok(devtools.some((text) => text.includes(MARKER)), 'the devtools page holds the panel (the check can tell)');
    });

    test('client component with loadTaskProjection(): wasm, MVP wasm (old WebView), JS (no WebAssembly)', async () => {
      await checkDemoPage(browser, `${server.url}/loader`, { screenshot: `next-${bundler}-loader-wasm.png`, backend: 'wasm' });
      await checkDemoPage(browser, `${server.url}/loader`, { initScript: MVP_ONLY_ENGINE, screenshot: `next-${bundler}-loader-mvp.png`, backend: 'mvp' });
      await checkDemoPage(browser, `${server.url}/loader`, { initScript: NO_WEBASSEMBLY, screenshot: `next-${bundler}-loader-no-webassembly.png`, backend: 'js' });
    });

    test('the README\'s React example: REST on mount, then the WebSocket adds the live question (REST and WebSocket mocked in the browser)', async () => {
      // app/readme/tasks/[taskId]/page.tsx and the files it imports: the README's tsx blocks as written.
      const url = `${server.url}/readme/tasks/task-1`;
      const html = await (await fetch(url)).text();
      assert.match(html, /Loading tasks…/, 'server-rendered: the fallback');
      assert.ok(!html.includes('Nothing needs you.'), 'the server-rendered HTML never says "Nothing needs you."');
      const run = await openReadmePage(browser, url, { rest: REST, socket: 'frames' });
      try {
        // REST (before the agent asked: nothing needs the user), then the questions from the socket.
        const shown = await run.waitForQuestion();
        assert.deepEqual(shown, { heading: 'The agent asks you 2 questions:', questions: [QUESTION_TEXT['q-1'], QUESTION_TEXT['q-2']] });
        assert.equal(run.sockets(), 1, 'one WebSocket');
        await run.page.getByText('Live updates are on.').waitFor({ timeout: 10_000 });
        // On mount, and again after the socket's server.hello (it did not resume the stream).
        const twice = () => REST_PATHS.every((p) => run.requested.filter((r) => r === p).length >= 2);
        await until(twice, 10_000).catch(() => assert.fail(`each of ${REST_PATHS.join(', ')} fetched on mount and after server.hello: ${run.requested.join(', ')}`));
        await run.page.screenshot({ path: path.join(artifacts, `next-${bundler}-readme.png`), fullPage: true });
        assert.deepEqual(run.errors, [], 'page errors');
      } finally {
        await run.close();
      }
    });

    test('the README\'s React example with no WebSocket server: the question from REST, "offline", never "Nothing needs you."', async () => {
      const url = `${server.url}/readme/tasks/task-1`;
      // REST once the agent has asked; no WebSocket server at all: every connection is refused.
      // (Not `next start` itself: it holds an unknown upgrade open without answering, so the
      // socket would stay "connecting".)
      const html = await (await fetch(url)).text();
      assert.ok(!html.includes('Nothing needs you.'), 'the server-rendered HTML never says "Nothing needs you."');
      const run = await openReadmePage(browser, url, { rest: REST_ASKED, socket: 'none' });
      try {
        const shown = await run.waitForQuestion();
        assert.deepEqual(shown, { heading: 'The agent asks you 2 questions:', questions: [QUESTION_TEXT['q-1'], QUESTION_TEXT['q-2']] });
        await run.page.getByText('Offline: showing what was loaded, retrying…').waitFor({ timeout: 15_000 });
        assert.ok(run.socketAttempts() >= 1, 'the page tried to open its WebSocket');
        assert.equal(run.framesReceived(), 0, 'no frame arrived');
        for (const p of REST_PATHS) assert.ok(run.requested.includes(p), `fetched ${p} on mount: ${run.requested.join(', ')}`);
        // Every text the page showed, from the first mutation of the document on.
        const texts = await run.page.evaluate(() => window.__shownTexts);
        assert.ok(texts.length >= 3, `watched ${texts.length} texts`);
        const nothing = texts.filter((t) => t.includes('Nothing needs you.'));
        assert.deepEqual(nothing, [], `the page said "Nothing needs you." on the way; it showed, in order:\n${texts.join('\n---\n')}`);
        await run.page.screenshot({ path: path.join(artifacts, `next-${bundler}-readme-no-socket.png`), fullPage: true });
        // A WebSocket that cannot connect is reported by Chromium as a console error: expected here.
        assert.deepEqual(run.errors.filter((e) => !/WebSocket connection to .* failed/.test(e)), [], 'page errors');
      } finally {
        await run.close();
      }
    });

    test('the README\'s server-rendered page: the question in the HTML, the same answers before and after the wasm, no REST from the browser (the stream resumed)', async () => {
      // app/readme/tasks/ssr/[taskId]/page.tsx: a server component reads REST_ASKED from TASKS_API,
      // renders, and hands dehydrate() to the client.
      const url = `${server.url}/readme/tasks/ssr/task-1`;
      apiRequests.length = 0;
      const html = await (await fetch(url)).text();
      assert.ok(html.replaceAll('<!-- -->', '').includes('The agent asks you 2 questions:'), 'the server HTML holds the answer');
      for (const text of Object.values(QUESTION_TEXT)) assert.ok(html.includes(text), `the server HTML holds "${text}"`);
      assert.ok(!html.includes('Nothing needs you.'));
      assert.ok(!html.includes('Loading the task…') && !html.includes('Loading the question…'), 'no loading state: the answers are known');
      assert.deepEqual(apiRequests.slice(0, 2), ['/api/v1/tasks', '/api/v1/tasks/task-1/task-sessions'], 'the task list first (its stream position), then the rest');
      assert.deepEqual([...apiRequests].sort(), REST_PATHS.slice().sort(), 'the server component read the REST state');

      // The browser: the .wasm held back until the page has been checked without it.
      const run = await openReadmePage(browser, url, { rest: REST_ASKED, socket: 'resume', holdWasm: true });
      try {
        const expected = { heading: 'The agent asks you 2 questions:', questions: [QUESTION_TEXT['q-1'], QUESTION_TEXT['q-2']] };
        assert.deepEqual(await run.waitForQuestion(), expected, 'before the wasm');
        await until(() => run.wasmAsked(), 15_000).catch(() => assert.fail('the page never asked for the .wasm (open() did not run)'));
        // Hydrated (the provider's effect asked for the wasm), still answering from the snapshot.
        assert.deepEqual(await run.shown(), expected, 'hydrated, the wasm held');
        await run.page.getByText('Connecting to live updates…').waitFor({ timeout: 1_000 });
        assert.equal(run.socketAttempts(), 0, 'no socket before the store is open');
        run.releaseWasm();
        // The store is open (the feed connects only then) and the stream resumed from the snapshot's offset.
        await run.page.getByText('Live updates are on.').waitFor({ timeout: 15_000 });
        await until(() => run.hellos().length === 1, 10_000);
        const [first] = run.socketUrls();
        const query = new URL(first).searchParams;
        assert.deepEqual([query.get('since'), query.get('stream')], [String(OFFSET), STREAM], `the first connection resumes the stream: ${first}`);
        assert.equal(run.hellos()[0].payload.resumed, true);
        await new Promise((r) => setTimeout(r, 500));
        assert.deepEqual(await run.shown(), expected, 'after the wasm: the same answers, from the store');
        assert.deepEqual(run.requested, [], 'no REST request from the browser');
        const texts = await run.page.evaluate(() => window.__shownTexts);
        // The first paint is the answer: the page has no fallback to paint before it.
        const painted = texts.filter((t) => t.trim() !== '');
        assert.ok(painted.length > 0 && painted[0].includes(QUESTION_TEXT['q-1']), `the first text shown is the question; the page showed, in order:\n${texts.join('\n---\n')}`);
        const from = texts.findIndex((t) => t.includes(QUESTION_TEXT['q-1']));
        const after = texts.slice(from).filter((t) => !t.includes(QUESTION_TEXT['q-1']) || !t.includes(QUESTION_TEXT['q-2']));
        assert.deepEqual(after, [], `once shown, the question stayed; the page showed, in order:\n${texts.join('\n---\n')}`);
        assert.ok(!texts.some((t) => t.includes('Nothing needs you.')));
        await run.page.screenshot({ path: path.join(artifacts, `next-${bundler}-readme-ssr.png`), fullPage: true });
        assert.deepEqual(run.errors, [], 'page errors (hydration warnings included)');
      } finally {
        await run.close();
      }
    });

    test('moving between the README\'s server-rendered tasks: a <Link> shows the next task\'s answer in its first render, with no REST request from the browser, one socket and never "Offline"; back again too', async () => {
      const run = await openReadmePage(browser, `${server.url}/readme/tasks/ssr/task-1`, { rest: REST_TWO, socket: 'resume' });
      try {
        await run.waitForQuestion();
        await run.page.getByText('Live updates are on.').waitFor({ timeout: 30_000 });
        const from = (await run.page.evaluate(() => window.__shownTexts)).length;
        const clicked = Date.now();
        await run.page.getByRole('link', { name: SECOND_TASK.title }).click();
        await run.page.getByText(SECOND_TASK.question).waitFor({ timeout: 15_000 });
        const toAnswer = Date.now() - clicked;
        assert.equal((await run.shown()).heading, 'The agent asks you a question:');
        const back = Date.now();
        await run.page.goBack();
        await run.page.getByText(QUESTION_TEXT['q-1']).waitFor({ timeout: 15_000 });
        const backToAnswer = Date.now() - back;
        await new Promise((r) => setTimeout(r, 500));
        assert.deepEqual(run.requested, [], 'no REST request from the browser');
        assert.equal(run.sockets(), 1, 'one WebSocket for both pages');
        assert.ok(run.hellos().every((h) => h.payload.resumed), 'it resumed the stream');
        const texts = (await run.page.evaluate(() => window.__shownTexts)).slice(from);
        // Never "not known" (the store answered from the merged snapshot), a fallback, or a lost
        // connection.
        const unknown = texts.filter((t) => /Offline|Connecting|Loading/.test(t));
        assert.deepEqual(unknown, [], `after the click the page showed, in order:\n${texts.join('\n---\n')}`);
        assert.deepEqual(run.errors, [], 'page errors');
        console.log(`# next-${bundler}: click to the next task's answer ${toAnswer} ms, back to the first ${backToAnswer} ms, ${run.requested.length} REST requests, ${run.sockets()} socket`);
        await run.page.screenshot({ path: path.join(artifacts, `next-${bundler}-readme-navigation.png`), fullPage: true });
      } finally {
        await run.close();
      }
    });

    if (bundler === 'webpack') {
      test('the README as a user runs it, against the reference server: /api/v1 forwarded by rewrites() (REST and the WebSocket), the server allowing the app\'s origin, TASKS_API for the server components; the question server-rendered, a <Link> to the next task with no REST request, the answer sent in place', async () => {
        const readme = fs.readFileSync(path.join(app, 'node_modules', 'task-projection', 'README.md'), 'utf8');
        const config = fs.readFileSync(path.join(app, 'next.config.ts'), 'utf8');
        const rule = 'return [{ source: "/api/v1/:path*", destination: `${api}/api/v1/:path*` }];';
        assert.ok(readme.includes(rule) && config.includes(rule), 'the fixture forwards /api/v1 as the README says');
        assert.ok(readme.includes(`--allow-origin http://localhost:3000`) && readme.includes('TASKS_API=http://localhost:8080/api/v1'), 'the README says how the server and the app are started');
        const first = await askIn(reference, 'Move billing to the new database', ['Which region should the new database run in?', 'May I drop the legacy audit table?']);
        const second = await askIn(reference, SECOND_TASK.title, [SECOND_TASK.question]);
        const started = await serve(next, ['start', '--port', String(appPort), '--hostname', 'localhost'], {
          cwd: app, url: `http://localhost:${appPort}/api/answer`, env: { ...env, TASKS_API: `${reference.url}/api/v1` },
        });
        const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
        try {
          const page = await context.newPage();
          const errors = [];
          page.on('pageerror', (e) => errors.push(e.message));
          const rest = [];
          page.on('request', (r) => {
            const { pathname } = new URL(r.url());
            if (pathname.startsWith('/api/v1/') && pathname !== '/api/v1/ws') rest.push(`${r.method()} ${pathname}`);
          });
          const sockets = [];
          page.on('websocket', (ws) => sockets.push(ws.url()));
          await page.goto(`http://localhost:${appPort}/readme/tasks/ssr/${first.taskId}`);
          await page.getByText('Which region should the new database run in?').waitFor({ timeout: 30_000 });
          await page.getByText('Live updates are on.').waitFor({ timeout: 30_000 });
          assert.deepEqual(rest, [], 'no REST request from the browser: the server rendered the page');
          const clicked = Date.now();
          await page.getByRole('link', { name: SECOND_TASK.title }).click();
          await page.getByText(SECOND_TASK.question).waitFor({ timeout: 15_000 });
          const toAnswer = Date.now() - clicked;
          assert.deepEqual(rest, [], 'no REST request after the link either');
          // By role: the page left stays in the document, hidden (Next keeps it in an <Activity>).
          await page.getByRole('textbox', { name: 'Answer 1', exact: true }).fill('Yes, for a day', { timeout: 10_000 });
          await page.getByRole('button', { name: 'Send' }).click();
          await page.getByText('Nothing needs you.').waitFor({ timeout: 15_000 });
          assert.deepEqual(rest, [`POST /api/v1/clarification/${second.pendingId}/respond`], 'the answer is the one request');
          assert.equal(sockets.length, 1, `one WebSocket, through the app's origin: ${sockets.join(', ')}`);
          assert.ok(sockets[0].startsWith(`ws://localhost:${appPort}/api/v1/ws`), sockets[0]);
          assert.deepEqual(errors, [], 'page errors');
          console.log(`# next-${bundler} against the reference server: click to the next task's answer ${toAnswer} ms, ${rest.length} REST request (the answer), ${sockets.length} socket`);
          await page.screenshot({ path: path.join(artifacts, `next-${bundler}-readme-reference-server.png`), fullPage: true });
        } finally {
          await context.close();
          await started.stop();
        }
      });
    }

    answeringTests(() => server.url, `next-${bundler}`);
  });
}

/** A task on the reference server whose primary session asks `questions` (its simulator). */
async function askIn(server, title, questions) {
  const { task_id: taskId } = await server.sim('tasks', { title });
  const { session_id: sessionId } = await server.sim(`tasks/${taskId}/sessions`, { primary: true });
  const { pending_id: pendingId } = await server.sim(`sessions/${sessionId}/clarification`, { questions, open_turn: true, prompt: title });
  return { taskId, sessionId, pendingId };
}

/** What the README's feed fetches for task-1 (one session, sess-1). */
const REST_PATHS = ['/api/v1/tasks', '/api/v1/tasks/task-1/task-sessions', '/api/v1/task-sessions/sess-1/turns', '/api/v1/task-sessions/sess-1/messages'];

/** Resolves once `check()` is true; rejects after `ms`. */
async function until(check, ms) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Records the page's visible text (`document.body.innerText`) whenever it changes, from the
 * first mutation of the document: `window.__shownTexts`, each distinct text in order. */
const WATCH_TEXT = `(() => {
  const shown = (window.__shownTexts = []);
  const record = () => {
    const text = document.body ? document.body.innerText.trim() : '';
    if (text !== '' && shown[shown.length - 1] !== text) shown.push(text);
  };
  new MutationObserver(record).observe(document, { subtree: true, childList: true, characterData: true });
  document.addEventListener('DOMContentLoaded', record);
})();`;

/** Sends the page's WebSockets to /api/v1/ws to `port`, where nothing listens: refused, as
 * when there is no WebSocket server (Playwright routes cannot refuse a WebSocket). */
const refuseWebSocket = (port) => `(() => {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(String(url).includes('/api/v1/ws') ? 'ws://localhost:${port}/api/v1/ws' : url, protocols);
    }
  };
})();`;

/**
 * Opens the README's page with REST mocked from `rest` (tests/js/readme-backend.mjs) and the
 * WebSocket either mocked (`socket: 'frames'`: server.hello, then the agent's questions;
 * `'resume'`: the hello of a server whose stream stands where REST_ASKED was read, resumed when
 * the connection asks for it) or refused (`'none'`: no WebSocket server at all). `holdWasm`: the
 * .wasm's response waits for `releaseWasm()`. A POST respond is answered as the reference server
 * answers it (`replies`: the kinds of readme-backend.mjs's respondReply, in order; then
 * `claimed`) and recorded in `posts` (its bodies); `requested` holds the other requests' paths.
 */
async function openReadmePage(browser, url, { rest, socket, holdWasm = false, replies = [], viewport = { width: 900, height: 640 } }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) errors.push(m.text());
  });
  const requested = [];
  const posts = [];
  await page.route('**/api/v1/**', async (route) => {
    const pendingId = respondPendingId(route.request().url());
    if (pendingId !== undefined && route.request().method() === 'POST') {
      // The reference server's reply (tests/js/readme-backend.mjs), RESPOND_MS later: `replies`
      // in order, then `claimed`.
      const sent = route.request().postDataJSON();
      posts.push(sent);
      const { status, body } = respondReply(pendingId, sent, replies[posts.length - 1] ?? 'claimed');
      await new Promise((r) => setTimeout(r, RESPOND_MS));
      return route.fulfill({ status, json: body }).catch(() => {});
    }
    const body = restBody(route.request().url(), rest);
    requested.push(new URL(route.request().url()).pathname);
    return body === undefined ? route.fulfill({ status: 404, json: { error: { code: 'not_found' } } }) : route.fulfill({ json: body });
  });
  let sockets = 0;
  let framesSent = 0;
  const socketUrls = [];
  const hellos = [];
  if (socket === 'none') await page.addInitScript(refuseWebSocket(await freePort()));
  // By path: a connection that resumes has a query (`?since=&stream=`).
  const isSocket = (u) => u.pathname.endsWith('/api/v1/ws');
  if (socket === 'frames') {
    await page.routeWebSocket(isSocket, (ws) => {
      sockets += 1;
      FRAMES.forEach((frame, i) => setTimeout(() => ws.send(JSON.stringify(frame)), i * FRAME_GAP_MS));
    });
  }
  if (socket === 'resume') {
    await page.routeWebSocket(isSocket, (ws) => {
      sockets += 1;
      socketUrls.push(ws.url());
      const hello = helloFor(ws.url());
      hellos.push(hello);
      ws.send(JSON.stringify(hello));
      framesSent += 1;
    });
  }
  let wasmAsked = false;
  let releaseWasm = () => {};
  if (holdWasm) {
    const released = new Promise((resolve) => (releaseWasm = resolve));
    await page.route('**/*.wasm', async (route) => {
      wasmAsked = true;
      await released;
      await route.continue().catch(() => {});
    });
  }
  let attempts = 0;
  let frames = 0;
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/api/v1/ws')) return;
    attempts += 1;
    ws.on('framereceived', () => (frames += 1));
  });
  await page.addInitScript(WATCH_TEXT);
  await page.goto(url);
  /** The question's heading and texts as shown (role="status"). */
  const shown = async () => {
    const status = page.getByRole('status');
    return { heading: (await status.locator('p').innerText()).trim(), questions: (await status.locator('li').allInnerTexts()).map((t) => t.trim()) };
  };
  return {
    page, errors, requested, posts, shown,
    sockets: () => sockets,
    socketUrls: () => socketUrls,
    hellos: () => hellos,
    wasmAsked: () => wasmAsked,
    releaseWasm: () => releaseWasm(),
    socketAttempts: () => attempts,
    /** Frames the mocked socket sent (`'resume'`: its hellos). */
    framesSent: () => framesSent,
    framesReceived: () => frames,
    /** Waits for the question (role="status"); returns its heading and the questions' texts. */
    async waitForQuestion() {
      const status = page.getByRole('status');
      await status.waitFor({ timeout: 30_000 }).catch(async (e) => {
        const shown = await page.locator('body').innerText().catch(() => '?');
        assert.fail(`the example never showed the question (${e.message.split('\n')[0]}); the page shows "${shown.trim()}"; errors: ${errors.join(' | ') || 'none'}`);
      });
      // The rows' text arrives with the ids (the app's map is filled first): no placeholder.
      return shown();
    },
    close: () => context.close(),
  };
}

test('tsc --noEmit: the Next.js app (strict) type-checks against the package declarations', async () => {
  // After a build: next-env.d.ts and .next/types (route types) exist.
  await exec(path.join(app, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', app], { cwd: app });
});
