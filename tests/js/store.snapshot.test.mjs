// Snapshots (SPEC §12, docs/snapshot-format.md) through the package: over every store scenario,
// after every step, `dehydrate()` → JSON text → `ProjectionStore.hydrate()` gives a store with
// the same digest, answers (known/unknown included), explanations and snapshot; a snapshot from
// outside is refused whole with a typed error (nothing created); `restored()` until a hello or a
// task snapshot; the stream position travels with it and `connect()` resumes from it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { connect } from 'task-projection/connect';
import { DEVELOPMENT, stateOf } from './build.mjs';
import { decode } from './runner.mjs';
import { loadStoreCases } from './store-runner.mjs';

const cases = loadStoreCases(JSON.parse(fs.readFileSync(new URL('../fixtures/store_scenarios.json', import.meta.url), 'utf8')));

// The explanations are compared in the development build (the production build has none).
const SESSION_QUERIES = ['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission', ...(DEVELOPMENT ? ['explain'] : [])];
const TASK_QUERIES = ['taskPendingAction', 'taskStatusSummary', 'pendingOwner', ...(DEVELOPMENT ? ['explainOwner'] : [])];

/** Every string of a value (the ids a case names, among other text). */
function strings(v, out) {
  if (typeof v === 'string') out.add(v);
  else if (Array.isArray(v)) v.forEach((x) => strings(x, out));
  else if (v !== null && typeof v === 'object') Object.values(v).forEach((x) => strings(x, out));
  return out;
}

function answersOf(store, ids) {
  const out = {};
  for (const id of ids) {
    for (const q of SESSION_QUERIES.concat(TASK_QUERIES)) out[`${q}(${id})`] = store[q](id);
  }
  return out;
}

const resolve = (args, saved) => JSON.parse(JSON.stringify(args), (k, v) => (v && typeof v === 'object' && typeof v.$saved === 'string' ? saved.get(v.$saved) : v));

