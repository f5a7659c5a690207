// Browser half of tests/js/scenarios.browser.test.mjs: the `default` entry of `task-projection/rules`, which
// fetches its .wasm through new URL(..., import.meta.url) when init() is awaited.
import init, * as api from '/pkg/rules/index.js';
import { loadCases, runAll } from '/tests/js/runner.mjs';

const status = document.getElementById('status');
try {
  await init();
  const response = await fetch('/tests/fixtures/scenarios.json');
  if (!response.ok) throw new Error(`GET /tests/fixtures/scenarios.json: ${response.status}`);
  const cases = loadCases(await response.json());
  const results = runAll(api, cases);
  const failed = results.filter((r) => !r.ok);
  status.textContent = `${results.length - failed.length} passed, ${failed.length} failed`;
  status.className = failed.length ? 'fail' : '';
  document.getElementById('failures').textContent = failed.map((r) => `✗ ${r.name}\n${r.message}`).join('\n\n');
  window.__scenarioResults = { ok: true, results, exports: Object.keys(api).sort() };
} catch (err) {
  status.textContent = `error: ${err?.message ?? err}`;
  status.className = 'fail';
  window.__scenarioResults = { ok: false, error: String(err?.stack ?? err) };
}
