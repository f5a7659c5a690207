// The read-once boundary (issue 11): what a caller passes cannot trap, brick, leak or partially
// apply anything, in the default entry and in the pure-JS fallback. One test per problem the
// issue measured; tests/js/hostile.test.mjs runs the generated catalogue.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import fs from 'node:fs';
import * as mainStore from 'task-projection';
import * as fallbackStore from 'task-projection/fallback';
import * as mainRules from 'task-projection/rules';
import * as fallbackRules from 'task-projection/rules/fallback';
// Package internals, by path (they are not exports of the package).
import * as rawMain from '../../pkg/task_projection.js';
import * as rawFallback from '../../pkg/fallback/task_projection.js';
import * as rawMainRules from '../../pkg/rules/task_projection.js';
import * as rawFallbackRules from '../../pkg/rules/fallback/task_projection.js';
import { tape as rulesTape } from '../../pkg/rules/read.js';
import { readCases } from './fixture.mjs';
import { runAll } from './runner.mjs';
import { loadStoreCases, runAllStoreCases } from './store-runner.mjs';
import { MESSAGE, MESSAGE_EVENT, MESSAGES, MESSAGE_EVENTS, TURN, SESSION, LEAF, readArg, __testing as readTesting } from '../../pkg/read.js';
import { stateOf } from './build.mjs';

// Each build's entry points: the store's module and the rules' module (two wasm instances).
const main = { ...mainStore, ...mainRules };
const fallback = { ...fallbackStore, ...fallbackRules };

const T = 'task-1';
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const session = (id, state = 'RUNNING', extra = {}) => ({
  id, task_id: T, state, started_at: at(0), updated_at: at(0), is_primary: false,
  pending_action: null, pending_action_revision: { epoch: '1', sequence: 1 }, ...extra,
});
const message = (id, s = 1, extra = {}) => ({
  id, session_id: 'sess-a', task_id: T, turn_id: 'turn-a', type: 'clarification_request',
  metadata: { pending_id: 'p-a', question_total: 1, status: 'pending' }, created_at: at(s), updated_at: at(s), ...extra,
});

const turn = { id: 'turn-a', session_id: 'sess-a', task_id: T, started_at: at(0), created_at: at(0), updated_at: at(0), completed_at: null, metadata: {} };

/** A store with session sess-a waiting for input in turn-a. */
function ready(tp) {
  const store = new tp.ProjectionStore();
  store.applySessionList(T, [session('sess-a', 'WAITING_FOR_INPUT', { pending_action: 'clarification' })]);
  store.applyTurnList('sess-a', [turn]);
  store.applyMessagePage('sess-a', []);
  return store;
}

/** An array whose element `i` is read through a getter that throws. */
function throwingAt(items, i) {
  const a = items.slice();
  Object.defineProperty(a, i, { get() { throw new Error('caller getter'); } });
  return a;
}

const typed = (code, field) => (e) => {
  assert.equal(e.name, 'TaskProjectionError', `not a TaskProjectionError: ${e && e.stack}`);
  assert.equal(e.code, code, e.message);
  if (field !== undefined) assert.equal(e.field, field, e.message);
  assert.ok(e.message.length <= 400, `message of ${e.message.length} characters`);
  return true;
};