describe('dehydrate / hydrate', () => {
  test('over every store scenario, after every step: the same digest, answers, explanations and snapshot', () => {
    let steps = 0;
    let bytes = 0;
    for (const c of cases) {
      let store = new ProjectionStore();
      const saved = new Map();
      const ids = new Set();
      try {
        for (const s of c.steps) {
          if (s.call === 'renew' || s.call === 'dispose') {
            store.free();
            store = new ProjectionStore();
            continue;
          }
          const args = decode(resolve(s.args ?? [], saved));
          strings(args, ids);
          let result;
          try {
            result = store[s.call](...args);
          } catch {
            // a rejected call (the fixture expects it): the state is unchanged
          }
          if (s.save !== undefined) saved.set(s.save, s.call === 'beginSelection' ? result?.ticket : result);
          const snapshot = store.dehydrate();
          const text = JSON.stringify(snapshot);
          bytes += text.length;
          const hydrated = ProjectionStore.hydrate(text);
          try {
            const at = `${c.name}: after ${s.call}`;
            assert.equal(stateOf(hydrated, { byValue: true }), stateOf(store, { byValue: true }), `${at}: state`);
            assert.deepEqual(hydrated.dehydrate(), snapshot, `${at}: snapshot`);
            assert.deepEqual(answersOf(hydrated, ids), answersOf(store, ids), `${at}: answers`);
            // The snapshot's answers are the store's own.
            for (const [id, a] of Object.entries(snapshot.answers.sessions)) {
              for (const q of SESSION_QUERIES.slice(0, 5)) assert.deepEqual(a[q], store[q](id), `${at}: answers.sessions.${id}.${q}`);
            }
            for (const [id, a] of Object.entries(snapshot.answers.tasks)) {
              for (const q of TASK_QUERIES.slice(0, 3)) assert.deepEqual(a[q], store[q](id), `${at}: answers.tasks.${id}.${q}`);
            }
          } finally {
            hydrated.free();
          }
          steps++;
        }
      } finally {
        store.free();
      }
    }
    console.log(`snapshot round trips: ${steps} steps of ${cases.length} cases, ${bytes} bytes of JSON`);
    assert.ok(steps > 500);
  });

  test('a held summary is a copy of the caller\'s object, and the hydrated store hands back its own', () => {
    const store = new ProjectionStore();
    const summary = { revision: 4, pending_action: 'clarification', git: { branch: 'main' } };
    store.applyStatusSummaryEvent({ task_id: 't1', status_summary: summary });
    const snapshot = store.dehydrate();
    assert.deepEqual(snapshot.tasks[0].summary, summary);
    assert.notEqual(snapshot.tasks[0].summary, summary, 'a copy');
    assert.deepEqual(snapshot.answers.tasks.t1.taskStatusSummary, summary);
    const hydrated = ProjectionStore.hydrate(snapshot);
    assert.deepEqual(hydrated.taskStatusSummary('t1'), summary);
    assert.equal(hydrated.taskStatusSummary('t1'), hydrated.taskStatusSummary('t1'), 'stable identity');
    store.free();
    hydrated.free();
  });

  test('a scoped snapshot holds the named tasks with their sessions, and the named sessions', () => {
    const store = new ProjectionStore();
    store.applySessionList('t1', [{ id: 's1', task_id: 't1', state: 'RUNNING', pending_action: null }]);
    store.applySessionList('t2', [{ id: 's2', task_id: 't2', state: 'RUNNING', pending_action: 'permission' }]);
    const one = store.dehydrate({ tasks: ['t1'] });
    assert.deepEqual(one.tasks.map((t) => t.id), ['t1']);
    assert.deepEqual(one.sessions.map((s) => s.id), ['s1']);
    const hydrated = ProjectionStore.hydrate(one);
    assert.equal(hydrated.sessionPendingAction('s1'), null);
    assert.equal(hydrated.sessionPendingAction('s2'), undefined, 'not in the snapshot: not known');
    assert.equal(hydrated.taskPendingAction('t2'), undefined);
    const named = store.dehydrate({ sessions: ['s2'] });
    assert.deepEqual(named.sessions.map((s) => s.id), ['s2']);
    assert.deepEqual(named.tasks, []);
    store.free();
    hydrated.free();
  });

  test('a bad snapshot is refused whole with a typed error naming its field; nothing is created', () => {
    const store = new ProjectionStore();
    store.applySessionList('t1', [{ id: 's1', task_id: 't1', state: 'RUNNING', pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 2 } }]);
    store.applyTurnList('s1', [{ id: 'u1', started_at: '2026-12-01T09:00:00Z' }]);
    store.applyMessagePage('s1', [{ id: 'q1', turn_id: 'u1', type: 'clarification_request', metadata: { pending_id: 'p' }, created_at: '2026-12-01T09:00:01Z' }]);
    const good = store.dehydrate();
    const bad = (mutate) => {
      const copy = JSON.parse(JSON.stringify(good));
      mutate(copy);
      return copy;
    };
    const refused = (snapshot, code, field) => assert.throws(
      () => ProjectionStore.hydrate(snapshot),
      (e) => e.name === 'TaskProjectionError' && e.code === code && e.field === field,
      `${code} ${field}`,
    );
    refused(bad((s) => { s.version = 2; }), 'unsupported_version', 'snapshot.version');
    refused(bad((s) => { s.format = 'something-else'; }), 'unsupported_version', 'snapshot.format');
    refused(bad((s) => { s.sessions[0].messages[0][2] = 7; }), 'invalid_value', 'snapshot.sessions[0].messages[0][2]');
    refused(bad((s) => { s.sessions[0].messages[0][2] = 'clarification_request'; }), 'invalid_type', 'snapshot.sessions[0].messages[0][2]');
    refused(bad((s) => { s.sessions[0].messages[0][1] = 4; }), 'invalid_value', 'snapshot.sessions[0].messages[0][1]');
    refused(bad((s) => { s.sessions[0].turns[0] = ['u1']; }), 'invalid_value', 'snapshot.sessions[0].turns[0]');
    refused(bad((s) => { s.sessions[0].turns[0][5] = 8; }), 'invalid_value', 'snapshot.sessions[0].turns[0][5]');
    refused(bad((s) => { s.sessions.push(s.sessions[0]); }), 'invalid_value', 'snapshot.sessions[1]');
    refused(bad((s) => { s.sessions[0].listed = 1; }), 'invalid_type', 'snapshot.sessions[0].listed');
    refused(bad((s) => { s.offset = 3; }), 'invalid_value', 'snapshot.offset');
    refused(bad((s) => { s.rejected = [['session_list', 'applied', null, null, null, null, null, null, null]]; }), 'invalid_value', 'snapshot.rejected[0][1]');
    refused('{"format":', 'invalid_type', 'snapshot');
    refused(null, 'invalid_type', 'snapshot');
    assert.throws(() => ProjectionStore.hydrate(good, { restored: 'yes' }), (e) => e.code === 'invalid_type' && e.field === 'options.restored');
    // The good one still hydrates.
    const hydrated = ProjectionStore.hydrate(good);
    assert.equal(stateOf(hydrated, { byValue: true }), stateOf(store, { byValue: true }));
    hydrated.free();
    store.free();
  });

  test('restored answers are marked restored until a server.hello or a task snapshot; a newer revision wins', () => {
    const store = new ProjectionStore();
    store.applySessionList('t1', [{ id: 's1', task_id: 't1', state: 'WAITING_FOR_INPUT', pending_action: 'clarification', pending_action_revision: { epoch: '3', sequence: 7 } }]);
    const snapshot = store.dehydrate();
    store.free();
    const plain = ProjectionStore.hydrate(snapshot);
    assert.equal(plain.restored(), false, 'handed over, not restored');
    plain.free();
    const restored = ProjectionStore.hydrate(snapshot, { restored: true });
    assert.equal(restored.restored(), true);
    restored.applySessionEvent({ session_id: 's1', task_id: 't1', pending_action: null, pending_action_revision: { epoch: '3', sequence: 6 } });
    assert.equal(restored.sessionPendingAction('s1'), 'clarification', 'an older revision loses to the restored one');
    restored.applySessionEvent({ session_id: 's1', task_id: 't1', pending_action: null, pending_action_revision: { epoch: '3', sequence: 8 } });
    assert.equal(restored.sessionPendingAction('s1'), null, 'a newer one wins');
    assert.equal(restored.restored(), true, 'an event alone confirms nothing');
    restored.applyFrame({ type: 'server.hello', payload: { epoch: '3' } });
    assert.equal(restored.restored(), false, 'the stream confirmed it');
    restored.free();
    const again = ProjectionStore.hydrate(snapshot, { restored: true });
    again.applyTaskSnapshot(again.beginTaskFetch(), []);
    assert.equal(again.restored(), false, 'a refetch replaced it');
    again.free();
  });

  test('the stream position: set by a REST read, moved by frames, kept by a resumed hello, dropped by another; it travels in the snapshot', () => {
    const store = new ProjectionStore();
    assert.equal(store.streamPosition(), null);
    store.applyStreamPosition({ stream: 'st-1', offset: 40 });
    assert.deepEqual(store.streamPosition(), { stream: 'st-1', offset: 40 });
    store.applyFrame({ type: 'task.updated', offset: 41, payload: { id: 't1' } });
    assert.deepEqual(store.streamPosition(), { stream: 'st-1', offset: 41 });
    store.applyStreamPosition({ stream: 'st-1', offset: 30 }); // an older read: the frames are in the state
    assert.deepEqual(store.streamPosition(), { stream: 'st-1', offset: 41 });
    const snapshot = store.dehydrate();
    assert.deepEqual([snapshot.stream, snapshot.offset], ['st-1', 41]);
    const hydrated = ProjectionStore.hydrate(snapshot);
    assert.deepEqual(hydrated.streamPosition(), { stream: 'st-1', offset: 41 });
    hydrated.applyFrame({ type: 'server.hello', payload: { epoch: '1', stream: 'st-1', offset: 41, resumed: true } });
    assert.deepEqual(hydrated.streamPosition(), { stream: 'st-1', offset: 41 }, 'resumed: kept');
    hydrated.applyFrame({ type: 'server.hello', payload: { epoch: '1', stream: 'st-1', offset: 50, resumed: false } });
    assert.equal(hydrated.streamPosition(), null, 'not resumed: the state is at no known place until a REST read');
    assert.throws(() => store.applyStreamPosition({ stream: 'st-1', offset: -1 }), (e) => e.code === 'invalid_type' && e.field === 'position.offset');
    store.free();
    hydrated.free();
  });

  test('connect() resumes after the snapshot\'s offset: no refetch when the server resumes', () => {
    const store = new ProjectionStore();
    store.applyStreamPosition({ stream: 'st-9', offset: 12 });
    const hydrated = ProjectionStore.hydrate(store.dehydrate());
    store.free();
    const made = [];
    class FakeSocket {
      constructor(url) { this.url = url; made.push(this); }
      close() {}
    }
    const refetches = [];
    const link = connect('ws://server/api/v1/ws', hydrated, { refetch: (r) => refetches.push(r), WebSocket: FakeSocket });
    assert.equal(made[0].url, 'ws://server/api/v1/ws?since=12&stream=st-9');
    made[0].onopen();
    made[0].onmessage({ data: JSON.stringify({ type: 'server.hello', payload: { epoch: '1', stream: 'st-9', offset: 12, resumed: true } }) });
    assert.deepEqual(refetches, [], 'resumed: nothing to fetch');
    link.close();
    hydrated.free();
  });
});

