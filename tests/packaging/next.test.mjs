// The packed tarball in a stock Next.js App Router app (tests/packaging/next-app: strict
// TypeScript, no wasm configuration), built with webpack and with Turbopack, served by
// `next start`: a server component and a route handler on the Node.js runtime, an edge route,
// and client components (static import, and the loader in an engine without WebAssembly / with
// WebAssembly 1.0 only) in headless Chromium, and the package README's React example (its tsx
// blocks, written into app/readme/ by prepare.mjs) against a mocked REST + WebSocket server. Then
// `tsc --noEmit` of the app, the README's example included.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FRAMES, FRAME_GAP_MS, restBody } from '../js/readme-backend.mjs';
import { MVP_ONLY_ENGINE, NO_WEBASSEMBLY, artifacts, checkDemoPage, exec, freePort, here, launchBrowser, scenario, serve } from './harness.mjs';

const app = path.join(here, 'next-app');
const next = path.join(app, 'node_modules', '.bin', 'next');
const { EXPECTED } = scenario;

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

// `next dev`: React's development build, where StrictMode (on by default in the App Router)
// mounts, unmounts and mounts again every component and runs each render twice. The provider must
// still open one store, the hooks must still show the answer, and nothing may log an error
// (hydration mismatches included).
describe('Next.js dev server (StrictMode double mount)', () => {
  let server;
  // `next dev` adds its own paths to tsconfig.json: the fixture's file is put back afterwards.
  const tsconfig = path.join(app, 'tsconfig.json');
  const tsconfigText = fs.readFileSync(tsconfig, 'utf8');
  before(async () => {
    fs.rmSync(path.join(app, '.next'), { recursive: true, force: true });
    const port = await freePort();
    server = await serve(next, ['dev', '--port', String(port), '--hostname', 'localhost'], { cwd: app, url: `http://localhost:${port}/api/answer`, timeoutMs: 120_000 });
    server.url = `http://localhost:${port}`;
  });
  after(async () => {
    await server?.stop();
    fs.writeFileSync(tsconfig, tsconfigText);
  });

  test('client component under StrictMode: one store, the answer, no errors', async () => {
    await checkDemoPage(browser, `${server.url}/client`, { screenshot: 'next-dev-strict-client.png', backend: 'wasm (static import)', strictMode: true });
  });
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

    test('route handler (Node.js runtime) answers from the package', async () => {
      const body = await (await fetch(`${server.url}/api/answer`)).json();
      assert.deepEqual(body, { runtime: 'nodejs', ...EXPECTED });
    });

    test('edge route answers from the package', async () => {
      const body = await (await fetch(`${server.url}/api/edge`)).json();
      assert.deepEqual(body, { runtime: 'edge', ...EXPECTED });
    });

    test('client component: ProjectionStoreProvider and the hooks render the pending question and owner (server-rendered fallback, then hydrated)', async () => {
      const html = await (await fetch(`${server.url}/client`)).text();
      assert.match(html, /loading task-projection/, 'the client component was server-rendered (node condition) too');
      await checkDemoPage(browser, `${server.url}/client`, { screenshot: `next-${bundler}-client.png`, backend: 'wasm (static import)' });
    });

    test('client component with loadTaskProjection(): wasm, MVP wasm (old WebView), JS (no WebAssembly)', async () => {
      await checkDemoPage(browser, `${server.url}/loader`, { screenshot: `next-${bundler}-loader-wasm.png`, backend: 'wasm' });
      await checkDemoPage(browser, `${server.url}/loader`, { initScript: MVP_ONLY_ENGINE, screenshot: `next-${bundler}-loader-mvp.png`, backend: 'mvp' });
      await checkDemoPage(browser, `${server.url}/loader`, { initScript: NO_WEBASSEMBLY, screenshot: `next-${bundler}-loader-no-webassembly.png`, backend: 'js' });
    });

    test('the README\'s React example renders the task\'s live question (REST and WebSocket mocked in the browser)', async () => {
      // app/readme/tasks/[taskId]/page.tsx and the files it imports: the README's tsx blocks as written.
      const url = `${server.url}/readme/tasks/task-1`;
      const html = await (await fetch(url)).text();
      assert.match(html, /Loading tasks…/, 'server-rendered: the provider\'s fallback');
      const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) errors.push(m.text());
      });
      // The reference server the example talks to (tests/js/readme-backend.mjs): REST under
      // /api/v1, and a WebSocket that sends server.hello, then the agent's two questions.
      const requested = [];
      await page.route('**/api/v1/**', (route) => {
        const body = restBody(route.request().url());
        requested.push(new URL(route.request().url()).pathname);
        return body === undefined ? route.fulfill({ status: 404, json: { error: { code: 'not_found' } } }) : route.fulfill({ json: body });
      });
      let sockets = 0;
      await page.routeWebSocket('**/api/v1/ws', (ws) => {
        sockets += 1;
        FRAMES.forEach((frame, i) => setTimeout(() => ws.send(JSON.stringify(frame)), i * FRAME_GAP_MS));
      });
      try {
        await page.goto(url);
        const status = page.getByRole('status');
        await status.waitFor({ timeout: 30_000 }).catch(async (e) => {
          const shown = await page.locator('body').innerText().catch(() => '?');
          assert.fail(`the example never showed the question (${e.message.split('\n')[0]}); the page shows "${shown.trim()}"; errors: ${errors.join(' | ') || 'none'}`);
        });
        assert.equal((await status.innerText()).trim(), 'The agent asks you 2 questions in sess-1.');
        assert.equal(sockets, 1, 'one WebSocket');
        for (const p of ['/api/v1/tasks', '/api/v1/tasks/task-1/task-sessions', '/api/v1/task-sessions/sess-1/turns', '/api/v1/task-sessions/sess-1/messages']) {
          assert.ok(requested.includes(p), `refetched ${p} after server.hello: ${requested.join(', ')}`);
        }
        await page.screenshot({ path: path.join(artifacts, `next-${bundler}-readme.png`), fullPage: true });
        assert.deepEqual(errors, [], 'page errors');
      } finally {
        await context.close();
      }
    });
  });
}

test('tsc --noEmit: the Next.js app (strict) type-checks against the package declarations', async () => {
  // After a build: next-env.d.ts and .next/types (route types) exist.
  await exec(path.join(app, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', app], { cwd: app });
});
