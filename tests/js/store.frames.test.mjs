// store.applyFrame: the reference server's WebSocket frames (docs/server-api.md) routed to the
// apply calls their types name. Checked against the same inputs applied by hand (same state, same
// answers), for objects and JSON text; what each outcome says (applied, reason, refetch, the
// frame's stream offset; a hello's stream, offset and whether it resumed); unknown and
// informational types reported without a change; malformed frames, offsets and payloads as typed
// errors with nothing changed; every caller value read once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { stateOf } from './build.mjs';

const T = 'task-1';
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence, epoch = '1') => ({ epoch, sequence });
const session = (id, state, extra = {}) => ({
  id, task_id: T, state, started_at: at(0), updated_at: at(0), is_primary: id === 'sess-a', pending_action: null,
  pending_action_revision: rev(1), ...extra,
});
const turn = (id, sessionId, s = 0) => ({
  id, session_id: sessionId, task_id: T, started_at: at(s), created_at: at(s), updated_at: at(s), completed_at: null, metadata: {},
});
const message = (id, sessionId, s, type = 'message', metadata = {}, projection = {}) => ({
  message_id: id, session_id: sessionId, task_id: T, turn_id: `turn-${sessionId}`, author_type: 'agent', type,
  metadata, created_at: at(s), updated_at: at(s), content: 'x', ...projection,
});
const question = (id, sessionId, s, sequence, status = 'pending') =>
  message(id, sessionId, s, 'clarification_request', { pending_id: `p-${id}`, question_total: 1, status },
    { pending_action: status === 'pending' ? 'clarification' : null, pending_action_revision: rev(sequence) });

/** A store holding task-1 with two running sessions and their turns (as after the REST fetch). */
function loaded() {
  const store = new ProjectionStore();
  store.applyTaskSnapshot(store.beginTaskFetch(), [{ id: T, status_summary: null }]);
  store.applySessionList(T, [session('sess-a', 'RUNNING'), session('sess-b', 'RUNNING')]);
  store.applyTurnList('sess-a', [turn('turn-sess-a', 'sess-a')]);
  store.applyTurnList('sess-b', [turn('turn-sess-b', 'sess-b')]);
  return store;
}

/** Frames of every type the store applies, each with the direct call it stands for. */
const FRAMES = [
  [{ type: 'session.message.added', payload: question('q1', 'sess-a', 1, 2) }, (s, p) => s.applyMessageEvent('added', p)],
  [{ type: 'session.message.added', payload: message('m1', 'sess-b', 2) }, (s, p) => s.applyMessageEvent('added', p)],
  [{ type: 'session.message.updated', payload: question('q1', 'sess-a', 1, 3, 'answered') }, (s, p) => s.applyMessageEvent('updated', p)],
  [{ type: 'session.message.deleted', payload: { message_id: 'm1', session_id: 'sess-b', task_id: T } }, (s, p) => s.applyMessageEvent('deleted', p)],
  [{ type: 'turn.completed', payload: { ...turn('turn-sess-b', 'sess-b'), completed_at: at(5), updated_at: at(5) } }, (s, p) => s.applyTurnEvent(p)],
  [{ type: 'turn.started', payload: turn('turn-sess-b-2', 'sess-b', 6) }, (s, p) => s.applyTurnEvent(p)],
  [{
    type: 'session.state_changed',
    payload: { session_id: 'sess-b', task_id: T, workspace_id: 'w', state: 'WAITING_FOR_INPUT', previous_state: 'RUNNING', reason: 'r', updated_at: at(7), pending_action: 'permission', pending_action_revision: rev(4) },
  }, (s, p) => s.applySessionEvent(p)],
  [{ type: 'session.created', payload: session('sess-c', 'RUNNING', { is_primary: false, updated_at: at(8) }) }, (s, p) => s.applySessionEvent(p)],
  [{ type: 'task.status_summary.updated', payload: { task_id: T, workspace_id: 'w', status_summary: { revision: 3, pending_action: 'permission' } } }, (s, p) => s.applyStatusSummaryEvent(p)],
  [{ type: 'task.updated', payload: { id: 'task-2', status_summary: { revision: 1, pending_action: null } } }, (s, p) => s.applyTaskUpdated(p)],
  [{ type: 'task.deleted', payload: { task_id: 'task-2' } }, (s) => s.removeTask('task-2')],
];

