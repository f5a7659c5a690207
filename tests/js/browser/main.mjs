// Browser half of tests/js/scenarios.browser.test.mjs (Chromium) and tests/engines/ (WebKit,
// Firefox): an entry of `task-projection/rules` (`?entry=/pkg/rules/mvp/index.js`; by default the
// `default` entry, /pkg/rules/index.js, which fetches its .wasm through new URL(...,
// import.meta.url) when init() is awaited).
import { loadCases, runAll } from '/tests/js/runner.mjs';

const status = document.getElementById('status');
const entry = new URLSearchParams(location.search).get('entry') ?? '/pkg/rules/index.js';
document.getElementById('entry').textContent = entry;
try {
  const api = await import(entry);
  await api.default();
  const response = await fetch('/tests/fixtures/scenarios.json');
  if (!response.ok) throw new Error(`GET /tests/fixtures/scenarios.json: ${response.status}`);
  const cases = loadCases(await response.json());
  const results = runAll(api, cases);
  const failed = results.filter((r) => !r.ok);
  status.textContent = `${results.length - failed.length} passed, ${failed.length} failed`;
  status.className = failed.length ? 'fail' : '';
  document.getElementById('failures').textContent = failed.map((r) => `✗ ${r.name}\n${r.message}`).join('\n\n');
  window.__scenarioResults = { ok: true, entry, results, exports: Object.keys(api).sort() };
} catch (err) {
  status.textContent = `error: ${err?.message ?? err}`;
  status.className = 'fail';
  window.__scenarioResults = { ok: false, entry, error: [String(err), err?.stack].filter(Boolean).join('\n') };
}
