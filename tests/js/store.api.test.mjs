// Focused tests of the ProjectionStore JS surface (the `node` entry of the built package): change
// notification, version, result identity, absent vs null projection keys, disposal, boundedLoad,
// and typed errors. The fixture cases (store.node.test.mjs) cover the decisions themselves.
import { stateOf } from './build.mjs';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { ProjectionStore, boundedLoad } from 'task-projection';

const T = 'task-1';
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (epoch, sequence) => ({ epoch: String(epoch), sequence });
const session = (id, state, pendingAction, revision, extra = {}) => ({
  id, task_id: T, state, started_at: at(0), updated_at: at(0), is_primary: false,
  pending_action: pendingAction, pending_action_revision: revision, ...extra,
});
const turn = (id, sessionId) => ({ id, session_id: sessionId, task_id: T, started_at: at(0), created_at: at(0), updated_at: at(0), completed_at: null, metadata: {} });
/** A `session.message.*` payload; `projection` is spread in as is (keys may be absent). */
const event = (id, sessionId, s, type = 'message', metadata = {}, projection = {}) => ({
  message_id: id, session_id: sessionId, task_id: T, turn_id: `turn-${sessionId}`, author_type: 'agent', type,
  metadata, created_at: at(s), updated_at: at(s), content: 'x', ...projection,
});
/** Changes with sorted id lists (the order of ids is not part of the contract). */
const sorted = (c) => ({ tasks: [...c.tasks].sort(), sessions: [...c.sessions].sort() });
const question = (id, sessionId, s, projection) =>
  event(id, sessionId, s, 'clarification_request', { pending_id: `p-${sessionId}`, question_total: 1, status: 'pending' }, projection);

/** A store with two running sessions of task-1, turn lists loaded. */
function twoSessions() {
  const store = new ProjectionStore();
  store.applySessionList(T, [session('sess-a', 'RUNNING', null, rev(1, 1)), session('sess-b', 'RUNNING', null, rev(1, 1), { is_primary: true })]);
  store.applyTurnList('sess-a', [turn('turn-sess-a', 'sess-a')]);
  store.applyTurnList('sess-b', [turn('turn-sess-b', 'sess-b')]);
  store.applyMessagePage('sess-a', []);
  store.applyMessagePage('sess-b', []);
  return store;
}

describe('subscribe', () => {
  test('is called at most once per batch of synchronous calls, with the changed ids', async () => {
    const store = twoSessions();
    await tick();
    const calls = [];
    store.subscribe((changes) => calls.push(changes));
    store.applyMessageEvent('added', question('q1', 'sess-a', 1, { pending_action: 'clarification', pending_action_revision: rev(1, 2) }));
    store.applyMessageEvent('added', event('m2', 'sess-b', 2));
    store.applyMessageEvent('added', event('m3', 'sess-b', 3));
    store.applyStatusSummaryEvent({ task_id: 'task-2', workspace_id: 'ws', status_summary: { revision: 1 } });
    assert.equal(calls.length, 0, 'listeners run after the synchronous batch, not during it');
    await tick();
    assert.equal(calls.length, 1, 'one notification for four changes');
    assert.deepEqual(sorted(calls[0]), { tasks: [T, 'task-2'], sessions: ['sess-a', 'sess-b'] });
    assert.ok(Array.isArray(calls[0].tasks) && Array.isArray(calls[0].sessions));
    store.applyMessageEvent('added', event('m4', 'sess-b', 4));
    await tick();
    assert.equal(calls.length, 2, 'a later batch notifies again');
    assert.deepEqual(sorted(calls[1]), { tasks: [T], sessions: ['sess-b'] });
    store.free();
  });

  test('calls that change nothing do not notify', async () => {
    const store = twoSessions();
    const payload = event('m1', 'sess-a', 1, 'message', {}, { pending_action: null, pending_action_revision: rev(1, 1) });
    store.applyMessageEvent('added', payload);
    await tick();
    const calls = [];
    store.subscribe((changes) => calls.push(changes));
    store.applyMessageEvent('added', payload); // duplicate delivery
    store.applySessionEvent({ id: 'sess-a', task_id: T, state: 'RUNNING', pending_action: 'permission', pending_action_revision: rev(0, 9) }); // older
    store.sessionPendingAction('sess-a');
    store.pendingClarification('sess-a');
    await tick();
    assert.deepEqual(calls, []);
    store.free();
  });

  test('unsubscribe stops notifications and is idempotent', async () => {
    const store = twoSessions();
    const calls = [];
    const unsubscribe = store.subscribe((changes) => calls.push(changes));
    assert.equal(typeof unsubscribe, 'function');
    unsubscribe();
    unsubscribe();
    store.applyMessageEvent('added', event('m1', 'sess-a', 1));
    await tick();
    assert.deepEqual(calls, []);
    store.free();
  });

  test('a throwing listener does not stop the others', async () => {
    const store = twoSessions();
    const seen = [];
    let throwing = true;
    store.subscribe(() => {
      seen.push('first');
      if (throwing) throw new Error('listener bug');
    });
    store.subscribe(() => seen.push('second'));
    // The error is reported, not swallowed (reportError where the platform has one).
    const reported = [];
    const hadReportError = 'reportError' in globalThis;
    const previous = globalThis.reportError;
    globalThis.reportError = (error) => reported.push(error.message);
    try {
      store.applyMessageEvent('added', event('m1', 'sess-a', 1));
      await tick();
    } finally {
      if (hadReportError) globalThis.reportError = previous;
      else delete globalThis.reportError;
    }
    assert.deepEqual(reported, ['listener bug']);
    assert.deepEqual(seen, ['first', 'second']);
    throwing = false;
    store.applyMessageEvent('added', event('m2', 'sess-a', 2));
    await tick();
    assert.deepEqual(seen, ['first', 'second', 'first', 'second'], 'the store keeps notifying after a listener threw');
    store.free();
  });
});

