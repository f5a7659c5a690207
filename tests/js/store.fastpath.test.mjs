// The JS fast path of ProjectionStore.applyMessageEvent (js/store.js) against the wasm decoder it
// bypasses: on thousands of seeded random payloads (ordinary ones and ones with unusual field
// types, null vs absent keys, bad revisions) both paths must leave the same state (digest) and
// throw the same typed errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProjectionStore } from 'task-projection';
// A test hook of the package's store.js (by path: no package entry exports it).
import { BUILD_DIR, stateOf } from './build.mjs';
// The test hooks of the store.js that `task-projection` resolved to (production or development).
const { __testing } = await import(new URL('store.js', BUILD_DIR));

/** A store whose inputs all go through the wasm decoder (no fast path). */
const decoderStore = () => __testing.decoderOnly(new ProjectionStore());

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

function payload(r, i) {
  const pick = (...xs) => xs[Math.floor(r() * xs.length)];
  const maybe = (p, v) => (r() < p ? v : undefined);
  const ts = (n) => `2026-11-29T12:${String(n % 60).padStart(2, '0')}:00.${String(n).padStart(9, '0')}Z`;
  const p = {
    session_id: pick('s1', 's1', 's2', 7),
    task_id: pick('task-1', 'task-1', undefined, null, 'task-2'),
    turn_id: pick('t1', 't2', '', null, undefined, 3),
    type: pick('message', 'clarification_request', 'permission_request', undefined, null, 4),
    created_at: pick(ts(i), ts(i), `${i}`, undefined, null, 5),
    updated_at: pick(ts(1000 + i), undefined, null, ts(i)),
    content: 'x'.repeat(Math.floor(r() * 50)),
  };
  const idKind = r();
  if (idKind < 0.45) p.message_id = `m${Math.floor(r() * 30)}`;
  else if (idKind < 0.9) p.id = `m${Math.floor(r() * 30)}`;
  else if (idKind < 0.95) p.id = 9;
  const meta = r();
  if (meta < 0.6) {
    p.metadata = {
      status: pick('pending', '', 'answered', undefined, null, 'weird', 1),
      pending_id: pick('p1', 'p2', '', undefined, null, 2),
      question_total: pick(1, 2, 3, undefined, null, '2', 0, -1, 2.5),
    };
  } else if (meta < 0.7) p.metadata = pick(null, 'x', [1]);
  const proj = r();
  if (proj < 0.5) {
    p.pending_action = pick('clarification', 'permission', null, undefined, 'maybe', 3);
    p.pending_action_revision = pick(
      { epoch: '7', sequence: i },
      { epoch: '8', sequence: i },
      { epoch: 'abc', sequence: 1 },
      { epoch: 7, sequence: 1 },
      { epoch: '7', sequence: -1 },
      { epoch: '7', sequence: 1.5 },
      { epoch: '7', sequence: '3' },
      { epoch: '7', sequence: 2 ** 60 },
      null,
      undefined,
      'r',
    );
  } else if (proj < 0.6) {
    p.pending_action_revision = { epoch: '7', sequence: i };
  }
  return p;
}

function outcome(fn) {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return `${error.code}:${error.field}`;
  }
}

test('the fast path and the wasm decoder agree on 4,000 random payloads', () => {
  for (const seed of [1, 2, 3, 4]) {
    const r = rng(seed);
    const fast = new ProjectionStore();
    const slow = decoderStore();
    for (const store of [fast, slow]) {
      store.applySessionList('task-1', [{ id: 's1', task_id: 'task-1', state: 'RUNNING' }]);
      store.applyTurnList('s1', [{ id: 't1', started_at: '2026-11-29T12:00:00Z' }, { id: 't2', started_at: '2026-11-29T13:00:00Z', completed_at: null }]);
    }
    let fastTaken = 0;
    for (let i = 0; i < 1000; i++) {
      const kind = ['added', 'updated', 'deleted'][Math.floor(r() * 3)];
      const p = payload(r, i);
      const a = outcome(() => fast.applyMessageEvent(kind, p));
      const b = outcome(() => slow.applyMessageEvent(kind, p));
      assert.equal(a, b, `seed ${seed} event ${i}: ${JSON.stringify(p)}`);
      assert.equal(stateOf(fast, { byValue: true }), stateOf(slow, { byValue: true }), `seed ${seed} event ${i}: ${JSON.stringify(p)}`);
      assert.equal(fast.lastReason(), slow.lastReason(), `seed ${seed} event ${i}`);
      if (a === 'ok') fastTaken++;
    }
    assert.ok(fastTaken > 100, 'enough payloads were valid');
    for (const id of ['s1', 's2']) {
      assert.deepEqual(fast.pendingClarification(id), slow.pendingClarification(id));
      assert.equal(fast.sessionPendingAction(id), slow.sessionPendingAction(id));
    }
    fast.free();
    slow.free();
  }
});


