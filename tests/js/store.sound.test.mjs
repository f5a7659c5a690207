// Issue 41's regression cases: every value the store holds and hands back (a status summary) is
// read into the store's own frozen JSON data at the call, or refused with a typed error and
// nothing changed, so that `dehydrate()` never fails and nothing the caller still holds is kept.
// Each class the issue found is here, through each call that takes a summary.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import * as rules from 'task-projection/rules';
import { stateOf } from './build.mjs';
import { mutateDeep, soundness } from './sound.mjs';

const T = 'task-1';
const at = (s) => `2026-12-06T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const summary = (extra = {}) => ({ revision: 4, updated_at: at(1), pending_action: 'permission', git: { branch: 'b' }, ...extra });

/** The calls that take a summary, each as `(store, summary) => call`, and the path of the
 * summary in its arguments. */
const TAKERS = [
  ['applyStatusSummaryEvent', (store, s) => store.applyStatusSummaryEvent({ task_id: T, status_summary: s }), 'payload.status_summary'],
  ['applyTaskUpdated', (store, s) => store.applyTaskUpdated({ id: T, status_summary: s, task_pending_action: 'permission' }), 'payload.status_summary'],
  ['applyTaskSnapshot', (store, s) => store.applyTaskSnapshot(store.beginTaskFetch(), [{ id: T, status_summary: s, task_pending_action: null }]), 'tasks[0].status_summary'],
];

function deep(levels) {
  let v = {};
  for (let i = 1; i < levels; i++) v = { next: v };
  return v;
}

/** Hostile summaries: [name, make, code, path below the summary]. */
const REFUSED = [
  ['a cycle in a field the engine does not read', () => { const s = summary(); s.git.self = s; return s; }, 'invalid_value', '.git.self'],
  ['a cycle through an array', () => { const a = []; a.push(a); return summary({ files: a }); }, 'invalid_value', '.files[0]'],
  ['a BigInt revision', () => summary({ revision: 4n }), 'invalid_type', '.revision'],
  ['a BigInt updated_at', () => summary({ updated_at: 1n }), 'invalid_type', '.updated_at'],
  ['a BigInt deep inside', () => summary({ git: { ahead: 2n } }), 'invalid_type', '.git.ahead'],
  ['10^5-deep nesting', () => summary({ tree: deep(100_000) }), 'invalid_value', `.tree${'.next'.repeat(31)}`],
  ['33 levels', () => summary({ tree: deep(32) }), 'invalid_value', `.tree${'.next'.repeat(31)}`],
  ['a revoked Proxy', () => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; }, 'unreadable_value', ''],
  ['a revoked Proxy inside', () => { const r = Proxy.revocable({}, {}); r.revoke(); return summary({ git: r.proxy }); }, 'unreadable_value', '.git'],
  ['a Proxy whose traps throw', () => new Proxy({}, { ownKeys() { throw new Error('ownKeys'); } }), 'unreadable_value', ''],
  ['a throwing getter', () => Object.defineProperty(summary(), 'extra', { enumerable: true, get() { throw new Error('getter'); } }), 'unreadable_value', '.extra'],
  ['NaN', () => summary({ ratio: NaN }), 'invalid_value', '.ratio'],
  ['Infinity', () => summary({ ratio: Infinity }), 'invalid_value', '.ratio'],
  ['a function', () => summary({ f() {} }), 'invalid_type', '.f'],
  ['a symbol', () => summary({ s: Symbol('s') }), 'invalid_type', '.s'],
  ['undefined in an array', () => summary({ list: [1, undefined] }), 'invalid_type', '.list[1]'],
  ['a hole in an array', () => summary({ list: [1, , 3] }), 'invalid_type', '.list[1]'], // eslint-disable-line no-sparse-arrays
  ['a Date', () => summary({ updated_at: new Date(0) }), 'invalid_type', '.updated_at'],
  ['a Date as the summary', () => new Date(0), 'invalid_type', ''],
  ['a Map', () => summary({ m: new Map() }), 'invalid_type', '.m'],
  ['a class instance', () => summary({ c: new (class Point { constructor() { this.x = 1; } })() }), 'invalid_type', '.c'],
  ['a boxed string', () => summary({ s: new String('x') }), 'invalid_type', '.s'],
  ['a lone surrogate', () => summary({ note: 'a\uD800' }), 'invalid_value', '.note'],
  ['a lone surrogate in a key', () => summary({ ['k\uDC00']: 1 }), 'invalid_value', '.k\uDC00'],
  ['more than 10,000 values', () => summary({ list: Array.from({ length: 10_000 }, (_, i) => i) }), 'invalid_value', '.list'],
  ['more than 2^20 characters', () => summary({ a: 'x'.repeat(600_000), b: 'y'.repeat(600_000) }), 'invalid_value', '.b'],
];

describe('a summary JSON cannot carry is refused at the call, and nothing changes', () => {
  for (const [taker, apply, root] of TAKERS) {
    for (const [name, make, code, below] of REFUSED) {
      test(`${taker}: ${name}`, () => {
        const store = new ProjectionStore();
        store.applyStatusSummaryEvent({ task_id: T, status_summary: { revision: 1, pending_action: 'clarification' } });
        const before = stateOf(store, { byValue: true });
        assert.throws(() => apply(store, make()), (e) => {
          assert.equal(e.name, 'TaskProjectionError');
          assert.equal(e.code, code, e.message);
          assert.equal(e.field, `${root}${below}`, e.message);
          assert.ok(e.message.length < 600);
          return true;
        });
        assert.equal(stateOf(store, { byValue: true }), before, 'nothing changed');
        assert.equal(soundness(ProjectionStore, store), '');
        store.free();
      });
    }
  }

  test('a snapshot holding such a summary does not hydrate', () => {
    const store = new ProjectionStore();
    store.applyStatusSummaryEvent({ task_id: T, status_summary: summary() });
    const snap = store.dehydrate();
    store.free();
    for (const [name, make, code, below] of REFUSED) {
      const bad = structuredClone(snap);
      bad.tasks[0].summary = make();
      assert.throws(() => ProjectionStore.hydrate(bad), (e) => e.code === code && e.field === `snapshot.tasks[0].summary${below}`, name);
    }
  });

  test('the bounds are exact: 32 levels, 10,000 values and 2^20 characters are held', () => {
    const store = new ProjectionStore();
    store.applyStatusSummaryEvent({ task_id: T, status_summary: summary({ tree: deep(31) }) });
    // The summary, its 5 keys (revision, updated_at, pending_action, git, list), git's key and
    // the list's elements: 1 + 5 + 1 + 9,993 = 10,000 values.
    store.applyStatusSummaryEvent({ task_id: T, status_summary: summary({ revision: 5, list: Array.from({ length: 9_993 }, () => 0) }) });
    assert.equal(store.taskStatusSummary(T).list.length, 9_993);
    // Keys and strings: revision, updated_at (and its 30), pending_action (and permission), git,
    // branch, b, a: 8 + 10 + 30 + 14 + 10 + 3 + 6 + 1 + 1 = 83 units.
    store.applyStatusSummaryEvent({ task_id: T, status_summary: summary({ revision: 6, a: 'x'.repeat((1 << 20) - 83) }) });
    assert.equal(store.taskStatusSummary(T).revision, 6);
    assert.throws(() => store.applyStatusSummaryEvent({ task_id: T, status_summary: summary({ revision: 7, a: 'x'.repeat((1 << 20) - 82) }) }), (e) => e.code === 'invalid_value');
    assert.equal(soundness(ProjectionStore, store), '');
    store.free();
  });
});

describe('what is accepted is the store\'s own', () => {
  for (const [taker, apply] of TAKERS) {
    test(`${taker}: altering the summary after the call changes no answer`, () => {
      const store = new ProjectionStore();
      const s = summary();
      apply(store, s);
      assert.equal(store.taskPendingAction(T), 'permission');
      s.pending_action = null;
      s.git.branch = 'x';
      s.revision = 99;
      assert.deepEqual(store.taskStatusSummary(T), summary(), 'the held summary is the one passed, as it was');
      assert.equal(store.taskStatusSummary(T).pending_action, 'permission', 'the summary and taskPendingAction agree');
      assert.notEqual(store.taskStatusSummary(T), s);
      mutateDeep(s);
      assert.deepEqual(store.taskStatusSummary(T), summary());
      assert.equal(soundness(ProjectionStore, store), '');
      store.free();
    });
  }

  test('a getter is read once, at the call: one that throws later does not reach dehydrate()', () => {
    const store = new ProjectionStore();
    let reads = 0;
    store.applyStatusSummaryEvent({
      task_id: T,
      status_summary: { revision: 2, get pending_action() { reads++; if (reads > 1) throw new Error('read twice'); return 'clarification'; } },
    });
    assert.equal(reads, 1);
    assert.equal(store.taskPendingAction(T), 'clarification');
    assert.deepEqual(store.dehydrate().tasks[0].summary, { revision: 2, pending_action: 'clarification' });
    assert.equal(soundness(ProjectionStore, store), '');
    store.free();
  });

  test('the held summary is frozen JSON data, the same object until it changes; dehydrate() hands out copies', () => {
    const store = new ProjectionStore();
    store.applyStatusSummaryEvent({ task_id: T, status_summary: summary() });
    const held = store.taskStatusSummary(T);
    assert.ok(Object.isFrozen(held) && Object.isFrozen(held.git));
    assert.equal(store.taskStatusSummary(T), held, 'stable identity (useSyncExternalStore)');
    assert.throws(() => { held.pending_action = null; }, TypeError, 'frozen: writing throws in strict code');
    assert.equal(store.taskStatusSummary(T).pending_action, 'permission');
    const snap = store.dehydrate();
    assert.ok(!Object.isFrozen(snap.tasks[0].summary), 'the snapshot is the caller\'s to change');
    snap.tasks[0].summary.git.branch = 'changed';
    assert.equal(store.taskStatusSummary(T).git.branch, 'b');
    store.applyStatusSummaryEvent({ task_id: T, status_summary: summary({ revision: 5 }) });
    assert.notEqual(store.taskStatusSummary(T), held, 'a new summary, a new object');
    store.free();
  });

  test('odd but JSON values are held as JSON would carry them', () => {
    const store = new ProjectionStore();
    const nullProto = Object.assign(Object.create(null), { a: 1 });
    const s = JSON.parse('{"revision": 3, "__proto__": {"polluted": true}, "constructor": "c"}');
    Object.assign(s, { zero: -0, gone: undefined, nullProto, frozen: Object.freeze({ f: [1, 'x', null, true] }) });
    store.applyStatusSummaryEvent({ task_id: T, status_summary: s });
    const held = store.taskStatusSummary(T);
    assert.equal(({}).polluted, undefined, 'no prototype polluted');
    assert.deepEqual(Object.keys(held), ['revision', '__proto__', 'constructor', 'zero', 'nullProto', 'frozen']);
    assert.equal(Object.getPrototypeOf(held), Object.prototype);
    assert.deepEqual(held.__proto__, { polluted: true }); // eslint-disable-line no-proto
    assert.ok(Object.is(held.zero, 0), '-0 is 0, as JSON writes it');
    assert.equal(JSON.stringify(held), JSON.stringify(JSON.parse(JSON.stringify(s))));
    assert.equal(soundness(ProjectionStore, store), '');
    store.free();
  });

  test('a snapshot is read into the hydrated store\'s own copies', () => {
    const source = new ProjectionStore();
    source.applyStatusSummaryEvent({ task_id: T, status_summary: summary() });
    const snap = source.dehydrate();
    source.free();
    const store = ProjectionStore.hydrate(snap);
    snap.tasks[0].summary.pending_action = null;
    mutateDeep(snap);
    assert.deepEqual(store.taskStatusSummary(T), summary());
    assert.equal(soundness(ProjectionStore, store), '');
    store.free();
  });

  test('a frame\'s summary is the store\'s own too', () => {
    const store = new ProjectionStore();
    const frame = { type: 'task.status_summary.updated', payload: { task_id: T, status_summary: summary() } };
    store.applyFrame(frame);
    mutateDeep(frame);
    assert.deepEqual(store.taskStatusSummary(T), summary());
    const text = JSON.stringify({ type: 'task.status_summary.updated', payload: { task_id: T, status_summary: summary({ revision: 8 }) } });
    store.applyFrame(text);
    assert.equal(store.taskStatusSummary(T).revision, 8);
    store.free();
  });
});

test('the stateless mergeFetchedStatusSummary still returns one of the caller\'s own objects', () => {
  const held = summary();
  const response = { id: T, status_summary: summary({ revision: 9 }) };
  assert.equal(rules.mergeFetchedStatusSummary({ held, taskPresentAtFetchStart: true, fetchStartRevision: 4, response }), response.status_summary);
});