describe('merge: another page\'s snapshot into the open store (SPEC §12)', () => {
  const rev = (sequence) => ({ epoch: '7', sequence });
  const page = (task, session, sequence, action) => {
    const store = new ProjectionStore();
    store.applySessionList(task, [{ id: session, task_id: task, state: 'WAITING_FOR_INPUT', updated_at: '2026-11-29T12:00:10.000000000Z', is_primary: true, pending_action: action, pending_action_revision: rev(sequence) }]);
    try {
      return store.dehydrate({ tasks: [task] });
    } finally {
      store.free();
    }
  };

  test('a later page\'s snapshot answers for its task at once; what was held stays; again: unchanged; its JSON text works the same', () => {
    const open = ProjectionStore.hydrate(page('task-a', 'sess-a', 3, 'clarification'));
    assert.equal(open.sessionPendingAction('sess-b'), undefined);
    open.merge(page('task-b', 'sess-b', 4, 'permission'));
    assert.equal(open.lastReason(), 'applied');
    assert.equal(open.sessionPendingAction('sess-b'), 'permission');
    assert.equal(open.sessionPendingAction('sess-a'), 'clarification');
    const version = open.version();
    open.merge(JSON.stringify(page('task-b', 'sess-b', 4, 'permission')));
    assert.equal(open.lastReason(), 'unchanged');
    assert.equal(open.version(), version);
    open.free();
  });

  test('an older page\'s projection gives way to the newer one held (revision rule), and a newer one is taken', () => {
    const open = ProjectionStore.hydrate(page('task-a', 'sess-a', 5, null));
    open.merge(page('task-a', 'sess-a', 4, 'clarification'));
    assert.equal(open.sessionPendingAction('sess-a'), null, 'the older page reopens nothing');
    open.merge(page('task-a', 'sess-a', 6, 'permission'));
    assert.equal(open.sessionPendingAction('sess-a'), 'permission');
    open.free();
  });

  test('a malformed snapshot throws a typed error naming its field, and the store stays as it was', () => {
    const open = ProjectionStore.hydrate(page('task-a', 'sess-a', 3, 'clarification'));
    const before = open.dehydrate();
    const bad = page('task-b', 'sess-b', 4, 'permission');
    bad.sessions[0].state = 42;
    assert.throws(() => open.merge(bad), (e) => e.name === 'TaskProjectionError' && e.code === 'invalid_type' && /sessions/.test(e.field));
    assert.throws(() => open.merge('{not json'), (e) => e.code === 'invalid_type' && e.field === 'snapshot');
    assert.throws(() => open.merge({ ...bad, version: 99 }), (e) => e.code === 'unsupported_version');
    assert.deepEqual(open.dehydrate(), before);
    open.free();
  });
});