/** Every answer the store gives about the fixture's tasks and sessions. */
function answers(store) {
  const out = {};
  for (const id of ['sess-a', 'sess-b', 'sess-c']) {
    out[id] = [store.sessionPendingAction(id), store.currentTurnId(id), store.pendingClarification(id), store.hiddenMessageIds(id), store.hasPendingPermission(id)];
  }
  for (const id of [T, 'task-2']) out[id] = [store.taskPendingAction(id), store.taskStatusSummary(id), store.pendingOwner(id)];
  return out;
}

const typed = (code, field) => (e) => e.name === 'TaskProjectionError' && e.code === code && (field === undefined || e.field === field);

describe('applyFrame routes each frame type to its apply call', () => {
  for (const text of [false, true]) {
    test(`every frame type, ${text ? 'as JSON text' : 'as objects'}: the state and answers of the direct calls`, () => {
      const framed = loaded();
      const direct = loaded();
      for (const [frame, apply] of FRAMES) {
        const outcome = framed.applyFrame(text ? JSON.stringify(frame) : frame);
        apply(direct, frame.payload);
        assert.equal(outcome.type, frame.type);
        assert.equal(outcome.applied, true, frame.type);
        assert.equal(outcome.reason, direct.lastReason(), `${frame.type}: the apply call's reason`);
        assert.equal(framed.lastReason(), direct.lastReason());
        assert.equal(stateOf(framed, { byValue: true }), stateOf(direct, { byValue: true }), `state after ${frame.type}`);
      }
      assert.deepEqual(answers(framed), answers(direct));
      // The fixture's frames changed answers (a test over no-ops would prove nothing).
      assert.equal(framed.sessionPendingAction('sess-b'), 'permission');
      assert.equal(framed.taskPendingAction('task-2'), null);
      framed.free();
      direct.free();
    });
  }

  test('outcomes: what applied, and what to refetch', () => {
    const store = loaded();
    assert.deepEqual(store.applyFrame(FRAMES[0][0]), { type: 'session.message.added', applied: true, reason: 'applied', refetch: null, offset: null });
    const created = store.applyFrame({ type: 'session.created', payload: session('sess-c', 'RUNNING') });
    assert.deepEqual(created, { type: 'session.created', applied: true, reason: created.reason, refetch: 'sessions', offset: null, taskId: T });
    const stale = store.applyFrame({ type: 'session.message.updated', payload: question('q1', 'sess-a', 1, 1, 'answered') });
    assert.equal(stale.applied, true);
    assert.equal(stale.reason, 'older_revision_rejected', 'the apply call judged it; the outcome says so');
    assert.equal(store.sessionPendingAction('sess-a'), 'clarification');
    store.free();
  });

  test('server.hello of an old server (no resume fields): refetch everything; the reason tells first, same and new epochs', () => {
    const store = loaded();
    const hello = (epoch) => store.applyFrame({ type: 'server.hello', payload: { epoch, started_at: at(0) } });
    const version = store.version();
    const digest = stateOf(store, { byValue: true });
    const outcome = (reason) => ({ type: 'server.hello', applied: true, reason, refetch: 'all', offset: null, stream: null });
    assert.deepEqual(hello('5'), outcome('first_hello'));
    assert.deepEqual(hello('5'), outcome('same_epoch'), 'a reconnection: events may be lost');
    assert.equal(store.lastReason(), 'same_epoch');
    assert.deepEqual(hello('6'), outcome('new_epoch'));
    assert.deepEqual(hello('5'), outcome('new_epoch'), 'epochs are not ordered');
    assert.deepEqual(hello('5'), outcome('same_epoch'));
    assert.equal(store.version(), version, 'a hello changes no answer');
    assert.equal(stateOf(store, { byValue: true }), digest);
    const other = new ProjectionStore();
    assert.equal(other.applyFrame('{"type":"server.hello","payload":{"epoch":"5"}}').reason, 'first_hello', 'each store sees its own first hello');
    other.free();
    store.free();
  });

  test('server.hello with the resume fields: a resumed hello asks no refetch and still updates the epoch', () => {
    const store = loaded();
    const version = store.version();
    const digest = stateOf(store, { byValue: true });
    const hello = (payload) => store.applyFrame({ type: 'server.hello', payload: { started_at: at(0), ...payload } });
    assert.deepEqual(hello({ epoch: '5', stream: 'st-1', offset: 40, resumed: false }),
      { type: 'server.hello', applied: true, reason: 'first_hello', refetch: 'all', offset: 40, stream: 'st-1' });
    assert.deepEqual(hello({ epoch: '5', stream: 'st-1', offset: 52, resumed: true }),
      { type: 'server.hello', applied: true, reason: 'resumed', refetch: null, offset: 52, stream: 'st-1' });
    assert.equal(store.lastReason(), 'resumed');
    assert.equal(store.lastApplyReason(), 'resumed');
    // Resumed across a restart (a stream that outlives the run): no refetch, and the new epoch is held.
    assert.deepEqual(hello({ epoch: '6', stream: 'st-1', offset: 60, resumed: true }).refetch, null);
    assert.equal(hello({ epoch: '6', stream: 'st-1', offset: 61 }).reason, 'same_epoch', 'the resumed hello\'s epoch was remembered; no resumed: not resumed');
    assert.deepEqual(hello({ epoch: '6', stream: 'st-2', offset: 0, resumed: false }),
      { type: 'server.hello', applied: true, reason: 'same_epoch', refetch: 'all', offset: 0, stream: 'st-2' });
    // null is absent: an old server's hello.
    assert.deepEqual(hello({ epoch: '7', stream: null, offset: null, resumed: null }),
      { type: 'server.hello', applied: true, reason: 'new_epoch', refetch: 'all', offset: null, stream: null });
    assert.equal(hello({ epoch: '7', offset: -0 }).offset, 0, '-0 is 0');
    assert.equal(Object.is(hello({ epoch: '7', offset: -0 }).offset, 0), true);
    assert.deepEqual(hello({ epoch: '7', offset: 2 ** 53 - 1 }).offset, 2 ** 53 - 1);
    // A frame-level offset on a hello is validated; the outcome's offset is the payload's.
    assert.equal(store.applyFrame({ type: 'server.hello', offset: 3, payload: { epoch: '7', offset: 9 } }).offset, 9);
    assert.equal(store.applyFrame('{"type":"server.hello","payload":{"epoch":"7","stream":"s","offset":12,"resumed":true}}').reason, 'resumed');
    assert.equal(store.version(), version, 'a hello changes no answer');
    assert.equal(stateOf(store, { byValue: true }), digest);
    store.free();
  });

  for (const text of [false, true]) {
    test(`every frame's outcome carries its stream offset, ${text ? 'as JSON text' : 'as objects'}`, () => {
      const framed = loaded();
      const direct = loaded();
      let offset = 100;
      for (const [frame, apply] of FRAMES) {
        offset += 1;
        const withOffset = { ...frame, offset };
        const outcome = framed.applyFrame(text ? JSON.stringify(withOffset) : withOffset);
        apply(direct, frame.payload);
        assert.equal(outcome.offset, offset, frame.type);
        assert.equal(outcome.reason, direct.lastReason(), frame.type);
        assert.equal(stateOf(framed, { byValue: true }), stateOf(direct, { byValue: true }), `state after ${frame.type}`);
      }
      assert.equal(framed.applyFrame({ ...FRAMES[1][0], offset: null }).offset, null, 'null is none');
      assert.deepEqual(framed.applyFrame({ type: 'task.stalled', payload: {}, offset: 7 }), { type: 'task.stalled', applied: false, reason: 'not_stored', refetch: null, offset: 7 });
      assert.deepEqual(framed.applyFrame({ type: 'agent.typing', payload: {}, offset: 0 }), { type: 'agent.typing', applied: false, reason: 'unknown_frame_type', refetch: null, offset: 0 });
      assert.equal(Object.is(framed.applyFrame({ type: 'agent.typing', offset: -0 }).offset, 0), true, '-0 is 0');
      assert.equal(framed.applyFrame({ type: 'agent.typing', offset: 2 ** 53 - 1 }).offset, 2 ** 53 - 1);
      framed.free();
      direct.free();
    });
  }

  test('types the store keeps nothing of are reported, not thrown, and change nothing', () => {
    const store = loaded();
    const digest = stateOf(store, { byValue: true });
    const version = store.version();
    const stalled = { type: 'task.stalled', payload: { task_id: T, workspace_id: 'w', sessions: [{ session_id: 'sess-a', silence_seconds: 90 }], threshold_seconds: 60 } };
    assert.deepEqual(store.applyFrame(stalled), { type: 'task.stalled', applied: false, reason: 'not_stored', refetch: null, offset: null });
    for (const type of ['task.archived', '', 'session.message.added.extra', '__proto__', 'constructor', 'toString']) {
      assert.deepEqual(store.applyFrame({ type, payload: { whatever: 1 } }), { type, applied: false, reason: 'unknown_frame_type', refetch: null, offset: null }, type);
    }
    assert.equal(stateOf(store, { byValue: true }), digest);
    assert.equal(store.version(), version);
    store.free();
  });
});

