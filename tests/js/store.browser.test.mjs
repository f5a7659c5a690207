// Every case of tests/fixtures/store_scenarios.json in headless Chromium (Debian's, via
// playwright-core) through `new ProjectionStore()` of the package's `default` entry:
// tests/js/browser/store.html imports /pkg/index.js, awaits init() and runs the shared
// store runner, then a few event-loop checks (coalesced notifications, boundedLoad's timer).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startStaticServer } from '../../scripts/serve.mjs';
import { launchChromium, watchPage } from './browser.mjs';
import { loadStoreCases } from './store-runner.mjs';

const cases = loadStoreCases(JSON.parse(readFileSync(new URL('../fixtures/store_scenarios.json', import.meta.url), 'utf8')));
let server;
let browser;
let outcome;
let problems;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
  const page = await browser.newPage();
  problems = watchPage(page);
  await page.goto(`${server.url}/tests/js/browser/store.html`);
  await page.waitForFunction(() => window.__storeResults !== undefined, null, { timeout: 60_000 });
  outcome = await page.evaluate(() => window.__storeResults);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('chromium store: the default entry loads with no page problems', () => {
  assert.ok(outcome.ok, `page failed: ${outcome.error}`);
  assert.ok(server.requests.some((r) => r.path === '/pkg/task_projection_bg.wasm' && r.status === 200), 'init() fetched the .wasm');
  assert.ok(!server.requests.some((r) => r.path.startsWith('/pkg/rules/')), 'the store loads nothing of the rules module');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
});

test('chromium store: default entry runs every store case', async (t) => {
  assert.ok(outcome.ok, `page failed: ${outcome.error}`);
  const byName = new Map(outcome.results.map((r) => [r.name, r]));
  assert.equal(outcome.results.length, cases.length, 'the page ran every case');
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = byName.get(c.name);
      assert.ok(r, 'case ran in the browser');
      if (!r.ok) assert.fail(r.message);
    });
  }
});

test('chromium store: event-loop checks', async (t) => {
  assert.ok(outcome.ok, `page failed: ${outcome.error}`);
  assert.ok(outcome.checks.length >= 3);
  for (const r of outcome.checks) {
    await t.test(r.name, () => {
      if (!r.ok) assert.fail(r.message);
    });
  }
});
