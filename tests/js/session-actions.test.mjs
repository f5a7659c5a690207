// Deleting a session and what the user may do now (SPEC §5, §13) through the package: the
// `session.deleted` frame and `removeSession` leave a tombstone (an older list does not bring the
// session back, the owner never picks it, a snapshot keeps it), `sessionAfterDelete` opens the
// newest remaining session, and `offeredActions` / `useOfferedActions` say which actions to show.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { act, createElement as h } from 'react';
import { ProjectionStore } from 'task-projection';
import { ProjectionStoreProvider, useOfferedActions } from '../../js/react.js';
import { createRoot } from './respond-support.mjs';


const T = 'task-1';
const at = (s) => `2026-12-06T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence) => ({ epoch: '1', sequence });
const session = (id, action, sequence, primary = false, state = 'WAITING_FOR_INPUT') => ({
  id, task_id: T, state, started_at: at(sequence), updated_at: at(1), is_primary: primary, pending_action: action, pending_action_revision: rev(sequence),
});
// Newest first, as the server lists them.
const LIST = [session('s3', null, 3), session('s2', 'permission', 2, true), session('s1', null, 1)];

describe('deleting a session', () => {
  test('the frame leaves a tombstone: an older list, an event, the owner rule, a snapshot', () => {
    const store = new ProjectionStore();
    store.applySessionList(T, LIST);
    assert.equal(store.pendingOwner(T), 's2');
    assert.equal(store.taskPendingAction(T), 'permission');
    const out = store.applyFrame({ type: 'session.deleted', payload: { session_id: 's2', task_id: T, workspace_id: 'w' } });
    assert.equal(out.applied, true);
    assert.equal(store.taskPendingAction(T), null);
    assert.equal(store.sessionPendingAction('s2'), null);
    assert.notEqual(store.pendingOwner(T, 's2'), 's2');
    store.applySessionList(T, LIST);
    store.applySessionEvent(session('s2', 'permission', 9, true));
    assert.equal(store.taskPendingAction(T), null);
    const hydrated = ProjectionStore.hydrate(store.dehydrate());
    hydrated.applySessionList(T, LIST);
    assert.equal(hydrated.taskPendingAction(T), null);
    assert.notEqual(hydrated.pendingOwner(T, 's2'), 's2');
    // A malformed frame changes nothing.
    const version = store.version();
    assert.throws(() => store.applyFrame({ type: 'session.deleted', payload: { session_id: 7 } }), { code: 'invalid_type' });
    assert.throws(() => store.applyFrame({ type: 'session.deleted', payload: 'x' }), { code: 'invalid_type' });
    assert.equal(store.version(), version);
  });

  test('removeSession (the reply of the app\'s delete) and the session to open next', () => {
    const store = new ProjectionStore();
    assert.equal(store.sessionAfterDelete(T, 's3', 's3'), undefined);
    store.applySessionList(T, LIST);
    store.removeSession('s3');
    assert.equal(store.sessionAfterDelete(T, 's1', 's3'), 's1');
    assert.equal(store.sessionAfterDelete(T, 's3', 's3'), 's2');
    assert.equal(store.sessionAfterDelete(T, null, 's3'), null);
    store.removeSession('s2');
    store.removeSession('s1');
    assert.equal(store.sessionAfterDelete(T, 's1', 's1'), null);
    assert.throws(() => store.removeSession(1), { code: 'invalid_type', field: 'sessionId' });
  });
});

describe('what the user may do now', () => {
  function waiting(detached) {
    const store = new ProjectionStore();
    store.applySessionList(T, [session('s1', 'clarification', 5, true)]);
    store.applyTurnList('s1', [{ id: 't1', session_id: 's1', task_id: T, started_at: at(1), created_at: at(1), updated_at: at(1), completed_at: null }]);
    store.applyMessagePage('s1', [{ id: 'q1', session_id: 's1', task_id: T, turn_id: 't1', type: 'clarification_request', metadata: { pending_id: 'p1', status: 'pending', ...(detached ? { agent_disconnected: true } : {}) }, created_at: at(2), updated_at: at(2) }]);
    return store;
  }

  test('a live question offers answering and stopping; a detached one nothing to stop', () => {
    assert.equal(new ProjectionStore().offeredActions('s1'), undefined);
    assert.deepEqual(waiting(false).offeredActions('s1'), { respond: true, cancel: true, send: false });
    assert.deepEqual(waiting(true).offeredActions('s1'), { respond: true, cancel: false, send: false });
    const store = waiting(false);
    store.respondStart('s1', 'p1');
    assert.deepEqual(store.offeredActions('s1'), { respond: false, cancel: true, send: false });
  });

  test('useOfferedActions re-renders when the answer changes, not before', async () => {
    const store = waiting(false);
    let renders = 0;
    function Actions() {
      renders++;
      const offered = useOfferedActions('s1');
      return h('p', null, offered === undefined ? 'Loading…' : Object.entries(offered).filter(([, v]) => v).map(([k]) => k).join(','));
    }
    const container = document.createElement('div');
    const root = createRoot(container);
    await act(async () => root.render(h(ProjectionStoreProvider, { store }, h(Actions))));
    assert.equal(container.textContent, 'respond,cancel');
    const before = renders;
    // An input that changes nothing this hook reads.
    await act(async () => store.applySessionEvent(session('s1', 'clarification', 6, true)));
    assert.equal(renders, before);
    const { attempt } = store.respondStart('s1', 'p1');
    await act(async () => {});
    assert.equal(container.textContent, 'cancel');
    await act(async () => store.respondReply(attempt, { status: 200, body: { success: true, claimed: true } }));
    assert.equal(container.textContent, 'send');
    await act(async () => root.unmount());
  });
});
