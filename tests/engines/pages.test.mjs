// The package's browser pages in WebKit (WebKitGTK's MiniBrowser under Xvfb, through
// WebKitWebDriver) and Gecko (headless Firefox ESR, through geckodriver): tests/js/browser/store.html
// (every store case through `new ProjectionStore()`, then its event-loop checks) and
// tests/js/browser/index.html (every rules scenario), each against every browser entry of the
// package built in pkg/: `default`, `mvp`, the JS `fallback` (wasm2js) and, when pkg/ has it,
// `development`. The page takes the entry from `?entry=`; scripts/serve.mjs serves it, as in the
// Chromium tests (tests/js/*.browser.test.mjs). Each entry of each page in each engine is a
// top-level test whose subtests are its cases, so a failure names the engine, the page, the entry
// and the case. One browser session per engine, the engines one after the other;
// `ENGINES=webkit` (or firefox) runs one.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot, startStaticServer } from '../../scripts/serve.mjs';
import { ALL_ENGINES, launch, selectedEngines } from './webdriver.mjs';

const exists = (url) => fs.existsSync(path.join(repoRoot, url));

/**
 * The package's browser entries: the store's (`task-projection`, …/mvp, …/fallback) and the
 * rules' (`task-projection/rules`, …). `wasm`: whether init() must fetch the .wasm beside the
 * entry (true) or none at all (false: the fallback runs without WebAssembly).
 */
function entries() {
  const list = [
    { name: 'default', store: '/pkg/index.js', rules: '/pkg/rules/index.js', wasm: true },
    { name: 'mvp', store: '/pkg/mvp/index.js', rules: '/pkg/rules/mvp/index.js', wasm: true },
    { name: 'fallback', store: '/pkg/fallback/index.js', rules: '/pkg/rules/fallback/index.js', wasm: false },
  ];
  // The development build (the `development` export condition), when pkg/ has it.
  const development = { name: 'development', store: '/pkg/development/index.js', rules: '/pkg/rules/development/index.js' };
  for (const page of ['store', 'rules']) if (!exists(development[page])) development[page] = null;
  if (development.store || development.rules) {
    development.wasm = exists('/pkg/development/task_projection_bg.wasm') ? true : undefined;
    list.push(development);
  }
  return list;
}

// The cases each page must report, by name (the pages validate the fixtures with the shared runners).
const caseNames = (fixture) => JSON.parse(fs.readFileSync(path.join(repoRoot, 'tests/fixtures', fixture), 'utf8')).cases.map((c) => c.name);
const PAGES = {
  store: { path: '/tests/js/browser/store.html', result: 'window.__storeResults', cases: caseNames('store_scenarios.json') },
  rules: { path: '/tests/js/browser/index.html', result: 'window.__scenarioResults', cases: caseNames('scenarios.json') },
};

/**
 * The page's outcome, once it has one: its result, or (when its module failed to load or threw
 * before reporting, so no result will come) the errors its head script collected, 3 s after the
 * first. WebDriver (classic) reads no console: the page keeps its own errors in `__pageErrors`.
 */
const outcomeOf = (result) => `${result} ?? (window.__pageErrors?.length && performance.now() - window.__pageErrors.firstAt > 3000
  ? { ok: false, error: 'the page reported nothing; its errors: ' + window.__pageErrors.join('\\n') } : undefined)`;

let server;
const browsers = new Map(); // engine -> Promise of launch(): one session per engine, the previous closed first

before(async () => {
  server = await startStaticServer();
});
after(async () => {
  for (const started of browsers.values()) await (await started.catch(() => null))?.close();
  await server?.close();
});

async function browserFor(engine) {
  for (const [other, started] of browsers) {
    if (other === engine) continue;
    browsers.delete(other);
    await (await started.catch(() => null))?.close();
  }
  // A launch that failed fails every test of its engine with the same error, at once.
  if (!browsers.has(engine)) browsers.set(engine, launch(engine));
  return browsers.get(engine);
}

const selected = selectedEngines();
for (const engine of ALL_ENGINES) {
  if (!selected.includes(engine)) {
    test(`${engine}: the package's pages`, { skip: `not in ENGINES=${process.env.ENGINES}` }, () => {});
    continue;
  }
  for (const entry of entries()) {
    for (const [page, spec] of Object.entries(PAGES)) {
      const module = entry[page];
      if (!module) continue;
      test(`${engine} ${page} page: ${module} (${entry.name})`, { timeout: 180_000 }, async (t) => {
        const browser = await browserFor(engine);
        const first = server.requests.length;
        await browser.session.navigate(`${server.url}${spec.path}?entry=${encodeURIComponent(module)}`);
        const outcome = await browser.session.waitFor(outcomeOf(spec.result), 60_000);
        const pageErrors = await browser.session.execute('return [...(window.__pageErrors ?? [])]');
        const requests = server.requests.slice(first);

        await t.test(`${browser.version}: the entry loads, with no failed request`, () => {
          assert.ok(outcome.ok, `page failed: ${outcome.error}`);
          assert.equal(outcome.entry, module, 'the page imported the entry it was given');
          assert.deepEqual(requests.filter((r) => r.status >= 400), [], 'no request failed');
          assert.deepEqual(pageErrors, [], 'no uncaught error or unhandled rejection');
          const wasm = requests.filter((r) => r.path.endsWith('.wasm')).map((r) => r.path);
          if (entry.wasm === true) {
            assert.deepEqual(wasm, [`${path.posix.dirname(module)}/task_projection_bg.wasm`], 'init() fetched the .wasm beside the entry, once');
            assert.equal(requests.find((r) => r.path === wasm[0]).type, 'application/wasm');
          } else if (entry.wasm === false) {
            assert.deepEqual(wasm, [], 'the fallback fetches no .wasm');
          }
          if (page === 'store') assert.ok(!requests.some((r) => r.path.startsWith('/pkg/rules/')), 'the store loads nothing of the rules module');
          if (page === 'rules') {
            assert.ok(!requests.some((r) => r.path.startsWith('/pkg/') && !r.path.startsWith('/pkg/rules/')), 'the rules load nothing of the store module');
            assert.ok(outcome.exports.includes('default') && outcome.exports.includes('initSync'), `exports: ${outcome.exports}`);
          }
        });
        if (!outcome.ok) return;

        assert.equal(outcome.results.length, spec.cases.length, 'the page ran every case');
        const byName = new Map(outcome.results.map((r) => [r.name, r]));
        for (const name of spec.cases) {
          await t.test(name, () => {
            const r = byName.get(name);
            assert.ok(r, 'case ran in the browser');
            if (!r.ok) assert.fail(r.message);
          });
        }
        if (page === 'store') {
          assert.ok(outcome.checks.length >= 3, 'the event-loop checks ran');
          for (const r of outcome.checks) {
            await t.test(`event loop: ${r.name}`, () => {
              if (!r.ok) assert.fail(r.message);
            });
          }
        }
      });
    }
  }
}