test('message pages: the fast path and the wasm decoder agree on 2,000 random pages', () => {
  for (const seed of [11, 12]) {
    const r = rng(seed);
    const fast = new ProjectionStore();
    const slow = decoderStore();
    let fastTaken = 0;
    for (let i = 0; i < 1000; i++) {
      const size = Math.floor(r() * 6);
      const page = [];
      for (let j = 0; j < size; j++) {
        const n = i * 10 + j;
        // Mostly ordinary rows (so whole pages take the fast path), sometimes an odd one.
        const p = r() < 0.9
          ? {
            id: `m${Math.floor(r() * 40)}`, turn_id: r() < 0.5 ? 't1' : 't2',
            type: ['message', 'clarification_request', 'permission_request'][Math.floor(r() * 3)],
            metadata: r() < 0.7 ? { pending_id: `p${Math.floor(r() * 3)}`, status: r() < 0.7 ? 'pending' : 'answered', question_total: Math.floor(r() * 3) } : undefined,
            created_at: `2026-11-29T12:00:00.${String(n).padStart(9, '0')}Z`,
            updated_at: r() < 0.5 ? `2026-11-29T13:00:00.${String(n).padStart(9, '0')}Z` : undefined,
            content: 'x',
          }
          : payload(r, n);
        delete p.session_id;
        page.push(p);
      }
      const sessionId = r() < 0.95 ? 's1' : 3;
      const arg = r() < 0.97 ? page : { length: 1 };
      const a = outcome(() => fast.applyMessagePage(sessionId, arg));
      const b = outcome(() => slow.applyMessagePage(sessionId, arg));
      assert.equal(a, b, `seed ${seed} page ${i}: ${JSON.stringify(page)}`);
      assert.equal(stateOf(fast, { byValue: true }), stateOf(slow, { byValue: true }), `seed ${seed} page ${i}`);
      assert.equal(fast.lastReason(), slow.lastReason(), `seed ${seed} page ${i}`);
      if (a === 'ok' && size > 0) fastTaken++;
    }
    assert.ok(fastTaken > 100, 'enough pages were valid');
    fast.free();
    slow.free();
  }
});


test('event batches: the fast path and the wasm decoder agree on 1,000 random batches', () => {
  const r = rng(21);
  const fast = new ProjectionStore();
  const slow = decoderStore();
  let fastTaken = 0;
  for (let i = 0; i < 1000; i++) {
    const kind = ['added', 'updated', 'deleted', 'added'][Math.floor(r() * 4)];
    const batch = [];
    const size = Math.floor(r() * 4);
    for (let j = 0; j < size; j++) {
      const p = payload(r, i * 10 + j);
      if (r() < 0.85) {
        // mostly well-typed events
        p.session_id = 's1';
        p.id = `m${Math.floor(r() * 40)}`;
        p.task_id = 'task-1';
        p.turn_id = 't1';
        p.type = 'clarification_request';
        p.created_at = `2026-11-29T12:00:00.${String(i * 10 + j).padStart(9, '0')}Z`;
        p.updated_at = undefined;
        p.metadata = { pending_id: 'p1', status: 'pending' };
        p.pending_action = 'clarification';
        p.pending_action_revision = { epoch: '7', sequence: i * 10 + j };
      }
      batch.push(p);
    }
    const a = outcome(() => fast.applyMessageEvents(kind, batch));
    const b = outcome(() => slow.applyMessageEvents(kind, batch));
    assert.equal(a, b, `batch ${i}: ${JSON.stringify(batch)}`);
    assert.equal(stateOf(fast, { byValue: true }), stateOf(slow, { byValue: true }), `batch ${i}`);
    assert.equal(fast.lastReason(), slow.lastReason(), `batch ${i}`);
    if (a === 'ok' && size > 0) fastTaken++;
  }
  assert.ok(fastTaken > 100, 'enough batches were valid');
  fast.free();
  slow.free();
});