for (const [name, tp, raw] of [
  ['default', main, { store: rawMain, rules: rawMainRules }],
  ['fallback', fallback, { store: rawFallback, rules: rawFallbackRules }],
]) {
  describe(`${name}: a caller's exception never reaches a wasm frame`, () => {
    test('2,000 throwing getters, Proxies and lengths leave the module and the store working', () => {
      const store = ready(tp);
      const digest = stateOf(store, { byValue: true });
      const trap = new Proxy({}, { get() { throw new Error('trap'); } });
      const badLength = new Proxy([], { get(t, k) { if (k === 'length') throw new Error('length'); return t[k]; } });
      const { proxy: revoked, revoke } = Proxy.revocable([], {});
      revoke();
      for (let i = 0; i < 500; i++) {
        assert.throws(() => store.applyMessagePage('sess-a', throwingAt([message('m1')], 0)), typed('unreadable_value', 'messages[0]'));
        assert.throws(() => store.applyMessageEvent('added', trap), typed('unreadable_value', 'payload.id'));
        assert.throws(() => tp.visibleTurnHistory(badLength), typed('unreadable_value', 'turns'));
        assert.throws(() => tp.taskPendingAction(revoked), typed('unreadable_value', 'sessions'));
      }
      assert.equal(stateOf(store, { byValue: true }), digest, 'state unchanged');
      // The same store, a new store and a stateless export all still answer.
      store.applyMessageEvent('added', message('m1'));
      assert.equal(store.pendingClarification('sess-a').message_ids[0], 'm1');
      const fresh = new tp.ProjectionStore();
      fresh.applySessionList(T, [session('sess-b')]);
      assert.equal(fresh.pendingOwner(T), 'sess-b');
      assert.equal(tp.normalizeStartPolicy('new'), 'new');
      store.free();
      fresh.free();
    });

    test('a getter that calls the package mid-walk (growing the memory) leaves both calls exact', () => {
      // The outer call's arguments are written into wasm memory while they are read; the inner
      // call's (in the same module: the rules') go through the spill tape, and the memory grows
      // meanwhile (the inner call's allocations may grow it; the getter also grows it outright),
      // which leaves the outer's views of the old memory behind. Both answers must be those of the
      // same calls made apart.
      const turns = Array.from({ length: 300 }, (_, i) => ({ ...turn, id: `turn-${String(i).padStart(4, '0')}`, started_at: at(i % 60), created_at: at(i % 60) }));
      const big = Array.from({ length: 20_000 }, (_, i) => ({ ...turn, id: `inner-${i}`, started_at: at(i % 60), created_at: at(i % 60) }));
      const expectedInner = tp.visibleTurnHistory(big).map((t) => t.id);
      const expectedOuter = tp.visibleTurnHistory(turns).map((t) => t.id);
      for (const position of [0, 1, 150, 299]) {
        const outer = turns.slice();
        let inner;
        const at_ = outer[position];
        Object.defineProperty(outer, position, {
          get() {
            const store = new tp.ProjectionStore();
            store.applySessionList(T, Array.from({ length: 2_000 }, (_, i) => session(`grow-${position}-${i}`)));
            inner = tp.visibleTurnHistory(big).map((t) => t.id);
            store.free();
            raw.rules.__memory().grow(1);
            return at_;
          },
        });
        const got = tp.visibleTurnHistory(outer).map((t) => t.id);
        assert.deepEqual(inner, expectedInner, `inner call at ${position}`);
        assert.deepEqual(got, expectedOuter, `outer call with the inner at ${position}`);
      }
      // A getter inside an object field (the walk by the schema) calling the store's module.
      const many = Array.from({ length: 2_000 }, (_, i) => session(`nested-${i}`, i === 1_999 ? 'WAITING_FOR_INPUT' : 'RUNNING', i === 1_999 ? { pending_action: 'permission' } : {}));
      const owner = () => {
        const other = new tp.ProjectionStore();
        other.applySessionList(T, many);
        const answer = other.pendingOwner(T);
        other.free();
        return answer;
      };
      const expectedNested = owner();
      assert.equal(expectedNested, 'nested-1999');
      const store = ready(tp);
      const payload = { ...message('m9', 9) };
      let nested;
      Object.defineProperty(payload, 'metadata', {
        get() {
          nested = owner();
          raw.store.__memory().grow(1);
          return { pending_id: 'p-a', question_total: 1, status: 'pending' };
        },
      });
      store.applyMessageEvents('added', [payload]);
      assert.equal(nested, expectedNested);
      assert.deepEqual(store.pendingClarification('sess-a').message_ids, ['m9']);
      store.free();
    });

    test("the caller's exception is the typed error's cause", () => {
      const mine = new Error('mine');
      const payload = { ...message('m1') };
      Object.defineProperty(payload, 'session_id', { get() { throw mine; } });
      const store = new tp.ProjectionStore();
      assert.throws(() => store.applyMessageEvent('added', payload), (e) => typed('unreadable_value', 'payload.session_id')(e) && e.cause === mine);
      store.free();
    });
  });

  describe(`${name}: every field is read once`, () => {
    test('a getter that changes its value between reads is read once; the call applies or fails whole', () => {
      const store = ready(tp);
      let reads = 0;
      const flip = { ...message('m1') };
      Object.defineProperty(flip, 'id', { get() { reads++; return reads === 1 ? 'm1' : { not: 'a string' }; } });
      store.applyMessageEvent('added', flip);
      assert.equal(reads, 1);
      assert.deepEqual(store.pendingClarification('sess-a').message_ids, ['m1']);
      store.free();
    });

    test('a page or a batch with a bad row applies none of its rows', () => {
      for (const call of ['page', 'batch']) {
        const store = new tp.ProjectionStore();
        const digest = stateOf(store, { byValue: true });
        const rows = throwingAt([message('m1'), message('m2', 2), message('m3', 3)], 2);
        const run = () => (call === 'page' ? store.applyMessagePage('sess-a', rows) : store.applyMessageEvents('added', rows));
        assert.throws(run, typed('unreadable_value', call === 'page' ? 'messages[2]' : 'payloads[2]'));
        assert.equal(stateOf(store, { byValue: true }), digest, `${call}: nothing applied`);
        store.free();
      }
    });
  });

  describe(`${name}: boundedLoad always settles as an outcome`, () => {
    for (const [what, load] of [['42', 42], ['null', null], ['{}', {}], ['undefined', undefined]]) {
      test(`boundedLoad(${what}, 10) → { error } (invalid_type)`, async () => {
        const outcome = await tp.boundedLoad(load, 10);
        assert.ok(typed('invalid_type', 'load')(outcome.error));
      });
    }
    test('a thenable whose then throws, or whose then getter throws → { error } with that exception', async () => {
      const boom = new Error('then');
      assert.equal((await tp.boundedLoad({ then() { throw boom; } }, 10)).error, boom);
      assert.equal((await tp.boundedLoad({ get then() { throw boom; } }, 10)).error, boom);
    });
    test('a thenable that never calls back times out', async () => {
      assert.deepEqual(await tp.boundedLoad({ then() {} }, 5), { error: 'timeout', timedOut: true });
    });
    test('a rejection without a reason is still a failed load, and settles task-only', async () => {
      const outcome = await tp.boundedLoad(Promise.reject(undefined), 1000);
      assert.ok('error' in outcome && outcome.error !== undefined);
      const store = new tp.ProjectionStore();
      const { ticket } = store.beginSelection(T);
      assert.equal(store.settleSelection(ticket, outcome).kind, 'task_only');
      store.free();
    });
  });

  describe(`${name}: exact values`, () => {
    test('lone surrogates are refused (two ids never collapse into one)', () => {
      const store = ready(tp);
      const digest = stateOf(store, { byValue: true });
      assert.throws(() => store.applyMessageEvent('added', message('s-\uD800')), typed('invalid_value', 'payload.id'));
      assert.throws(() => store.applyMessagePage('sess-a', [message('s-\uDBFF')]), typed('invalid_value', 'messages[0].id'));
      assert.throws(() => store.applySessionList('t-\uDC00', []), typed('invalid_value', 'taskId'));
      assert.throws(() => tp.compareRevisions({ epoch: '1\uD800', sequence: 1 }, { epoch: '1', sequence: 1 }), typed('invalid_value', 'a.epoch'));
      assert.equal(stateOf(store, { byValue: true }), digest);
      // A well-formed astral id round-trips exactly.
      store.applyMessageEvent('added', message('s-\uD83D\uDE00'));
      assert.equal(store.pendingClarification('sess-a').message_ids[0], 's-\uD83D\uDE00');
      store.free();
    });

    test('sequences up to 2^64 - 1 round-trip exactly (BigInt beyond 2^53 - 1)', () => {
      const max = 2n ** 64n - 1n;
      const merged = tp.mergePendingProjection(null, { pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: max } });
      assert.equal(merged.pending_action_revision.sequence, max);
      const back = tp.mergePendingProjection(merged, { pending_action: null, pending_action_revision: { epoch: '1', sequence: max - 1n } });
      assert.equal(back.pending_action, 'clarification', 'an older revision does not win');
      const safe = tp.mergePendingProjection(null, { pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 2 ** 53 - 1 } });
      assert.equal(safe.pending_action_revision.sequence, 2 ** 53 - 1, 'a safe integer stays a Number');
      assert.equal(tp.compareRevisions({ epoch: '1', sequence: 2n ** 53n + 1n }, { epoch: '1', sequence: 2n ** 53n }), 1);
    });

    test('a Number beyond 2^53 - 1 is refused (it may already be rounded)', () => {
      assert.throws(() => tp.compareRevisions({ epoch: '1', sequence: 2 ** 53 }, { epoch: '1', sequence: 1 }), typed('invalid_revision', 'a.sequence'));
      assert.throws(() => tp.isNewerStatusSummary({ revision: 2 ** 60 }, null), typed('invalid_value', 'incoming.revision'));
    });
  });

  describe(`${name}: every entry validates`, () => {
    test('subscribe(42), pendingOwner(task, 42) → invalid_type', () => {
      const store = new tp.ProjectionStore();
      assert.throws(() => store.subscribe(42), typed('invalid_type', 'listener'));
      assert.throws(() => store.pendingOwner(T, 42), typed('invalid_type', 'preferredSessionId'));
      store.free();
    });

    test('after dispose() or free() every method throws disposed; settleSelection settles inert', async () => {
      for (const end of ['dispose', 'free']) {
        const store = new tp.ProjectionStore();
        const calls = [];
        store.subscribe((c) => calls.push(c));
        const { ticket } = store.beginSelection(T);
        store.applySessionList(T, [session('sess-a')]);
        store[end]();
        store[end]();
        assert.throws(() => store.applyMessageEvent('added', message('m1')), typed('disposed', 'this'));
        assert.throws(() => store.sessionPendingAction('sess-a'), typed('disposed'));
        assert.throws(() => store.version(), typed('disposed'));
        assert.deepEqual(store.settleSelection(ticket, { sessions: [] }), { kind: 'inert' });
        store.free();
        await tick();
        assert.deepEqual(calls, [], 'no listener called after the end');
      }
    });

    test('the boundary methods are not reachable from the public object', () => {
      const store = new tp.ProjectionStore();
      for (const name of ['__scratch', '__intern', '__applyMessage', '__sessionQuery', '__internReset', '__takeChanges', '__track', '__hello', '__wbg_ptr']) {
        assert.equal(store[name], undefined, name);
      }
      assert.deepEqual(Object.getOwnPropertyNames(store), []);
      assert.deepEqual(Object.getOwnPropertySymbols(store), []);
      store.free();
    });

    test('error messages quote at most ~200 characters of a 10 MB value', () => {
      const huge = 'x'.repeat(10_000_000);
      const store = new tp.ProjectionStore();
      assert.throws(() => store.applyMessageEvent(huge, message('m1')), typed('invalid_value', 'kind'));
      assert.throws(() => tp.compareRevisions({ epoch: huge, sequence: 1 }, { epoch: '1', sequence: 1 }), typed('malformed_epoch', 'a.epoch'));
      assert.throws(() => tp.taskPendingAction([session('s', 'RUNNING', { pending_action: huge })]), typed('invalid_value', 'sessions[0].pending_action'));
      store.free();
    });
  });
}

