// The user's answer through the package (SPEC §13): respondStart, respondReply and respondState
// on the wasm store, as an app calls them, with the reference client's and the reference
// server's reply bodies, typed errors for malformed replies (nothing changed), and settlements
// that survive a snapshot. Runs on the production and the development build.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { soundness } from './sound.mjs';

const T = 'task-1';
const S = 's1';
const at = (s) => `2026-12-06T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence) => ({ epoch: '1', sequence });
const question = (id, pending, status, created, updated = created) => ({
  id, session_id: S, task_id: T, turn_id: 't1', author_type: 'agent', type: 'clarification_request',
  metadata: { pending_id: pending, question_id: `q-${id}`, status }, created_at: at(created), updated_at: at(updated),
});

function waiting() {
  const store = new ProjectionStore();
  store.applySessionList(T, [{ id: S, task_id: T, state: 'WAITING_FOR_INPUT', started_at: at(0), updated_at: at(1), is_primary: true, pending_action: 'clarification', pending_action_revision: rev(5) }]);
  store.applyTurnList(S, [{ id: 't1', session_id: S, task_id: T, started_at: at(1), created_at: at(1), updated_at: at(1), completed_at: null }]);
  store.applyMessagePage(S, [question('m1', 'p1', 'pending', 2)]);
  return store;
}

const live = (store) => store.pendingClarification(S)?.pending_id ?? null;

describe('respond (SPEC §13)', () => {
  test('a double click sends one request; the reply alone hides the question', () => {
    const store = waiting();
    const first = store.respondStart(S, 'p1');
    assert.deepEqual(first, { attempt: first.attempt, fresh: true });
    assert.deepEqual(store.respondStart(S, 'p1'), { attempt: first.attempt, fresh: false });
    assert.equal(live(store), 'p1');
    assert.deepEqual(store.respondState(S, 'p1'), { attempt: first.attempt, phase: 'in_flight', outcome: null });
    const replied = store.respondReply(first.attempt, { status: 200, body: { success: true, claimed: true, status: 'answered', response: {} } });
    assert.deepEqual(replied, { outcome: 'won', failure: null, applied: true, reason: null });
    assert.equal(live(store), null);
    assert.deepEqual(store.hiddenMessageIds(S), []);
    assert.equal(store.sessionPendingAction(S), null);
    assert.deepEqual(store.respondReply(first.attempt, { status: 200, body: { claimed: true } }), { outcome: 'won', failure: null, applied: false, reason: 'already_replied' });
    assert.throws(() => store.respondStart(S, 'p1'), { code: 'bundle_not_live', field: 'pendingId' });
    soundness(ProjectionStore, store);
  });

  for (const [name, reply, outcome, failure, settles] of [
    ['lost (claimed: false)', { status: 200, body: { success: true, claimed: false, status: 'rejected' } }, 'lost', null, true],
    ['the reference server outcome success', { status: 200, body: { outcome: 'success', result: 'success', state: 'active_live' } }, 'won', null, true],
    ['409', { status: 409, body: { error: 'clarification request is no longer active' } }, 'no_longer_active', null, true],
    ['404', { status: 404, body: { error: 'not found' } }, 'refused', null, false],
    ['503', { status: 503, body: { outcome: 'retryable_error' } }, 'failed', 'retryable', false],
    ['500', { status: 500 }, 'failed', 'server_error', false],
    ['a 200 that is not JSON', { status: 200, body: undefined }, 'failed', 'unreadable', false],
    ['network', { error: 'network' }, 'failed', 'network', false],
    ['timeout', { error: 'timeout' }, 'failed', 'timeout', false],
  ]) {
    test(`${name}: ${settles ? 'settles' : 'stays answerable, and the retry is a new attempt'}`, () => {
      const store = waiting();
      const { attempt } = store.respondStart(S, 'p1');
      const replied = store.respondReply(attempt, reply);
      assert.deepEqual(replied, { outcome, failure, applied: settles, reason: null });
      assert.equal(live(store), settles ? null : 'p1');
      if (!settles) {
        const retry = store.respondStart(S, 'p1');
        assert.ok(retry.fresh && retry.attempt !== attempt);
        assert.equal(store.respondReply(attempt, { status: 200, body: { claimed: true } }).reason, 'attempt_superseded');
        assert.equal(live(store), 'p1');
      }
    });
  }

  test('no input produced before the server handled the answer reopens it, in the store or its snapshot', () => {
    const store = waiting();
    const { attempt } = store.respondStart(S, 'p1');
    store.respondReply(attempt, { status: 200, body: { success: true, claimed: true, session: { id: S, task_id: T, pending_action: null, pending_action_revision: rev(8) } } });
    const restored = ProjectionStore.hydrate(JSON.stringify(store.dehydrate()));
    for (const s of [store, restored]) {
      s.applyMessageEvent('updated', { ...question('m1', 'p1', 'pending', 2), message_id: 'm1', pending_action: 'clarification', pending_action_revision: rev(7) });
      s.applyMessagePage(S, [question('m1', 'p1', 'pending', 2)]);
      assert.equal(live(s), null);
      // The server restored it after handling: a newer pending row.
      s.applyMessageEvent('updated', { ...question('m1', 'p1', 'pending', 2, 30), message_id: 'm1', pending_action: 'clarification', pending_action_revision: rev(9) });
      assert.equal(live(s), 'p1');
    }
  });

  test('a malformed start or reply is a typed error and changes nothing', () => {
    const store = waiting();
    assert.throws(() => store.respondStart(7, 'p1'), { code: 'invalid_type', field: 'sessionId' });
    assert.throws(() => new ProjectionStore().respondStart(S, 'p1'), { code: 'live_question_unknown', field: 'pendingId' });
    const { attempt } = store.respondStart(S, 'p1');
    const before = JSON.stringify(store.dehydrate());
    for (const [reply, code, field] of [
      [undefined, 'invalid_type', 'reply'],
      [{ status: 'ok' }, 'invalid_value', 'reply.status'],
      [{ status: 70000 }, 'invalid_value', 'reply.status'],
      [{ error: 'gone' }, 'invalid_value', 'reply.error'],
      [{ status: 200, body: { claimed: 'yes' } }, 'invalid_type', 'reply.body.claimed'],
      [{ status: 200, body: { outcome: 1 } }, 'invalid_type', 'reply.body.outcome'],
      [{ status: 200, body: { session: { pending_action_revision: { epoch: 1, sequence: 2 } } } }, 'invalid_revision', 'reply.body.session.pending_action_revision.epoch'],
    ]) {
      assert.throws(() => store.respondReply(attempt, reply), { code, field }, JSON.stringify(reply));
      assert.equal(JSON.stringify(store.dehydrate()), before);
      assert.equal(store.respondState(S, 'p1').phase, 'in_flight');
    }
    assert.throws(() => store.respondReply(-1, { status: 200 }), { field: 'attempt' });
    assert.deepEqual(store.respondReply(attempt, { status: 200, body: { claimed: true } }).outcome, 'won');
  });
});