describe('version', () => {
  test('increases on every change and only then', () => {
    const store = new ProjectionStore();
    const v0 = store.version();
    assert.equal(typeof v0, 'number');
    store.applySessionList(T, [session('sess-a', 'RUNNING', null, rev(1, 1))]);
    const v1 = store.version();
    assert.ok(v1 > v0, 'session list');
    store.applyMessageEvent('added', event('m1', 'sess-a', 1, 'message', {}, { pending_action: 'permission', pending_action_revision: rev(1, 2) }));
    const v2 = store.version();
    assert.ok(v2 > v1, 'message event');
    store.applySessionEvent({ id: 'sess-a', task_id: T, state: 'RUNNING', pending_action: null, pending_action_revision: rev(1, 1) });
    assert.equal(store.version(), v2, 'a rejected (older) projection changes nothing');
    store.sessionPendingAction('sess-a');
    store.pendingOwner(T);
    assert.equal(store.version(), v2, 'queries change nothing');
    assert.throws(() => store.applyMessageEvent('added', { message_id: 5 }));
    assert.equal(store.version(), v2, 'a malformed event changes nothing');
    store.free();
  });
});

describe('result identity (useSyncExternalStore)', () => {
  test('pendingClarification / hiddenMessageIds keep their identity while the session is unchanged', () => {
    const store = twoSessions();
    store.applyMessageEvent('added', question('q1', 'sess-a', 1, { pending_action: 'clarification', pending_action_revision: rev(1, 2) }));
    const bundle = store.pendingClarification('sess-a');
    const hidden = store.hiddenMessageIds('sess-a');
    assert.deepEqual(bundle, { pending_id: 'p-sess-a', message_ids: ['q1'] });
    assert.deepEqual([...hidden], ['q1']);
    assert.equal(store.pendingClarification('sess-a'), bundle, 'same object on a repeated read');
    assert.equal(store.hiddenMessageIds('sess-a'), hidden);

    // Changes elsewhere (another session, a task summary) keep this session's objects.
    store.applyMessageEvent('added', event('m9', 'sess-b', 9));
    store.applyStatusSummaryEvent({ task_id: T, workspace_id: 'ws', status_summary: { revision: 2, pending_action: 'clarification' } });
    assert.equal(store.pendingClarification('sess-a'), bundle, 'unchanged after another session changed');
    assert.equal(store.hiddenMessageIds('sess-a'), hidden);

    // A change of this session that leaves the answer as it was keeps the objects: identity
    // changes only when the answer does.
    store.applyMessageEvent('added', event('m2', 'sess-a', 2));
    assert.equal(store.pendingClarification('sess-a'), bundle, 'same answer, same object');
    assert.equal(store.hiddenMessageIds('sess-a'), hidden);

    // A second question of the bundle changes the answer: new objects, stable again after.
    store.applyMessageEvent('added', question('q3', 'sess-a', 3, { pending_action: 'clarification', pending_action_revision: rev(1, 3) }));
    const after = store.pendingClarification('sess-a');
    assert.notEqual(after, bundle, 'a new object for a new answer');
    assert.deepEqual(after, { pending_id: 'p-sess-a', message_ids: ['q1', 'q3'] });
    assert.notEqual(store.hiddenMessageIds('sess-a'), hidden);
    assert.deepEqual([...store.hiddenMessageIds('sess-a')], ['q1', 'q3']);
    assert.equal(store.pendingClarification('sess-a'), after, 'and stable again');
    assert.ok(Object.isFrozen(after) && Object.isFrozen(after.message_ids), 'shared results are frozen');

    // null stays null.
    assert.equal(store.pendingClarification('sess-b'), null);
    store.free();
  });
});

