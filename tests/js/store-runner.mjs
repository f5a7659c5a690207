// Store scenario runner shared by the Node tests and the browser page (tests/js/browser/store.mjs).
// Implements docs/store-fixture-format.md against the package's `ProjectionStore` class. Plain ES
// module: no Node-only imports, no DOM use.
//
//   loadStoreCases(json)                        validates the fixture file and returns its cases
//   runStoreCase(ProjectionStore, c, assert)    runs one case on a fresh store; throws on mismatch
//   runAllStoreCases(ProjectionStore, cases)    [{ name, ok, message? }] (for the browser page)
import { decode, show, strictAssert } from './runner.mjs';

/** The state a store holds, for "a rejected call changed nothing": the development build's
 * digest, else (production) its snapshot, which runs no query. (Browser pages run this file
 * too, so no Node-only helper.) */
function stateOf(store) {
  try {
    return store.digest();
  } catch (error) {
    if (error?.code !== 'development_only') throw error;
    return JSON.stringify(store.dehydrate());
  }
}

const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every call a step may make (docs/store-fixture-format.md). */
export const STORE_CALLS = [
  'applySessionList', 'applyTurnList', 'applyMessagePage', 'applyMessageEvent', 'applyMessageEvents',
  'applyTurnEvent', 'applySessionEvent', 'applyStatusSummaryEvent', 'applyTaskUpdated', 'removeTask',
  'beginTaskFetch', 'applyTaskSnapshot', 'beginSelection', 'setActiveTask', 'settleSelection', 'dispose', 'renew',
  'sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission',
  'taskPendingAction', 'taskStatusSummary', 'pendingOwner',
];
const STEP_KEYS = new Set(['call', 'args', 'expect', 'expect_reload', 'reason', 'save', 'error']);

/** Validates the store fixture's structure and returns its cases. */
export function loadStoreCases(fixture) {
  if (!isPlainObject(fixture) || !Array.isArray(fixture.cases)) {
    throw new Error('store fixture: expected an object with a "cases" array');
  }
  const names = new Set();
  fixture.cases.forEach((c, i) => {
    const where = `store fixture: cases[${i}]`;
    if (!isPlainObject(c)) throw new Error(`${where} is not an object`);
    if (typeof c.name !== 'string' || c.name === '') throw new Error(`${where}.name must be a non-empty string`);
    if (names.has(c.name)) throw new Error(`${where}: duplicate name ${JSON.stringify(c.name)}`);
    names.add(c.name);
    if (!Array.isArray(c.steps) || c.steps.length === 0) throw new Error(`${where} (${c.name}): "steps" must be a non-empty array`);
    const saved = new Set();
    c.steps.forEach((s, n) => {
      const at = `${where} (${c.name}) step ${n}`;
      if (!isPlainObject(s)) throw new Error(`${at} is not an object`);
      if (!STORE_CALLS.includes(s.call)) throw new Error(`${at}: unknown call ${JSON.stringify(s.call)}`);
      if (hasOwn(s, 'args') && !Array.isArray(s.args)) throw new Error(`${at}: "args" must be an array`);
      for (const k of Object.keys(s)) if (!STEP_KEYS.has(k)) throw new Error(`${at}: unknown key ${JSON.stringify(k)}`);
      if (hasOwn(s, 'error') && (hasOwn(s, 'expect') || hasOwn(s, 'reason'))) throw new Error(`${at}: "error" excludes "expect" and "reason"`);
      for (const name of savedNames(s.args ?? [])) {
        if (!saved.has(name)) throw new Error(`${at}: {"$saved": ${JSON.stringify(name)}} before any step saved it`);
      }
      if (hasOwn(s, 'save')) saved.add(s.save);
    });
  });
  return fixture.cases;
}

function* savedNames(v) {
  if (Array.isArray(v)) for (const x of v) yield* savedNames(x);
  else if (isPlainObject(v)) {
    if (Object.keys(v).length === 1 && typeof v.$saved === 'string') yield v.$saved;
    else for (const x of Object.values(v)) yield* savedNames(x);
  }
}

/** Replaces `{"$saved": name}` by the saved value, then `{"$undefined": true}` by undefined. */
function resolve(v, saved) {
  if (Array.isArray(v)) return v.map((x) => resolve(x, saved));
  if (isPlainObject(v)) {
    if (Object.keys(v).length === 1 && typeof v.$saved === 'string') return saved.get(v.$saved);
    const out = {};
    for (const k of Object.keys(v)) out[k] = resolve(v[k], saved);
    return out;
  }
  return v;
}

/**
 * Runs one case on `new ProjectionStore()` and checks every step. Throws an assertion error at the
 * first step whose behaviour differs from the case.
 */
export function runStoreCase(ProjectionStore, c, assert = strictAssert) {
  let store = new ProjectionStore();
  let disposed = false;
  const saved = new Map();
  try {
    c.steps.forEach((s, n) => {
      const at = `step ${n} (${s.call})`;
      if (s.call === 'renew') {
        store.free();
        store = new ProjectionStore();
        disposed = false;
        return;
      }
      const args = decode(resolve(s.args ?? [], saved));
      assert.equal(typeof store[s.call], 'function', `${at}: ProjectionStore has no method ${s.call}`);
      // After dispose() only settleSelection may follow (docs/store-fixture-format.md): no digest.
      const before = disposed ? undefined : stateOf(store);
      let result;
      let thrown;
      let threw = false;
      try {
        result = store[s.call](...args);
      } catch (err) {
        threw = true;
        thrown = err;
      }
      if (hasOwn(s, 'error')) {
        const want = s.error;
        assert.ok(threw, `${at}: should throw {code: ${want.code}, field: ${want.field}} but returned ${show(result)}`);
        assert.ok(thrown instanceof Error, `${at}: threw a non-Error: ${show(thrown)}`);
        assert.equal(thrown.code, want.code, `${at}: error code (message: ${JSON.stringify(thrown.message)})`);
        assert.equal(thrown.field, want.field, `${at}: error field (message: ${JSON.stringify(thrown.message)})`);
        if (!disposed) assert.equal(stateOf(store), before, `${at}: a rejected call changed the state`);
        return;
      }
      if (threw) {
        const detail = thrown instanceof Error ? `${thrown.message} (code: ${show(thrown.code)}, field: ${show(thrown.field)})` : show(thrown);
        assert.ok(false, `${at}: threw unexpectedly: ${detail}`);
      }
      if (s.call === 'dispose') disposed = true;
      if (hasOwn(s, 'save')) saved.set(s.save, s.call === 'beginSelection' ? result?.ticket : result);
      if (hasOwn(s, 'expect_reload')) {
        assert.equal(result?.reload, s.expect_reload, `${at}: reload flag`);
      }
      if (s.call === 'beginSelection') {
        assert.equal(typeof result?.ticket, 'string', `${at}: ticket should be a string`);
      }
      if (hasOwn(s, 'expect')) assert.deepEqual(result, decode(s.expect), `${at}: result`);
      if (hasOwn(s, 'reason')) assert.equal(store.lastReason(), s.reason, `${at}: lastReason()`);
    });
  } finally {
    store.free();
  }
}

/** Runs every case and returns `[{ name, ok, message? }]` (for the browser page). */
export function runAllStoreCases(ProjectionStore, cases, assert = strictAssert) {
  return cases.map((c) => {
    try {
      runStoreCase(ProjectionStore, c, assert);
      return { name: c.name, ok: true };
    } catch (err) {
      return { name: c.name, ok: false, message: err instanceof Error ? err.message : show(err) };
    }
  });
}
