// Every case of tests/fixtures/scenarios.json in headless Chromium (Debian's, via playwright-core)
// against the `default` entry of `task-projection/rules`: tests/js/browser/index.html imports /pkg/rules/index.js,
// awaits init() (which fetches the .wasm) and runs the shared runner. Each case becomes a subtest.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startStaticServer } from '../../scripts/serve.mjs';
import { launchChromium, watchPage } from './browser.mjs';
import { readCases } from './fixture.mjs';

const cases = readCases();
let server;
let browser;
let outcome;
let problems;
let exportsSeen;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
  const page = await browser.newPage();
  problems = watchPage(page);
  await page.goto(`${server.url}/tests/js/browser/index.html`);
  await page.waitForFunction(() => window.__scenarioResults !== undefined, null, { timeout: 60_000 });
  outcome = await page.evaluate(() => window.__scenarioResults);
  exportsSeen = outcome.exports;
  mkdirSync(new URL('../artifacts/', import.meta.url), { recursive: true });
  await page.screenshot({ path: new URL('../artifacts/browser-scenarios.png', import.meta.url).pathname, fullPage: true });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('chromium: the default entry of task-projection/rules loads and fetches its .wasm (not the store\'s)', () => {
  assert.ok(outcome.ok, `page failed: ${outcome.error}`);
  const wasm = server.requests.find((r) => r.path === '/pkg/rules/task_projection_bg.wasm');
  assert.ok(wasm, 'init() fetched /pkg/rules/task_projection_bg.wasm');
  assert.ok(!server.requests.some((r) => r.path === '/pkg/task_projection_bg.wasm'), 'the rules never load the store\'s wasm');
  assert.equal(wasm.status, 200);
  assert.equal(wasm.type, 'application/wasm');
  assert.ok(!server.requests.some((r) => r.path.endsWith('/node.js')), 'the browser never loads node.js');
  assert.ok(exportsSeen.includes('default') && exportsSeen.includes('initSync'));
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
});

test('chromium: default entry runs every scenario', async (t) => {
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