describe('taskStatusSummary', () => {
  test('hands back a frozen copy of the summary, every field kept, the same object until it changes', () => {
    const store = new ProjectionStore();
    const first = { revision: 4, updated_at: at(1), pending_action: 'clarification', primary_session: { id: 'sess-a' }, git: { branch: 'b' } };
    store.applyStatusSummaryEvent({ task_id: T, workspace_id: 'ws', status_summary: first });
    const held = store.taskStatusSummary(T);
    assert.deepEqual(held, first);
    assert.notEqual(held, first, 'the store\'s own copy');
    assert.ok(Object.isFrozen(held) && Object.isFrozen(held.git));
    store.applyStatusSummaryEvent({ task_id: T, workspace_id: 'ws', status_summary: { ...first, revision: 3 } });
    assert.equal(store.lastReason(), 'older_revision_rejected');
    assert.equal(store.taskStatusSummary(T), held, 'still the first copy');
    const snapshotTask = { id: T, status_summary: { revision: 9, updated_at: at(2) }, task_pending_action: null };
    store.applyTaskSnapshot(store.beginTaskFetch(), [snapshotTask]);
    assert.deepEqual(store.taskStatusSummary(T), snapshotTask.status_summary, 'the response\'s summary');
    assert.deepEqual(first, { revision: 4, updated_at: at(1), pending_action: 'clarification', primary_session: { id: 'sess-a' }, git: { branch: 'b' } }, 'the caller\'s object untouched');
    store.free();
  });
});

describe('pending_action keys in a message event', () => {
  test('omitted or undefined keeps the held projection; null cleans it', () => {
    const store = twoSessions();
    store.applyMessageEvent('added', question('q1', 'sess-a', 1, { pending_action: 'clarification', pending_action_revision: rev(1, 2) }));
    assert.equal(store.sessionPendingAction('sess-a'), 'clarification');

    store.applyMessageEvent('added', event('m2', 'sess-a', 2)); // both keys omitted
    assert.equal(store.sessionPendingAction('sess-a'), 'clarification', 'omitted keys keep');
    assert.equal(store.lastReason(), 'authoritative_projection');

    store.applyMessageEvent('added', event('m3', 'sess-a', 3, 'message', {}, { pending_action: undefined, pending_action_revision: undefined }));
    assert.equal(store.sessionPendingAction('sess-a'), 'clarification', 'keys set to undefined count as omitted');

    store.applyMessageEvent('added', event('m4', 'sess-a', 4, 'message', {}, { pending_action: undefined, pending_action_revision: rev(1, 3) }));
    assert.equal(store.sessionPendingAction('sess-a'), 'clarification', 'a newer revision without a value keeps the value');

    store.applyMessageEvent('added', event('m5', 'sess-a', 5, 'message', {}, { pending_action: null, pending_action_revision: rev(1, 4) }));
    assert.equal(store.sessionPendingAction('sess-a'), null, 'null is clean');
    assert.equal(store.lastReason(), 'authoritative_projection');
    assert.equal(store.pendingClarification('sess-a'), null);
    assert.equal(store.lastReason(), 'projection_not_clarification');
    store.free();
  });
});