// Text the boundary writes in place (message ids, timestamps) and the interned strings may be
// any Unicode, including what UTF-16 cannot encode as UTF-8 (a lone surrogate becomes U+FFFD on
// both paths).
test('non-ASCII ids, turns and timestamps: both paths agree', () => {
  // (A lone surrogate is refused before either path: tests/js/boundary.test.mjs.)
  const odd = ['mé', '📌-1', 'm\u{10FFFF}', 'ascii-then-ü', 'm'.repeat(300) + 'ß'];
  const fast = new ProjectionStore();
  const slow = decoderStore();
  for (const store of [fast, slow]) {
    store.applySessionList('task-ü', [{ id: 'sé', task_id: 'task-ü', state: 'RUNNING' }]);
    store.applyTurnList('sé', [{ id: 'tü', started_at: '2026-11-29T12:00:00Z' }]);
    store.applyMessagePage('sé', []);
  }
  odd.forEach((id, i) => {
    const p = {
      message_id: id, session_id: 'sé', task_id: 'task-ü', turn_id: i % 2 ? 'tü' : '生',
      type: 'clarification_request', metadata: { pending_id: 'pé', status: 'pending', question_total: odd.length },
      created_at: i % 3 ? `2026-11-29T12:00:0${i}.5Z` : `heute-${i}-ä`,
      updated_at: i % 2 ? `2026-11-29T13:00:00.${i}Z` : undefined,
      pending_action: 'clarification', pending_action_revision: { epoch: '٣', sequence: i },
    };
    fast.applyMessageEvent('added', p);
    slow.applyMessageEvent('added', p);
    assert.equal(stateOf(fast, { byValue: true }), stateOf(slow, { byValue: true }), `event ${i} (${JSON.stringify(id)})`);
    assert.equal(fast.lastReason(), slow.lastReason(), `event ${i}`);
  });
  assert.deepEqual(fast.pendingClarification('sé'), slow.pendingClarification('sé'));
  assert.deepEqual(fast.hiddenMessageIds('sé'), slow.hiddenMessageIds('sé'));
  assert.equal(fast.currentTurnId('sé'), 'tü');
  fast.free();
  slow.free();
});

