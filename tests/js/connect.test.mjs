// task-projection/connect against a scripted WebSocket and a manual clock: frames reach the store,
// every server.hello that did not resume (first connection, reconnection, restarted server, an old
// server) asks for a refetch of everything and session.created for the task's sessions, a
// malformed frame goes to onError with the store unchanged, closes reconnect with exponential
// backoff (reset once a connection opens), close() stops for good, and bad arguments are typed
// errors. Resuming: a reconnection asks for the stream after the last offset the store took
// (`since`, `stream` in the URL, its other parameters kept), a resumed hello asks no refetch, and
// it does not ask to resume without a stream, after a failed or unfinished refetch, or past a
// frame the store rejected. The connection's state: `state()` and `subscribe()` (what the devtools
// panel shows) follow the statuses.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { connect } from 'task-projection/connect';
import { stateOf } from './build.mjs';

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
/** A hello of a server that can resume (`stream`, `offset`, `resumed`). */
const helloAt = (stream, offset, resumed, epoch = '7') => ({ type: 'server.hello', payload: { epoch, started_at: at(0), stream, offset, resumed } });
/** A message event at stream offset `offset` (a new message each time). */
const messageAt = (offset) => ({
  type: 'session.message.added',
  offset,
  payload: {
    message_id: `m${offset}`, session_id: 's1', task_id: T, turn_id: 't1', type: 'message', author_type: 'agent',
    metadata: {}, created_at: at(3), updated_at: at(3),
  },
});
/** Lets the refetches' promises settle. */
const settle = () => new Promise((r) => setImmediate(r));
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
    const digest = stateOf(store, { byValue: true });
    made[0].send('{"type": "session.message.added", "payload": {"message_id": 5}}');
    made[0].send('not json');
    assert.equal(errors.length, 2);
    assert.ok(errors.every((e) => e.name === 'TaskProjectionError'), errors.map(String).join('; '));
    assert.equal(stateOf(store, { byValue: true }), digest);
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

  test('a handshake that never ends is given up after openTimeoutMs and retried; an opened socket is not', () => {
    const { made, clock, statuses, link } = setup({ minDelayMs: 100, maxDelayMs: 1000, openTimeoutMs: 5000 });
    clock.advance(4999);
    assert.equal(made[0].closed, null, 'still waiting for the handshake');
    clock.advance(1);
    assert.notEqual(made[0].closed, null, 'the hanging socket is closed');
    assert.deepEqual(statuses.slice(0, 3), ['connecting', 'closed:timeout', 'waiting:100']);
    made[0].drop(); // its late close event changes nothing
    assert.equal(statuses.length, 3);
    clock.advance(100);
    assert.equal(made.length, 2, 'retried after the backoff');
    made[1].open();
    clock.advance(60_000);
    assert.equal(made[1].closed, null, 'an open socket has no timeout');
    assert.equal(made.length, 2);
    link.close();
    assert.equal(clock.pending(), 0, 'close() leaves no timer behind');
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
    const link = connect('ws://x', store, { refetch() {}, WebSocket: FakeSocket });
    assert.throws(() => link.subscribe('no'), typed('listener'));
    link.close();
    store.free();
  });

  test('state() follows the statuses; subscribe() is told each change until unsubscribed or closed', () => {
    const { made, clock, statuses, link, store } = setup({ minDelayMs: 100, maxDelayMs: 1000, openTimeoutMs: 5000 });
    assert.equal(link.state(), 'connecting', 'a socket is being opened');
    const told = [];
    const stop = link.subscribe((state, detail) => told.push(detail === undefined ? state : `${state}:${detail}`));
    const second = [];
    link.subscribe((state) => second.push(state));
    made[0].open();
    assert.equal(link.state(), 'open');
    made[0].drop(1013);
    assert.equal(link.state(), 'waiting', 'a dropped connection waits for the next attempt');
    clock.advance(100);
    assert.equal(link.state(), 'connecting');
    clock.advance(5000); // the handshake times out
    assert.equal(link.state(), 'waiting');
    assert.deepEqual(told, ['open', 'closed:1013', 'waiting:100', 'connecting', 'closed:timeout', 'waiting:200']);
    assert.deepEqual(told, statuses.slice(1), 'the listener hears what onStatus hears, in the same order');
    stop();
    stop(); // twice: no-op
    clock.advance(200);
    made.at(-1).open();
    assert.equal(link.state(), 'open');
    assert.equal(told.length, 6, 'an unsubscribed listener hears nothing more');
    assert.deepEqual(second.slice(-2), ['connecting', 'open'], 'the other listener still hears');
    link.close();
    assert.equal(link.state(), 'closed');
    assert.equal(second.at(-1), 'closed', 'close() is told');
    const late = [];
    link.subscribe((state) => late.push(state));
    clock.advance(60_000);
    assert.deepEqual(late, [], 'nothing after close()');
    assert.equal(link.state(), 'closed');
    store.free();
  });

  test('a listener that throws is reported; the others and onStatus still hear', () => {
    const reported = [];
    const original = globalThis.reportError;
    globalThis.reportError = (e) => reported.push(e.message);
    try {
      const { made, statuses, link, store } = setup();
      const heard = [];
      link.subscribe(() => { throw new Error('listener broke'); });
      link.subscribe((state) => heard.push(state));
      made[0].open();
      assert.deepEqual(reported, ['listener broke']);
      assert.deepEqual(heard, ['open']);
      assert.equal(statuses.at(-1), 'open');
      link.close();
      store.free();
    } finally {
      globalThis.reportError = original;
    }
  });
});