describe('dispose', () => {
  test('makes outstanding tickets inert and drops listeners and state', async () => {
    const store = twoSessions();
    store.applyStatusSummaryEvent({ task_id: T, workspace_id: 'ws', status_summary: { revision: 2, pending_action: 'clarification' } });
    const { ticket, reload } = store.beginSelection(T, { preferredSessionId: 'sess-b' });
    assert.equal(reload, true);
    assert.match(ticket, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a uuid v4 ticket');
    const calls = [];
    store.subscribe((c) => calls.push(c));
    store.dispose();
    assert.deepEqual(store.settleSelection(ticket, { sessions: [session('sess-a', 'WAITING_FOR_INPUT', 'clarification', rev(1, 5))] }), { kind: 'inert' });
    assert.deepEqual(store.settleSelection(ticket, { error: new Error('x') }), { kind: 'inert' });
    // Everything else refuses a disposed store with a typed error (no silent empty answers).
    for (const call of [() => store.sessionPendingAction('sess-a'), () => store.lastReason(), () => store.taskStatusSummary(T)]) {
      assert.throws(call, (e) => e.name === 'TaskProjectionError' && e.code === 'disposed');
    }
    await tick();
    assert.deepEqual(calls, [], 'no listener survives dispose');
    store.free();
  });
});

describe('boundedLoad', () => {
  const sessions = [session('sess-a', 'WAITING_FOR_INPUT', 'clarification', rev(1, 2))];

  test('resolves { sessions } with the caller\'s own array', async () => {
    const outcome = await boundedLoad(Promise.resolve(sessions), 5_000);
    assert.deepEqual(Object.keys(outcome), ['sessions']);
    assert.equal(outcome.sessions, sessions);
  });

  test('resolves { error } with the rejection value', async () => {
    const failure = new Error('HTTP 503');
    const outcome = await boundedLoad(Promise.reject(failure), 5_000);
    assert.equal(outcome.error, failure);
    assert.notEqual(outcome.timedOut, true);
  });

  test('resolves { timedOut: true } for a load that never settles, after about the timeout', async () => {
    const started = performance.now();
    const outcome = await boundedLoad(new Promise(() => {}), 40);
    const waited = performance.now() - started;
    assert.equal(outcome.timedOut, true);
    assert.ok('error' in outcome, 'a timeout is a failed load for settleSelection');
    assert.ok(waited >= 35, `waited only ${waited.toFixed(1)} ms`);
    assert.ok(waited < 2_000, `waited ${waited.toFixed(1)} ms`);
  });

  test('does not keep its timer alive once the load settled', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    await boundedLoad(Promise.resolve(sessions), 600_000);
    await tick();
    assert.equal(timers(), before, 'the 10-minute timer was cleared');
  });

  test('each outcome settles a pending-task selection as SPEC §6 says', async () => {
    const pendingStore = () => {
      const store = new ProjectionStore();
      store.applyTaskUpdated({ id: T, status_summary: { revision: 3, pending_action: 'clarification' }, task_pending_action: 'clarification' });
      store.applySessionList(T, sessions);
      return store;
    };
    const cases = [
      [() => new Promise(() => {}), { kind: 'task_only' }, 'load_failed_pending_task'],
      [() => Promise.reject(new Error('HTTP 500')), { kind: 'task_only' }, 'load_failed_pending_task'],
      [() => Promise.resolve(sessions), { kind: 'session', sessionId: 'sess-a' }, 'pending_owner'],
    ];
    for (const [load, expected, reason] of cases) {
      const store = pendingStore();
      const { ticket, reload } = store.beginSelection(T);
      assert.equal(reload, true, 'a pending task reloads its session list');
      const outcome = await boundedLoad(load(), 30);
      assert.deepEqual(store.settleSelection(ticket, outcome), expected);
      assert.equal(store.lastReason(), reason);
      store.free();
    }
  });
});

describe('errors', () => {
  test('are TaskProjectionError Errors with code and field, and the store keeps working', () => {
    const store = twoSessions();
    store.applyMessageEvent('added', question('q1', 'sess-a', 1, { pending_action: 'clarification', pending_action_revision: rev(1, 2) }));
    const digest = stateOf(store);
    const version = store.version();
    const attempts = [
      [() => store.applyMessageEvent('created', event('m2', 'sess-a', 2)), 'invalid_value', 'kind'],
      [() => store.applyMessageEvent('added', { ...event('m2', 'sess-a', 2), pending_action: 'approve' }), 'invalid_value', 'payload.pending_action'],
      [() => store.applyMessageEvent('added', { ...event('m2', 'sess-a', 2), pending_action_revision: { epoch: 1, sequence: 1 } }), 'invalid_revision', 'payload.pending_action_revision.epoch'],
      [() => store.applySessionList(T, [session('sess-z', 'RUNNING', null, rev(1, 1), { task_id: 'task-9' })]), 'invalid_value', 'sessions[0].task_id'],
      [() => store.applyTurnList('sess-a', 'turns'), 'invalid_type', 'turns'],
      [() => store.sessionPendingAction(42), 'invalid_type', 'sessionId'],
      [() => store.applyTaskSnapshot(99, []), 'invalid_value', 'token'],
    ];
    for (const [call, code, field] of attempts) {
      let thrown;
      try {
        call();
      } catch (err) {
        thrown = err;
      }
      assert.ok(thrown instanceof Error, `${code}/${field}: throws an Error`);
      assert.equal(thrown.name, 'TaskProjectionError');
      assert.equal(thrown.code, code);
      assert.equal(thrown.field, field);
      assert.ok(thrown.message.includes(field), `message ${JSON.stringify(thrown.message)} names the field`);
      assert.equal(stateOf(store), digest, `${code}/${field}: state unchanged`);
      assert.equal(store.version(), version);
    }
    assert.deepEqual(store.pendingClarification('sess-a'), { pending_id: 'p-sess-a', message_ids: ['q1'] });
    store.applyMessageEvent('added', event('m2', 'sess-a', 2, 'message', {}, { pending_action: null, pending_action_revision: rev(1, 3) }));
    assert.equal(store.lastReason(), 'applied');
    assert.equal(store.sessionPendingAction('sess-a'), null, 'the store keeps working after errors');
    store.free();
  });
});