describe('applyFrame: bad frames are typed errors and change nothing', () => {
  const cases = [
    ['text that is not JSON', '{"type":', 'invalid_value', 'frame'],
    ['a number', 42, 'invalid_type', 'frame'],
    ['null', null, 'invalid_type', 'frame'],
    ['an array', [{ type: 'server.hello' }], 'invalid_type', 'frame'],
    ['no type', { payload: {} }, 'invalid_type', 'frame.type'],
    ['a type that is not a string', { type: 7, payload: {} }, 'invalid_type', 'frame.type'],
    ['a message payload that is not an object', { type: 'session.message.added', payload: 'x' }, 'invalid_type'],
    ['a message id that is not a string', { type: 'session.message.added', payload: { ...message('m9', 'sess-a', 9), message_id: 9 } }, 'invalid_type'],
    ['a hello without an epoch', { type: 'server.hello', payload: { started_at: at(0) } }, 'invalid_type', 'payload.epoch'],
    ['a hello without a payload', { type: 'server.hello' }, 'invalid_type', 'payload'],
    ['a session.created with a lone surrogate', { type: 'session.created', payload: session('s\uD800', 'RUNNING') }, 'invalid_value', 'payload.id'],
    ['a task.deleted without a task id', { type: 'task.deleted', payload: {} }, 'invalid_type'],
    // Found by the hostile catalogue (tests/js/hostile.mjs): a TypeError before the fix.
    ['a task.deleted with a null payload', { type: 'task.deleted', payload: null }, 'invalid_type', 'payload'],
    ['a task.deleted without a payload', { type: 'task.deleted' }, 'invalid_type', 'payload'],
    ['a malformed revision', { type: 'session.state_changed', payload: { session_id: 'sess-a', task_id: T, state: 'IDLE', pending_action: null, pending_action_revision: { epoch: '1', sequence: -1 } } }, 'invalid_revision', 'payload.pending_action_revision.sequence'],
    // The resume fields of a hello: optional, but of their type when present (nothing changes,
    // not even the epoch held: the hello after each case is still the same epoch).
    ['a hello whose resumed is not a boolean', { type: 'server.hello', payload: { epoch: '2', resumed: 'true' } }, 'invalid_type', 'payload.resumed'],
    ['a hello whose resumed is a number', { type: 'server.hello', payload: { epoch: '2', resumed: 1 } }, 'invalid_type', 'payload.resumed'],
    ['a hello whose stream is not a string', { type: 'server.hello', payload: { epoch: '2', stream: 5, resumed: true } }, 'invalid_type', 'payload.stream'],
    ['a hello whose stream has a lone surrogate', { type: 'server.hello', payload: { epoch: '2', stream: 's\uD800' } }, 'invalid_value', 'payload.stream'],
    ['a hello with a negative offset', { type: 'server.hello', payload: { epoch: '2', stream: 's', offset: -1, resumed: true } }, 'invalid_type', 'payload.offset'],
    ['a hello with a fractional offset', { type: 'server.hello', payload: { epoch: '2', offset: 1.5 } }, 'invalid_type', 'payload.offset'],
    ['a hello with an unsafe offset', { type: 'server.hello', payload: { epoch: '2', offset: 2 ** 53 } }, 'invalid_type', 'payload.offset'],
    ['a hello with a BigInt offset', { type: 'server.hello', payload: { epoch: '2', offset: 5n } }, 'invalid_type', 'payload.offset'],
    ['a hello with a text offset', { type: 'server.hello', payload: { epoch: '2', offset: '5' } }, 'invalid_type', 'payload.offset'],
    // A frame's offset: a non-negative safe integer when present; nothing of the frame is applied.
    ['a message frame with a negative offset', { ...FRAMES[0][0], offset: -1 }, 'invalid_type', 'frame.offset'],
    ['a message frame with a fractional offset', { ...FRAMES[0][0], offset: 2.5 }, 'invalid_type', 'frame.offset'],
    ['a message frame with an unsafe offset', { ...FRAMES[0][0], offset: 2 ** 53 }, 'invalid_type', 'frame.offset'],
    ['a message frame with a text offset', { ...FRAMES[0][0], offset: '12' }, 'invalid_type', 'frame.offset'],
    ['a message frame with a BigInt offset', { ...FRAMES[0][0], offset: 12n }, 'invalid_type', 'frame.offset'],
    ['a message frame with NaN as its offset', { ...FRAMES[0][0], offset: NaN }, 'invalid_type', 'frame.offset'],
    ['a message frame with an object offset', { ...FRAMES[0][0], offset: { value: 1 } }, 'invalid_type', 'frame.offset'],
    ['a JSON message frame with a negative offset', JSON.stringify({ ...FRAMES[0][0], offset: -3 }), 'invalid_type', 'frame.offset'],
    ['a session.created with a bad offset', { type: 'session.created', payload: session('sess-c', 'RUNNING'), offset: 1.25 }, 'invalid_type', 'frame.offset'],
    ['a task.deleted with a bad offset', { ...FRAMES[10][0], offset: -5 }, 'invalid_type', 'frame.offset'],
    ['a resumed hello with a bad frame offset', { type: 'server.hello', payload: { epoch: '2', resumed: true }, offset: 'x' }, 'invalid_type', 'frame.offset'],
    ['an unknown frame type with a bad offset', { type: 'agent.typing', payload: {}, offset: true }, 'invalid_type', 'frame.offset'],
  ];
  for (const [name, frame, code, field] of cases) {
    test(name, () => {
      const store = loaded();
      store.applyFrame({ type: 'server.hello', payload: { epoch: '1' } });
      const digest = stateOf(store, { byValue: true });
      assert.throws(() => store.applyFrame(frame), typed(code, field));
      assert.equal(stateOf(store, { byValue: true }), digest);
      assert.equal(store.applyFrame({ type: 'server.hello', payload: { epoch: '1' } }).reason, 'same_epoch', 'the held epoch too');
      store.free();
    });
  }

  test("a caller's getter that throws becomes unreadable_value at its field", () => {
    const store = loaded();
    const frame = Object.defineProperty({ payload: {} }, 'type', { get() { throw new Error('boom'); } });
    assert.throws(() => store.applyFrame(frame), (e) => typed('unreadable_value', 'frame.type')(e) && e.cause.message === 'boom');
    const offset = Object.defineProperty({ ...FRAMES[0][0] }, 'offset', { get() { throw new Error('late'); } });
    const digest = stateOf(store, { byValue: true });
    assert.throws(() => store.applyFrame(offset), (e) => typed('unreadable_value', 'frame.offset')(e) && e.cause.message === 'late');
    assert.equal(stateOf(store, { byValue: true }), digest, 'nothing applied');
    const resumed = Object.defineProperty({ epoch: '1' }, 'resumed', { get() { throw new Error('no'); } });
    assert.throws(() => store.applyFrame({ type: 'server.hello', payload: resumed }), typed('unreadable_value', 'payload.resumed'));
    const payload = Object.defineProperty({}, 'epoch', { get() { throw new Error('no'); } });
    assert.throws(() => store.applyFrame({ type: 'server.hello', payload }), typed('unreadable_value', 'payload.epoch'));
    store.free();
  });

  test('after dispose it throws disposed', () => {
    const store = loaded();
    store.dispose();
    assert.throws(() => store.applyFrame({ type: 'server.hello', payload: { epoch: '1' } }), typed('disposed'));
  });
});

test('applyFrame reads the frame and each payload key once', () => {
  // Reads counted by path (`payload.metadata.status`), every nested object wrapped too.
  const counted = (target, reads, at = '') => new Proxy(target, {
    get(t, key) {
      const path = typeof key === 'string' ? `${at}${key}` : String(key);
      reads.set(path, (reads.get(path) ?? 0) + 1);
      const v = t[key];
      return v !== null && typeof v === 'object' ? counted(v, reads, `${path}.`) : v;
    },
  });
  const hello = { type: 'server.hello', payload: { epoch: '1', started_at: at(0), stream: 's', offset: 4, resumed: true } };
  for (const [frame] of [...FRAMES, [hello]]) {
    const store = loaded();
    const reads = new Map();
    store.applyFrame(counted({ ...frame, offset: 3 }, reads));
    for (const [key, n] of reads) assert.equal(n, 1, `${frame.type}: ${key} read ${n} times`);
    assert.equal(reads.get('type'), 1);
    assert.equal(reads.get('payload'), 1);
    assert.equal(reads.get('offset'), 1);
    store.free();
  }
});