describe('connect: resuming the stream', () => {
  /** Closes the current socket and lets the backoff open the next one; returns it. */
  function reconnect(made, clock) {
    made.at(-1).drop();
    clock.advance(10_000);
    const next = made.at(-1);
    next.open();
    return next;
  }

  test('a reconnection asks for the stream after the last offset taken; a resumed hello asks no refetch', async () => {
    const { store, made, clock, refetches, link } = setup();
    assert.equal(made[0].url, 'ws://server/api/v1/ws', 'the first connection: the URL as given');
    made[0].open();
    made[0].send(helloAt('st-1', 40, false));
    assert.deepEqual(refetches, [{ what: 'all', reason: 'first_hello' }]);
    made[0].send(messageAt(41));
    made[0].send(messageAt(42));
    await settle();
    let next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=42&stream=st-1');
    const held = stateOf(store, { byValue: true });
    next.send(helloAt('st-1', 45, true));
    assert.equal(refetches.length, 1, 'resumed: nothing to refetch');
    assert.equal(stateOf(store, { byValue: true }), held, 'a hello changes nothing');
    // The server replays 43..45, then live events; the connection drops in the middle of it.
    next.send(messageAt(43));
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=43&stream=st-1', 'from the last frame taken, not the hello\'s offset');
    next.send(helloAt('st-1', 45, true));
    for (const offset of [44, 45, 46]) next.send(messageAt(offset));
    assert.equal(store.sessionPendingAction('s1'), null);
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=46&stream=st-1');
    // A resumed hello right after connecting, then nothing: the same place again.
    next.send(helloAt('st-1', 46, true));
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=46&stream=st-1');
    assert.equal(refetches.length, 1);
    link.close();
    store.free();
  });

  test('a hello that is not resumed refetches, and the stream continues from its offset', async () => {
    const { store, made, clock, refetches, link } = setup();
    made[0].open();
    made[0].send(helloAt('st-1', 10, false));
    made[0].send(messageAt(11));
    await settle();
    let next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=11&stream=st-1');
    // The server could not resume (the offset is gone, or another stream): refetch everything.
    next.send(helloAt('st-2', 3, false, '8'));
    assert.deepEqual(refetches.at(-1), { what: 'all', reason: 'new_epoch' });
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=3&stream=st-2', 'the new stream, from the hello\'s offset the refetch covers');
    next.send(helloAt('st-2', 3, false, '8')); // the same epoch, not resumed
    assert.deepEqual(refetches.at(-1), { what: 'all', reason: 'same_epoch' });
    assert.equal(refetches.length, 3);
    link.close();
    store.free();
  });

  test('offsets are tracked across frames: frames without one keep the place, every taken frame moves it', async () => {
    const { store, made, clock, refetches, link } = setup();
    made[0].open();
    made[0].send(helloAt('st-1', 5, false));
    made[0].send(messageAt(6));
    made[0].send({ ...messageAt(7), offset: undefined }); // a replayed frame of the simulator: no offset
    made[0].send(JSON.stringify({ type: 'task.stalled', payload: { task_id: T }, offset: 8 })); // not stored, still taken
    made[0].send({ type: 'agent.typing', payload: {}, offset: 9 }); // unknown type, still taken
    made[0].send({ ...messageAt(10), offset: null });
    made[0].send(JSON.stringify({ type: 'session.created', payload: { id: 's2', task_id: T, state: 'RUNNING', updated_at: at(3) }, offset: 11 }));
    assert.deepEqual(refetches.at(-1), { what: 'sessions', taskId: T, reason: refetches.at(-1).reason });
    await settle();
    const next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=11&stream=st-1');
    link.close();
    store.free();
  });

  test('bad offsets are rejected: onError, nothing applied, the place in the stream unchanged', async () => {
    const { store, made, clock, errors, link } = setup();
    made[0].open();
    made[0].send(helloAt('st-1', 20, false));
    made[0].send(messageAt(21));
    await settle();
    const digest = stateOf(store, { byValue: true });
    const bad = [-1, 22.5, 2 ** 53, '23', true, { at: 23 }];
    for (const offset of bad) made[0].send({ ...messageAt(23), offset });
    assert.equal(errors.length, bad.length);
    for (const e of errors) assert.ok(e.name === 'TaskProjectionError' && e.code === 'invalid_type' && e.field === 'frame.offset', String(e));
    assert.equal(stateOf(store, { byValue: true }), digest, 'no message of a frame with a bad offset was applied');
    made[0].send(helloAt('st-1', -4, true)); // a hello with a bad payload offset: rejected whole
    assert.equal(errors.at(-1).field, 'payload.offset');
    let next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=21&stream=st-1', 'the last offset taken');
    next.send(helloAt('st-1', 21, 'yes')); // resumed that is not a boolean: rejected, nothing learnt
    assert.equal(errors.at(-1).field, 'payload.resumed');
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=21&stream=st-1');
    link.close();
    store.free();
  });

  test('the URL keeps its other query parameters; since and stream are replaced, stream encoded', async () => {
    const s2 = setupAt('ws://server/api/v1/ws?access_token=a%2Fb&since=1&x=1&stream=old#frag');
    assert.equal(s2.made[0].url, 'ws://server/api/v1/ws?access_token=a%2Fb&since=1&x=1&stream=old#frag', 'the first connection: as given');
    s2.made[0].open();
    s2.made[0].send(helloAt('st 1/ä&=', 7, false));
    await settle();
    const next = reconnect(s2.made, s2.clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?access_token=a%2Fb&x=1&since=7&stream=st%201%2F%C3%A4%26%3D#frag');
    const parsed = new URL(next.url);
    assert.equal(parsed.searchParams.get('stream'), 'st 1/ä&=');
    assert.deepEqual(parsed.searchParams.getAll('since'), ['7']);
    s2.link.close();
    s2.store.free();
    // A URL object, and a relative URL (text only: it stays relative).
    for (const [url, want] of [[new URL('wss://h.example/ws?a=1'), 'wss://h.example/ws?a=1&since=7&stream=s'], ['/api/v1/ws', '/api/v1/ws?since=7&stream=s']]) {
      const s3 = setupAt(url);
      s3.made[0].open();
      s3.made[0].send(helloAt('s', 7, false));
      await settle();
      assert.equal(reconnect(s3.made, s3.clock).url, want);
      s3.link.close();
      s3.store.free();
    }
  });

  test('never since without a stream: an old server, or a hello without a stream, is not resumed', async () => {
    const { store, made, clock, refetches, link } = setup();
    made[0].open();
    made[0].send(hello('7')); // an old server: no stream, no offset
    made[0].send(messageAt(3)); // an offset without a stream
    await settle();
    let next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws');
    next.send(helloAt(null, 9, false));
    next.send(messageAt(10));
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws');
    // A stream without an offset: not until a frame brings one.
    next.send(helloAt('st-1', null, false));
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws');
    next.send(helloAt('st-1', null, false));
    next.send(messageAt(12));
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=12&stream=st-1');
    assert.equal(refetches.length, 4);
    link.close();
    store.free();
  });

  test('a failed or unfinished refetch: the next connection does not resume (its hello refetches everything)', async () => {
    let answer = () => Promise.resolve();
    const asked = [];
    const { store, made, clock, errors, link } = setup({ refetch: (r) => { asked.push(r); return answer(r); } });
    made[0].open();
    answer = () => Promise.reject(new Error('offline'));
    made[0].send(helloAt('st-1', 30, false));
    made[0].send(messageAt(31));
    await settle();
    assert.equal(errors.length, 1);
    let next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws', 'the full refetch failed: resuming would keep its gap');
    answer = () => new Promise(() => {}); // never settles
    next.send(helloAt('st-1', 31, false));
    assert.deepEqual(asked.at(-1), { what: 'all', reason: 'same_epoch' });
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws', 'the full refetch has not finished');
    answer = () => Promise.resolve();
    next.send(helloAt('st-1', 31, false));
    next.send(messageAt(32));
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws?since=32&stream=st-1', 'a later full refetch succeeded: the earlier ones no longer count');
    next.send(helloAt('st-1', 32, true));
    // A session list refetch that fails on a resumed connection: the next one does not resume.
    answer = () => Promise.reject(new Error('sessions failed'));
    next.send(JSON.stringify({ type: 'session.created', payload: { id: 's2', task_id: T, state: 'RUNNING', updated_at: at(3) }, offset: 33 }));
    await settle();
    next = reconnect(made, clock);
    assert.equal(next.url, 'ws://server/api/v1/ws');
    // A refetch that throws synchronously counts as failed too.
    answer = () => { throw new Error('sync'); };
    next.send(helloAt('st-1', 33, false));
    await settle();
    assert.equal(reconnect(made, clock).url, 'ws://server/api/v1/ws');
    link.close();
    store.free();
  });
});

/** `setup()` against another URL. */
function setupAt(url) {
  const store = new ProjectionStore();
  const { made, FakeSocket } = fakeSockets();
  const clock = manualClock();
  const link = connect(url, store, {
    refetch: () => {}, onError: () => {}, WebSocket: FakeSocket, setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout, random: () => 1,
  });
  return { store, made, clock, link };
}
