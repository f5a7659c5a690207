// task-projection/connect against a scripted WebSocket and a manual clock: frames reach the store,
// every server.hello (first connection, reconnection, restarted server) asks for a refetch of
// everything and session.created for the task's sessions, a malformed frame goes to onError with
// the store unchanged, closes reconnect with exponential backoff (reset once a connection opens),
// close() stops for good, and bad arguments are typed errors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { connect } from 'task-projection/connect';

/** A WebSocket whose events the test fires; every instance is recorded. */
function fakeSockets() {
  const made = [];
  class FakeSocket {
    constructor(url) {
      this.url = url;
      this.closed = null;
      this.onopen = this.onmessage = this.onclose = this.onerror = null;
      made.push(this);
    }
    open() { this.onopen?.({}); }
    send(frame) { this.onmessage?.({ data: typeof frame === 'string' ? frame : JSON.stringify(frame) }); }
    drop(code = 1006) { this.onclose?.({ code }); }
    close(code) { this.closed = code; }
  }
  return { made, FakeSocket };
}

/** A clock the test advances by hand. */
function manualClock() {
  let now = 0;
  let next = 1;
  const timers = new Map();
  return {
    setTimeout(f, ms) { const id = next++; timers.set(id, { at: now + ms, f }); return id; },
    clearTimeout(id) { timers.delete(id); },
    advance(ms) {
      now += ms;
      for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
        if (t.at <= now) { timers.delete(id); t.f(); }
      }
    },
    pending: () => timers.size,
  };
}

const T = 'task-1';
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const hello = (epoch) => ({ type: 'server.hello', payload: { epoch, started_at: at(0) } });
const question = {
  type: 'session.message.added',
  payload: {
    message_id: 'q1', session_id: 's1', task_id: T, turn_id: 't1', type: 'clarification_request', author_type: 'agent',
    metadata: { pending_id: 'p1', question_total: 1, status: 'pending' }, created_at: at(2), updated_at: at(2),
    pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 5 },
  },
};

function setup(extra = {}) {
  const store = new ProjectionStore();
  store.applySessionList(T, [{ id: 's1', task_id: T, state: 'RUNNING', pending_action: null, pending_action_revision: { epoch: '1', sequence: 1 } }]);
  store.applyTurnList('s1', [{ id: 't1', session_id: 's1', task_id: T, started_at: at(1), created_at: at(1), updated_at: at(1), completed_at: null, metadata: {} }]);
  const { made, FakeSocket } = fakeSockets();
  const clock = manualClock();
  const refetches = [];
  const errors = [];
  const statuses = [];
  const link = connect('ws://server/api/v1/ws', store, {
    refetch: (r) => refetches.push(r),
    onError: (e) => errors.push(e),
    onStatus: (s, d) => statuses.push(d === undefined ? s : `${s}:${d}`),
    WebSocket: FakeSocket, setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout, random: () => 1,
    ...extra,
  });
  return { store, made, clock, refetches, errors, statuses, link };
}