describe('the raw wasm side checks its own arguments', () => {
  test('__scratch and __intern with hostile arguments throw typed errors, never trap', () => {
    const raw = new rawMain.ProjectionStore();
    assert.throws(() => raw.__scratch(2 ** 32 - 1), typed('invalid_value'));
    assert.throws(() => raw.__scratch(-1), typed('invalid_value'));
    assert.throws(() => raw.__intern(123), typed('invalid_value'));
    assert.equal(typeof raw.__intern('ok'), 'number');
    raw.free();
  });
});

describe('one field mapping (the fast-path codes and the written-out shapes of js/read.js, generated from src/wire/)', () => {
  test('the written-out message reader reads what the tape of the schema reads', () => {
    const odd = [
      message('m1'), { ...message('m2'), metadata: null }, { ...message('m3'), metadata: [1] }, { message_id: 'm4', session_id: 's' },
      { ...message('m5'), pending_action_revision: { epoch: 7, sequence: 2n ** 60n } }, { ...message('m6'), pending_action_revision: 'r', type: {} },
      { ...message('m7'), metadata: { status: [], pending_id: () => 1, question_total: '2' } }, 42, null, [message('m8')],
      { ...message('m9'), id: 'é✓', turn_id: 'ü' },
    ];
    for (const node of [MESSAGE, MESSAGE_EVENT]) {
      for (const v of odd) {
        const copy = readArg(v, node, 'payload');
        assert.deepEqual(readTesting.tapeOf(copy, node, 'payload'), readTesting.tapeOf(v, node, 'payload'),
          JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : x)));
      }
    }
  });

  test('the written-out message, turn and session writers write what the walk by the schema writes', () => {
    const t0 = { id: 't', started_at: at(1), created_at: at(1), updated_at: at(2), completed_at: null, metadata: { lifecycle_only: true } };
    const s0 = session('s1');
    const odd = [
      t0, { ...t0, metadata: null }, { ...t0, metadata: [true] }, { ...t0, metadata: { prompt_dispatch_pending: 'yes', prompt_dispatch_attempted: 1.5 } },
      { ...t0, id: 'é✓', completed_at: 7, started_at: {} }, { id: 3n }, {}, s0, { ...s0, pending_action_revision: null },
      { ...s0, pending_action_revision: [1] }, { ...s0, pending_action_revision: { epoch: 1, sequence: 2n ** 63n } },
      { ...s0, is_primary: 'true', state: Symbol('s'), updated_at: -0 }, { ...s0, task_id: () => 1, id: 'ü' },
      message('m1'), { ...message('m2'), metadata: null }, { ...message('m3'), metadata: [1] }, { message_id: 'm4', session_id: 's' },
      { ...message('m5'), pending_action_revision: { epoch: 7, sequence: 2n ** 60n } }, { ...message('m6'), pending_action_revision: 'r', type: {} },
      { ...message('m7'), metadata: { status: [], pending_id: () => 1, question_total: '2' } },
      { ...message('m8'), pending_action: 'clarification', pending_action_revision: { epoch: '3', sequence: 4 }, task_id: 't' },
      { ...message('m9'), id: 'é✓', turn_id: 'ü', metadata: { status: 'pending', pending_id: 'p', question_total: 2.5 } },
    ];
    for (const node of [TURN, SESSION, MESSAGE, MESSAGE_EVENT]) {
      const generic = { ...node, write: undefined }; // same schema, written by the walk
      for (const v of odd) {
        for (const input of [v, [v, v], [v, { ...v }]]) {
          const list = Array.isArray(input);
          const n = list ? { t: 2, keys: [], of: node, nodes: [], shapeTape: undefined, shapeGen: 0, shapeAt: 0, write: undefined } : node;
          const g = list ? { ...n, of: generic } : generic;
          assert.deepEqual(readTesting.tapeOf(input, n, 'v'), readTesting.tapeOf(input, g, 'v'), String(Object.keys(v)));
        }
      }
    }
    // Errors name the same field.
    const bad = { ...s0, pending_action_revision: { epoch: 'x\uD800', sequence: 1 } };
    assert.throws(() => readTesting.tapeOf(bad, SESSION, 'sessions'), (e) => e.field === 'sessions.pending_action_revision.epoch');
    const getter = Object.defineProperty({ ...t0 }, 'metadata', { get() { throw new Error('no'); } });
    assert.throws(() => readTesting.tapeOf(getter, TURN, 'turns'), (e) => e.code === 'unreadable_value' && e.field === 'turns.metadata');
    const badMessage = { ...message('m1'), pending_action_revision: { epoch: 1, sequence: 'x\uDC00' } };
    assert.throws(() => readTesting.tapeOf([badMessage], MESSAGE_EVENTS, 'payloads'),
      (e) => e.code === 'invalid_value' && e.field === 'payloads[0].pending_action_revision.sequence');
    const statusGetter = { ...message('m1'), metadata: Object.defineProperty({}, 'status', { get() { throw new Error('no'); } }) };
    assert.throws(() => readTesting.tapeOf([statusGetter], MESSAGES, 'messages'),
      (e) => e.code === 'unreadable_value' && e.field === 'messages[0].metadata.status');
  });

  test('the tapes hold every key the decoders read, on every scenario input', () => {
    // The decoders count the keys they read that a tape's object did not carry (`__tapeMissed`):
    // with the schemas of read.js there are none, over every store scenario and every stateless
    // scenario. A schema without a key the decoder reads is counted (the check can fail).
    rawMain.__tapeMissed();
    rawMainRules.__tapeMissed();
    const objectNode = (of) => ({ t: 1, keys: Object.keys(of), of, nodes: Object.values(of), shapeTape: undefined, shapeGen: 0, shapeAt: 0, write: undefined });
    const partial = objectNode({ session: objectNode({ id: LEAF }) });
    rulesTape().arg({ session: { id: 's', state: 'IDLE' }, turns: [], messages: [] }, partial, 'input').send();
    try { rawMainRules.sessionPendingAction(); } catch { /* rejected or not: the reads count */ }
    assert.ok(rawMainRules.__tapeMissed() > 0, 'a missing key is counted');
    const storeCases = loadStoreCases(JSON.parse(fs.readFileSync(new URL('../fixtures/store_scenarios.json', import.meta.url), 'utf8')));
    const results = [...runAll(main, readCases()), ...runAllStoreCases(main.ProjectionStore, storeCases)];
    assert.deepEqual(results.filter((r) => !r.ok), []);
    assert.ok(results.length > 200, `${results.length} cases`);
    assert.equal(rawMain.__tapeMissed(), 0, 'keys the store decoders read that a schema of read.js does not carry');
    assert.equal(rawMainRules.__tapeMissed(), 0, 'keys the rules decoders read that a schema of read.js does not carry');
  });
});

/** A read-only recording view of `value`: a read of a key `node` does not copy lands in `missing`. */
function record(value, node, at, missing) {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const of = node && node.t === 2 ? node.of : undefined;
    return value.map((v, i) => record(v, of, `${at}[${i}]`, missing));
  }
  const keys = node && (node.t === 1 || node.t === 3) ? node.of : {};
  return new Proxy(value, {
    get(target, key) {
      if (typeof key === 'string' && !(key in keys)) missing.push(`${at}.${key}`);
      return record(target[key], keys[key], `${at}.${String(key)}`, missing);
    },
  });
}
