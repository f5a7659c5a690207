// Browser half of tests/js/store.browser.test.mjs (Chromium) and tests/engines/ (WebKit,
// Firefox): an entry of the package (`?entry=/pkg/mvp/index.js`; by default the `default` entry,
// /pkg/index.js, whose init() fetches the .wasm), the shared store runner over every store case,
// then a few checks that depend on the browser's event loop (microtask-coalesced notifications,
// boundedLoad's timer).
import { loadStoreCases, runAllStoreCases } from '/tests/js/store-runner.mjs';

const status = document.getElementById('status');
const entry = new URLSearchParams(location.search).get('entry') ?? '/pkg/index.js';
document.getElementById('entry').textContent = entry;
let ProjectionStore;
let boundedLoad;
const T = 'task-1';
const session = (id, state, pendingAction) => ({ id, task_id: T, state, pending_action: pendingAction, pending_action_revision: { epoch: '1', sequence: 1 } });
const message = (id, created) => ({ message_id: id, session_id: 'sess-1', task_id: T, turn_id: 'turn-1', type: 'message', metadata: {}, created_at: created, updated_at: created });

async function check(name, fn) {
  try {
    await fn();
    return { name, ok: true };
  } catch (err) {
    return { name, ok: false, message: String(err?.message ?? err) };
  }
}
function ensure(cond, message) {
  if (!cond) throw new Error(message);
}

const browserChecks = [
  ['subscribe: one coalesced notification per synchronous batch', async () => {
    const store = new ProjectionStore();
    const calls = [];
    const unsubscribe = store.subscribe((changes) => calls.push(changes));
    store.applySessionList(T, [session('sess-1', 'RUNNING', null)]);
    store.applyMessageEvent('added', message('m1', '2026-11-29T12:00:00Z'));
    store.applyMessageEvent('added', message('m2', '2026-11-29T12:00:01Z'));
    ensure(calls.length === 0, 'listener called synchronously');
    await new Promise((resolve) => setTimeout(resolve, 0));
    ensure(calls.length === 1, `expected 1 notification, got ${calls.length}`);
    ensure(JSON.stringify(calls[0]) === JSON.stringify({ tasks: [T], sessions: ["sess-1"], inbox: false }), `changes ${JSON.stringify(calls[0])}`);
    unsubscribe();
    store.applyMessageEvent('added', message('m3', '2026-11-29T12:00:02Z'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    ensure(calls.length === 1, 'listener called after unsubscribe');
    store.free();
  }],
  ['boundedLoad: a load that never settles times out, and settles task-only for a pending task', async () => {
    const store = new ProjectionStore();
    store.applyTaskUpdated({ id: T, status_summary: { revision: 3, pending_action: 'clarification' } });
    store.applySessionList(T, [session('sess-1', 'WAITING_FOR_INPUT', 'clarification')]);
    const { ticket, reload } = store.beginSelection(T);
    ensure(reload === true, 'a pending task reloads');
    const started = performance.now();
    const outcome = await boundedLoad(new Promise(() => {}), 30);
    const waited = performance.now() - started;
    ensure(outcome.timedOut === true, `outcome ${JSON.stringify(outcome)}`);
    ensure(waited >= 25 && waited < 2000, `waited ${waited} ms`);
    const settled = store.settleSelection(ticket, outcome);
    ensure(settled.kind === 'task_only', `settled ${JSON.stringify(settled)}`);
    store.free();
  }],
  ['boundedLoad: a resolved load passes the sessions through', async () => {
    const sessions = [session('sess-1', 'RUNNING', null)];
    const outcome = await boundedLoad(Promise.resolve(sessions), 10_000);
    ensure(outcome.sessions === sessions, 'the caller\'s own array');
  }],
];

try {
  const api = await import(entry);
  ({ ProjectionStore, boundedLoad } = api);
  await api.default();
  const response = await fetch('/tests/fixtures/store_scenarios.json');
  if (!response.ok) throw new Error(`GET /tests/fixtures/store_scenarios.json: ${response.status}`);
  const cases = loadStoreCases(await response.json());
  const results = runAllStoreCases(ProjectionStore, cases);
  const checks = [];
  for (const [name, fn] of browserChecks) checks.push(await check(name, fn));
  const failed = [...results, ...checks].filter((r) => !r.ok);
  status.textContent = `${results.length + checks.length - failed.length} passed, ${failed.length} failed`;
  status.className = failed.length ? 'fail' : '';
  document.getElementById('failures').textContent = failed.map((r) => `✗ ${r.name}\n${r.message}`).join('\n\n');
  window.__storeResults = { ok: true, entry, results, checks };
} catch (err) {
  status.textContent = `error: ${err?.message ?? err}`;
  status.className = 'fail';
  window.__storeResults = { ok: false, entry, error: [String(err), err?.stack].filter(Boolean).join('\n') };
}
