// store.explain(sessionId) and store.explainOwner(taskId): the explanation agrees with the
// queries (the current turn, the bundle, the owner), names each turn's and pending request's
// standing, the revision held, and the inputs rejected as older with their revisions; it changes
// no state; bad ids are typed errors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
// explain / explainOwner are development features: the development build, whatever the conditions.
import { ProjectionStore } from 'task-projection/development';

const T = 'task-1';
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}Z`;
const rev = (sequence, epoch = '1') => ({ epoch, sequence });
const session = (id, state, action, sequence, extra = {}) => ({
  id, task_id: T, state, updated_at: at(0), is_primary: false, pending_action: action,
  pending_action_revision: rev(sequence), ...extra,
});
const turn = (id, s, completed = false, metadata = {}) => ({
  id, session_id: 's1', task_id: T, started_at: at(s), created_at: at(s), updated_at: at(s),
  completed_at: completed ? at(s + 1) : null, metadata,
});
const question = (id, turnId, pendingId, total, s, extra = {}) => ({
  message_id: id, session_id: 's1', task_id: T, turn_id: turnId, type: 'clarification_request',
  created_at: at(s), updated_at: at(s), content: 'Which branch?', metadata: { pending_id: pendingId, question_total: total }, ...extra,
});

/** s1 waits on a bundle of two in its open turn, beside a completed turn with an old question
 * (superseded), a lifecycle turn and a reservation; s2 runs and is primary. */
function loaded() {
  const store = new ProjectionStore();
  store.applySessionList(T, [
    session('s1', 'WAITING_FOR_INPUT', 'clarification', 5),
    session('s2', 'RUNNING', null, 2, { is_primary: true }),
  ]);
  store.applyTurnList('s1', [
    turn('turn-old', 1, true), turn('turn-now', 2),
    turn('turn-life', 9, false, { lifecycle_only: true }), turn('turn-held', 9, false, { prompt_dispatch_pending: true }),
  ]);
  store.applyMessagePage('s1', [
    question('q-old', 'turn-old', 'p-old', 1, 1), question('q1', 'turn-now', 'p-now', 2, 3), question('q2', 'turn-now', 'p-now', 2, 4),
  ]);
  return store;
}

describe('explain(sessionId)', () => {
  test('agrees with the queries and names every standing', () => {
    const store = loaded();
    const e = store.explain('s1');
    assert.equal(e.current_turn.id, store.currentTurnId('s1'));
    assert.deepEqual(e.current_turn, { id: 'turn-now', known: true, reason: 'open_turn_outranks_completed' });
    assert.deepEqual(
      Object.fromEntries(e.turns.map((t) => [t.id, t.standing])),
      { 'turn-life': 'lifecycle_skipped', 'turn-held': 'unpublished_reservation', 'turn-now': 'current', 'turn-old': 'outranked' },
    );
    assert.deepEqual(e.clarification, { known: true, reason: 'active_bundle', pending_id: store.pendingClarification('s1').pending_id });
    assert.deepEqual(e.requests.map((r) => [r.id, r.standing]), [['q2', 'in_bundle'], ['q1', 'in_bundle'], ['q-old', 'not_current_turn']]);
    assert.deepEqual(
      e.requests.filter((r) => r.standing === 'in_bundle').map((r) => r.id).sort(),
      [...store.pendingClarification('s1').message_ids].sort(),
    );
    assert.deepEqual(e.projection, { known: true, action: 'clarification', revision: rev(5) });
    assert.deepEqual(e.pending_action, { value: 'clarification', known: true, reason: 'authoritative_projection' });
    assert.equal(e.state, 'WAITING_FOR_INPUT');
    assert.equal(e.task_id, T);
    assert.deepEqual(e.rejected, []);
    // A fresh object per call.
    assert.notEqual(store.explain('s1'), e);
  });

  test('lists late inputs with the revision they carried and the one held, newest first', () => {
    const store = loaded();
    store.applySessionEvent({ session_id: 's1', task_id: T, updated_at: at(0), pending_action: null, pending_action_revision: rev(3) });
    assert.equal(store.lastApplyReason(), 'older_revision_rejected');
    store.applyFrame({ type: 'session.message.updated', payload: { ...question('q1', 'turn-now', 'p-now', 2, 3), metadata: { pending_id: 'p-now', question_total: 2, status: 'answered' }, pending_action: null, pending_action_revision: rev(9, '0') } });
    const version = store.version();
    const digest = store.digest();
    const { rejected } = store.explain('s1');
    assert.deepEqual(rejected.map((r) => [r.input, r.reason, r.detail]), [
      ['session.message.updated', 'older_revision_rejected', 'older_epoch'],
      ['session.updated', 'older_revision_rejected', 'older_sequence'],
    ]);
    assert.deepEqual(rejected[0].revision, rev(9, '0'));
    assert.deepEqual(rejected[1].revision, rev(3));
    assert.deepEqual(rejected[1].held, rev(5));
    assert.equal(rejected[0].message_id, 'q1');
    assert.equal(store.sessionPendingAction('s1'), 'clarification', 'the late inputs did not win');
    // Explaining changes nothing.
    assert.equal(store.version(), version);
    assert.equal(store.digest(), digest);
    assert.deepEqual(store.explain('s2').rejected, []);
  });

  test('a session the store does not know, and a quarantined one', () => {
    const store = loaded();
    const unknown = store.explain('nobody');
    assert.equal(unknown.known, false);
    assert.equal(unknown.current_turn.reason, 'awaiting_turn_list');
    assert.equal(unknown.turn_count, null);
    // Every answer unknown, each input it awaits named (SPEC §11), and the queries agree.
    assert.deepEqual(unknown.missing, ['awaiting_session_list', 'awaiting_turn_list', 'awaiting_message_page']);
    assert.deepEqual(unknown.pending_action, { value: null, known: false, reason: 'awaiting_session_list' });
    assert.equal(store.sessionPendingAction('nobody'), undefined);
    assert.deepEqual(unknown.permission, { pending: null, known: false, reason: 'awaiting_turn_list' });
    assert.equal(store.hasPendingPermission('nobody'), undefined);
    assert.deepEqual(store.explainOwner('no-task').missing, ['awaiting_task', 'awaiting_session_list']);
    assert.equal(store.pendingOwner('no-task'), undefined);
    store.applySessionEvent({ session_id: 's1', task_id: T, state: 'COMPLETED', updated_at: at(30) });
    const done = store.explain('s1');
    assert.deepEqual(done.current_turn, { id: null, known: true, reason: 'session_not_input_capable' });
    assert.deepEqual(done.turns.filter((t) => t.standing === 'quarantined').map((t) => t.id).sort(), ['turn-now', 'turn-old']);
    assert.ok(done.requests.every((r) => r.standing === 'discovery_closed'));
    assert.equal(store.pendingClarification('s1'), null);
  });

  test('bad ids are typed errors', () => {
    const store = loaded();
    const digest = store.digest();
    for (const bad of [undefined, null, 42, {}, ['s1']]) {
      assert.throws(() => store.explain(bad), (e) => e.name === 'TaskProjectionError' && e.field === 'sessionId');
    }
    assert.throws(() => store.explainOwner(T, 42), (e) => e.name === 'TaskProjectionError' && e.field === 'preferredSessionId');
    assert.equal(store.digest(), digest);
  });
});

describe('explainOwner(taskId)', () => {
  test('agrees with pendingOwner and lists the sessions and late summaries', () => {
    const store = loaded();
    store.applyStatusSummaryEvent({ task_id: T, status_summary: { revision: 7, pending_action: 'clarification' } });
    store.applyStatusSummaryEvent({ task_id: T, status_summary: { revision: 6, pending_action: null } });
    const e = store.explainOwner(T, 's2');
    assert.equal(e.owner.session_id, store.pendingOwner(T, 's2'));
    assert.deepEqual(e.owner, { session_id: 's1', known: true, reason: 'pending_owner' });
    assert.deepEqual(e.pending_action, { value: 'clarification', known: true, reason: 'status_summary_action' });
    assert.equal(e.summary_revision, 7);
    assert.deepEqual(e.preferred, { session_id: 's2', eligible: true });
    assert.deepEqual(e.sessions.map((s) => [s.id, s.state, s.is_primary, s.pending_action]), [
      ['s1', 'WAITING_FOR_INPUT', false, 'clarification'], ['s2', 'RUNNING', true, null],
    ]);
    assert.deepEqual(e.rejected.map((r) => [r.input, r.revision, r.held]), [['task.status_summary.updated', 6, 7]]);
    // Clean: the primary session is opened, and the explanation says so.
    store.applyStatusSummaryEvent({ task_id: T, status_summary: { revision: 8, pending_action: null } });
    const clean = store.explainOwner(T);
    assert.equal(clean.owner.session_id, store.pendingOwner(T) || null);
    assert.equal(clean.owner.reason, store.lastReason());
    assert.equal(store.explainOwner('no-task').known, false);
  });
});