describe('connect', () => {
  test('frames reach the store; every hello asks for everything; session.created for the task', () => {
    const { store, made, refetches, link } = setup();
    assert.equal(made.length, 1);
    assert.equal(made[0].url, 'ws://server/api/v1/ws');
    made[0].open();
    made[0].send(hello('7'));
    assert.deepEqual(refetches, [{ what: 'all', reason: 'first_hello' }]);
    made[0].send(question);
    assert.equal(store.sessionPendingAction('s1'), 'clarification');
    made[0].send(JSON.stringify({ type: 'session.created', payload: { id: 's2', task_id: T, state: 'RUNNING', updated_at: at(3) } }));
    assert.deepEqual(refetches.at(-1), { what: 'sessions', taskId: T, reason: refetches.at(-1).reason });
    made[0].send({ type: 'task.stalled', payload: { task_id: T } });
    assert.equal(refetches.length, 2, 'nothing to refetch for other frames');
    link.close();
    store.free();
  });

  test('onFrame sees each frame the store took, with its outcome', () => {
    const frames = [];
    const { made, errors, link, store } = setup({ onFrame: (outcome, data) => frames.push([outcome.type, outcome.applied, typeof data]) });
    made[0].open();
    made[0].send(hello('1'));
    made[0].send(question);
    made[0].send('{"type": 5}'); // rejected: not seen
    made[0].send({ type: 'task.stalled', payload: {} });
    assert.deepEqual(frames, [['server.hello', true, 'string'], ['session.message.added', true, 'string'], ['task.stalled', false, 'string']]);
    assert.equal(errors.length, 1);
    link.close();
    store.free();
  });

  test('a malformed frame goes to onError and changes nothing', () => {
    const { store, made, errors, link } = setup();
    made[0].open();
    const digest = store.digest();
    made[0].send('{"type": "session.message.added", "payload": {"message_id": 5}}');
    made[0].send('not json');
    assert.equal(errors.length, 2);
    assert.ok(errors.every((e) => e.name === 'TaskProjectionError'), errors.map(String).join('; '));
    assert.equal(store.digest(), digest);
    link.close();
    store.free();
  });

  test('reconnects with exponential backoff, reset by an open connection; a reconnection refetches', () => {
    const { made, clock, refetches, statuses, link } = setup({ minDelayMs: 100, maxDelayMs: 1000 });
    made[0].open();
    made[0].send(hello('7'));
    made[0].drop(1013); // closed for lag
    assert.equal(made.length, 1, 'no reconnection before the delay');
    clock.advance(99);
    assert.equal(made.length, 1);
    clock.advance(1);
    assert.equal(made.length, 2, 'reconnected after 100 ms');
    made[1].drop(); // fails again: 200 ms
    clock.advance(199);
    assert.equal(made.length, 2);
    clock.advance(1);
    assert.equal(made.length, 3);
    for (let i = 3; i < 8; i++) {
      made[i - 1].drop();
      clock.advance(1000); // capped at maxDelayMs
      assert.equal(made.length, i + 1, `attempt ${i}`);
    }
    assert.deepEqual(statuses.filter((s) => s.startsWith('waiting')), ['waiting:100', 'waiting:200', 'waiting:400', 'waiting:800', 'waiting:1000', 'waiting:1000', 'waiting:1000']);
    const last = made.at(-1);
    last.open();
    last.send(hello('7')); // the same server run: events may have been lost meanwhile
    assert.deepEqual(refetches.at(-1), { what: 'all', reason: 'same_epoch' });
    last.drop();
    assert.equal(statuses.at(-1), 'waiting:100', 'an open connection resets the backoff');
    clock.advance(100);
    made.at(-1).open();
    made.at(-1).send(hello('8'));
    assert.deepEqual(refetches.at(-1), { what: 'all', reason: 'new_epoch' });
    link.close();
  });

  test('close() closes the socket and stops reconnecting; frames of an old socket are ignored', () => {
    const { store, made, clock, link } = setup();
    made[0].open();
    const first = made[0];
    first.drop();
    link.close();
    clock.advance(60_000);
    assert.equal(made.length, 1, 'no reconnection after close()');
    const { made: made2, link: link2, store: store2 } = setup();
    made2[0].open();
    link2.close();
    assert.equal(made2[0].closed, 1000);
    made2[0].send(question); // a late frame of the closed socket
    assert.equal(store2.sessionPendingAction('s1'), null);
    link2.close(); // idempotent
    store.free();
    store2.free();
  });

  test('a refetch that throws or rejects goes to onError', async () => {
    const { made, errors, link } = setup({ refetch: () => Promise.reject(new Error('offline')) });
    made[0].open();
    made[0].send(hello('1'));
    await new Promise((r) => setImmediate(r));
    assert.equal(errors.length, 1);
    assert.equal(errors[0].message, 'offline');
    link.close();
  });

  test('bad arguments are typed errors', () => {
    const store = new ProjectionStore();
    const typed = (field) => (e) => e.name === 'TaskProjectionError' && e.code === 'invalid_type' && e.field === field;
    const FakeSocket = fakeSockets().FakeSocket;
    assert.throws(() => connect(42, store, { refetch() {}, WebSocket: FakeSocket }), typed('url'));
    assert.throws(() => connect('ws://x', {}, { refetch() {}, WebSocket: FakeSocket }), typed('store'));
    assert.throws(() => connect('ws://x', store, { WebSocket: FakeSocket }), typed('options.refetch'));
    assert.throws(() => connect('ws://x', store, { refetch() {}, WebSocket: 'no' }), typed('options.WebSocket'));
    store.free();
  });
});