test('queries by handle answer as queries by id, with the same object while unchanged', () => {
  const store = new ProjectionStore();
  // Asked before the session is known to the boundary (by id), then after (by handle): one
  // cache, so the same object comes back while the answer is the same.
  const before = store.pendingClarification('s1');
  assert.equal(before, undefined, 'not known yet');
  store.applySessionList('task-1', [{ id: 's1', task_id: 'task-1', state: 'RUNNING' }]);
  store.applyTurnList('s1', [{ id: 't1', started_at: '2026-11-29T12:00:00Z' }]);
  assert.equal(store.pendingClarification('s1'), undefined, 'by handle: the page has not arrived');
  store.applyMessagePage('s1', []);
  assert.equal(store.pendingClarification('s1'), null, 'known now');
  const ask = (i) => store.applyMessageEvent('added', {
    message_id: `q${i}`, session_id: 's1', task_id: 'task-1', turn_id: 't1', type: 'clarification_request',
    metadata: { pending_id: 'p1', status: 'pending', question_total: 2 }, created_at: `2026-11-29T12:00:0${i}Z`,
  });
  ask(1);
  assert.equal(store.pendingClarification('s1'), null, 'half a bundle is not actionable');
  assert.equal(store.lastReason(), 'bundle_incomplete');
  ask(2);
  const bundle = store.pendingClarification('s1');
  assert.deepEqual(bundle, { pending_id: 'p1', message_ids: ['q1', 'q2'] });
  assert.equal(store.pendingClarification('s1'), bundle);
  assert.equal(store.currentTurnId('s1'), 't1');
  assert.deepEqual(store.hiddenMessageIds('s1'), ['q1', 'q2']);
  assert.equal(store.hasPendingPermission('s1'), false);
  assert.equal(store.sessionPendingAction('s1'), 'clarification');
  // An event that changes nothing the answer reads keeps the object.
  store.applyMessageEvent('added', {
    message_id: 'n1', session_id: 's1', task_id: 'task-1', turn_id: 't1', type: 'message', created_at: '2026-11-29T12:00:03Z',
  });
  assert.equal(store.pendingClarification('s1'), bundle);
  // A bad id still gets the typed error on the query path.
  assert.throws(() => store.pendingClarification(42), (e) => e.code === 'invalid_type');
  store.free();
});

test('more distinct strings than the boundary keeps: handles are reset and answers stay right', () => {
  const fast = new ProjectionStore();
  const slow = decoderStore();
  for (const store of [fast, slow]) store.applySessionList('task-1', [{ id: 's1', task_id: 'task-1', state: 'RUNNING' }]);
  // 70,000 distinct turn ids: past the 65,536 handles js/store.js keeps before forgetting all.
  const n = 70_000;
  for (let i = 0; i < n; i++) {
    const p = {
      message_id: `m${i % 500}`, session_id: 's1', task_id: 'task-1', turn_id: `turn-${i}`, type: i % 7 ? 'message' : 'clarification_request',
      metadata: { pending_id: `p${i}`, status: 'pending', question_total: 1 },
      created_at: `2026-11-29T12:00:00.${String(i).padStart(9, '0')}Z`, updated_at: `2026-11-29T12:00:00.${String(i).padStart(9, '0')}Z`,
      pending_action: i % 5 ? 'clarification' : null, pending_action_revision: { epoch: `${1 + Math.floor(i / 20_000)}`, sequence: i },
    };
    fast.applyMessageEvent(i % 3 ? 'added' : 'updated', p);
    slow.applyMessageEvent(i % 3 ? 'added' : 'updated', p);
    if (i % 9_973 === 0 || i === n - 1) {
      assert.equal(stateOf(fast, { byValue: true }), stateOf(slow, { byValue: true }), `event ${i}`);
      assert.equal(fast.sessionPendingAction('s1'), slow.sessionPendingAction('s1'));
    }
  }
  assert.ok(__testing.boundaryNames(fast) < 65_536 + 8, 'the boundary forgot handles instead of growing');
  fast.free();
  slow.free();
});

test('change tracking: subscribers hear only changes made while someone listens', async () => {
  const store = new ProjectionStore();
  const event = (i, session = 's1') => ({
    message_id: `m${i}`, session_id: session, task_id: 'task-1', type: 'message', created_at: `2026-11-29T12:00:0${i}Z`,
  });
  store.applyMessageEvent('added', event(1, 's0'));
  const heard = [];
  let unsubscribe = store.subscribe((changes) => heard.push(changes));
  await Promise.resolve();
  assert.deepEqual(heard, [], 'a change before subscribe is not reported');
  store.applyMessageEvent('added', event(2));
  await Promise.resolve();
  assert.deepEqual(heard.map((c) => c.sessions), [['s1']]);
  unsubscribe();
  store.applyMessageEvent('added', event(3, 's2'));
  unsubscribe = store.subscribe((changes) => heard.push(changes));
  store.applyMessageEvent('added', event(4, 's3'));
  await Promise.resolve();
  assert.deepEqual(heard.map((c) => c.sessions), [['s1'], ['s3']], 'the change made while nobody listened is not replayed');
  unsubscribe();
  store.free();
});
