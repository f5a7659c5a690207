// The reason codes: the TypeScript union `Reason` (src/wasm/types/store.d.ts) lists exactly the
// codes the store can give (src/store/reason.rs), and what the store reports at run time, over
// every store scenario, is one of them. `lastApplyReason()` keeps an apply call's reason while
// queries overwrite `lastReason()`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { loadStoreCases, runStoreCase } from './store-runner.mjs';

const read = (path) => fs.readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The codes `Reason::code()` (and `owner_code`, and the `as_str` of the stale replies and the
 * inbox's states it returns) return. */
function rustCodes() {
  const src = read('src/store/reason.rs');
  const asStr = (file, type) => {
    const text = read(file);
    const at = text.indexOf(`impl ${type} {`);
    return text.slice(text.indexOf('pub const fn as_str', at), text.indexOf('\n    }\n', text.indexOf('pub const fn as_str', at)));
  };
  const body = src.slice(src.indexOf('pub const fn code'), src.indexOf('/// A rejected revision comparison'))
    + src.slice(src.indexOf('const fn owner_code'))
    + asStr('src/rules/action.rs', 'Stale')
    + asStr('src/rules/workspace.rs', 'State');
  return new Set([...body.matchAll(/=> (?:\{\s*)?"([a-z_]+)"/g)].map((m) => m[1]));
}

/** The members of `export type Reason = ...;` in the declarations. */
function declaredCodes() {
  const dts = read('src/wasm/types/store.d.ts');
  const start = dts.indexOf('export type Reason =');
  const union = dts.slice(start, dts.indexOf(';', start));
  return new Set([...union.matchAll(/\| "([a-z_]+)"/g)].map((m) => m[1]));
}

describe('reason codes', () => {
  test('the Reason union is exactly the codes of src/store/reason.rs', () => {
    const rust = rustCodes();
    const declared = declaredCodes();
    assert.ok(rust.size >= 50, `${rust.size} codes parsed from reason.rs`);
    assert.deepEqual([...declared].sort(), [...rust].sort());
  });

  test('every reason the store reports over the store scenarios is declared', () => {
    const declared = declaredCodes();
    const seen = new Set();
    const Recording = class extends ProjectionStore {
      lastReason() {
        const r = super.lastReason();
        seen.add(r);
        return r;
      }
    };
    const cases = loadStoreCases(JSON.parse(read('tests/fixtures/store_scenarios.json')));
    for (const c of cases) runStoreCase(Recording, c, assert);
    assert.ok(seen.size >= 20, `${seen.size} distinct reasons seen`);
    for (const r of seen) assert.ok(declared.has(r), `${r} is not in the Reason union`);
  });

  test('lastApplyReason keeps the reason of the apply call; queries overwrite lastReason', () => {
    const store = new ProjectionStore();
    store.applySessionList('t1', [{ id: 's1', task_id: 't1', state: 'RUNNING', pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 5 } }]);
    assert.equal(store.lastApplyReason(), 'applied');
    store.applySessionEvent({ session_id: 's1', task_id: 't1', state: 'RUNNING', pending_action: null, pending_action_revision: { epoch: '1', sequence: 4 } });
    assert.equal(store.lastApplyReason(), 'older_revision_rejected');
    assert.equal(store.sessionPendingAction('s1'), 'clarification');
    assert.equal(store.lastReason(), 'authoritative_projection', 'the query overwrote lastReason');
    assert.equal(store.lastApplyReason(), 'older_revision_rejected', 'but not lastApplyReason');
    store.applyFrame({ type: 'server.hello', payload: { epoch: '9' } });
    assert.equal(store.lastApplyReason(), 'first_hello');
    store.free();
  });
});
