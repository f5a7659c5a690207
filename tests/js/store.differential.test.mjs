// Differential test: the store's indexed answers equal the stateless rules-core functions run on
// the whole transcript. Random sessions (state, projection, turns with lifecycle/reservation flags,
// messages with ties in created_at, dangling turn ids, bundles with question_total) are fed to the
// store in a random order (REST page, added events, superseded versions, stale updates, deleted
// extras); the pure functions get the final messages in creation order. Deterministic seeds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as store from 'task-projection';
import * as rules from 'task-projection/rules';

const tp = { ...store, ...rules };

const ITERATIONS = 1500;
const ts = (n) => `2026-11-29T12:00:${String(n).padStart(2, '0')}.000000000Z`;

function generator(seed) {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  return { rnd, pick: (a) => a[Math.floor(rnd() * a.length)] };
}

function randomSession({ rnd, pick }) {
  const state = pick(['RUNNING', 'WAITING_FOR_INPUT', 'IDLE', 'COMPLETED', undefined]);
  const projection = pick(['unknown', null, 'clarification', 'permission']);
  const turns = [];
  for (let i = 0, n = Math.floor(rnd() * 4); i < n; i++) {
    const metadata = {};
    if (rnd() < 0.2) metadata.lifecycle_only = true;
    if (rnd() < 0.15) {
      metadata.prompt_dispatch_pending = true;
      if (rnd() < 0.5) metadata.prompt_dispatch_attempted = true;
    }
    turns.push({ id: `t${i}`, session_id: 's', started_at: ts(Math.floor(rnd() * 5)), created_at: ts(Math.floor(rnd() * 5)), completed_at: rnd() < 0.6 ? ts(30) : null, metadata });
  }
  const turnsLoaded = rnd() < 0.8;
  const messages = [];
  for (let i = 0, n = Math.floor(rnd() * 10); i < n; i++) {
    const metadata = {};
    const status = pick(['pending', 'answered', '', undefined, 'approved', 'rejected']);
    if (status !== undefined) metadata.status = status;
    const pendingId = pick(['p1', 'p2', undefined]);
    if (pendingId) metadata.pending_id = pendingId;
    const total = pick([undefined, 1, 2, 3]);
    if (total) metadata.question_total = total;
    const turnId = pick([...turns.map((t) => t.id), 'ghost', undefined, ...turns.map((t) => t.id)]);
    const m = { id: `m${i}`, session_id: 's', type: pick(['clarification_request', 'clarification_request', 'permission_request', 'message']), metadata, created_at: ts(Math.floor(rnd() * 8)) };
    if (turnId) m.turn_id = turnId;
    messages.push(m);
  }
  return { state, projection, turns, turnsLoaded, messages };
}

function feed(store, { state, projection, turns, turnsLoaded, messages }, { rnd, pick }) {
  const session = { id: 's', task_id: 'T' };
  if (state) session.state = state;
  if (projection !== 'unknown') Object.assign(session, { pending_action: projection, pending_action_revision: { epoch: '1', sequence: 1 } });
  store.applySessionList('T', [session]);
  if (turnsLoaded) store.applyTurnList('s', turns);
  const shuffled = [...messages].sort(() => rnd() - 0.5);
  const half = Math.floor(shuffled.length / 2);
  store.applyMessagePage('s', shuffled.slice(0, half));
  for (const { id, ...rest } of shuffled.slice(half)) {
    const final = { message_id: id, ...rest, updated_at: ts(45) };
    if (rnd() < 0.4) {
      store.applyMessageEvent('added', { ...final, metadata: { status: 'pending', pending_id: 'p9', question_total: 1 }, turn_id: pick(['t0', 't1', undefined]), updated_at: ts(41) });
      store.applyMessageEvent('updated', final);
    } else {
      store.applyMessageEvent('added', final);
    }
    if (rnd() < 0.3) {
      // a stale update (older or no updated_at) must change nothing
      store.applyMessageEvent('updated', { ...final, type: 'clarification_request', metadata: { status: 'pending', pending_id: 'p8' }, updated_at: pick([ts(44), undefined]) });
    }
  }
  if (rnd() < 0.3) {
    const extra = { message_id: 'zz', session_id: 's', turn_id: pick(['t0', 't1', undefined]), type: 'clarification_request', metadata: {}, created_at: ts(59) };
    store.applyMessageEvent('added', extra);
    store.applyMessageEvent('deleted', extra);
  }
}

function oracle({ state, projection, turns, turnsLoaded, messages }) {
  const byCreation = [...messages].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
  // The pure currentTurnId cannot see messages: a reservation referenced by a message is published.
  const referenced = new Set(messages.map((m) => m.turn_id));
  const published = turns.map((t) => (referenced.has(t.id) ? { ...t, metadata: { ...t.metadata, prompt_dispatch_pending: false } } : t));
  const knownTurns = turnsLoaded ? published : undefined;
  const current = tp.currentTurnId(knownTurns, state);
  const scope = {};
  if (current !== undefined) scope.currentTurnId = current;
  if (projection !== 'unknown') scope.pendingAction = projection;
  // What the store knows (SPEC §11; the page is always fed): the rows once the turns are in too,
  // the discovery answers at once for a quarantined session (the rule's `current` is then null),
  // the action from the projection or the rows.
  const discoveryKnown = turnsLoaded || current === null;
  return {
    current,
    action: projection !== 'unknown' ? projection
      : turnsLoaded ? tp.sessionPendingAction({ session: state ? { id: 's', state } : { id: 's' }, turns: knownTurns, messages: byCreation })
        : undefined,
    bundle: discoveryKnown ? tp.pendingClarificationBundle(byCreation, scope).map((m) => m.id) : undefined,
    permission: turnsLoaded ? tp.hasPendingPermission(byCreation) : undefined,
  };
}

for (const seed of [1, 42]) {
  test(`store answers equal the stateless rules on ${ITERATIONS} random sessions (seed ${seed})`, () => {
    const random = generator(seed);
    for (let i = 0; i < ITERATIONS; i++) {
      const input = randomSession(random);
      const store = new tp.ProjectionStore();
      try {
        feed(store, input, random);
        const bundle = store.pendingClarification('s');
        const got = {
          current: store.currentTurnId('s'),
          action: store.sessionPendingAction('s'),
          bundle: bundle === undefined ? undefined : bundle ? [...bundle.message_ids] : [],
          permission: store.hasPendingPermission('s'),
        };
        assert.deepEqual(got, oracle(input), `iteration ${i}: ${JSON.stringify(input)}`);
        assert.ok(!bundle || bundle.message_ids.length > 0, 'an active bundle is never empty');
        const hidden = store.hiddenMessageIds('s');
        assert.deepEqual(hidden === undefined ? undefined : [...hidden], got.bundle);
      } finally {
        store.free();
      }
    }
  });
}
