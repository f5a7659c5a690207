// js/subscription.js (storeSubscription) wired the way React's useSyncExternalStore uses it, with a fake
// consumer that follows React's contract: subscribe once with a change callback, read
// getSnapshot(), re-render only when the snapshot changed (Object.is), unsubscribe on unmount.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { storeSubscription } from '../../js/subscription.js';

const T = 'task-1';
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence) => ({ epoch: '1', sequence });
const question = (id, s, projection = {}) => ({
  message_id: id, session_id: 'sess-1', task_id: T, turn_id: 'turn-1', author_type: 'agent', type: 'clarification_request',
  metadata: { pending_id: 'p1', question_total: 1, status: 'pending' }, created_at: at(s), updated_at: at(s), content: '?', ...projection,
});
const text = (id, sessionId, s) => ({
  message_id: id, session_id: sessionId, task_id: T, turn_id: 'turn-1', author_type: 'agent', type: 'message',
  metadata: {}, created_at: at(s), updated_at: at(s), content: 'x',
});

/** A component `render()` mounted through a fake useSyncExternalStore(subscribe, getSnapshot). */
function mount(subscribe, getSnapshot, render) {
  const renders = [];
  let snapshot = getSnapshot();
  renders.push(render());
  const unsubscribe = subscribe(function onChange() {
    assert.equal(arguments.length, 0, 'React calls getSnapshot itself; onChange gets no arguments');
    const next = getSnapshot();
    if (Object.is(next, snapshot)) return;
    snapshot = next;
    renders.push(render());
  });
  return { renders, unmount: unsubscribe };
}

function runningStore() {
  const store = new ProjectionStore();
  store.applySessionList(T, [
    { id: 'sess-1', task_id: T, state: 'RUNNING', is_primary: true, pending_action: null, pending_action_revision: rev(1) },
    { id: 'sess-2', task_id: T, state: 'RUNNING', pending_action: null, pending_action_revision: rev(1) },
  ]);
  store.applyTurnList('sess-1', [{ id: 'turn-1', session_id: 'sess-1', started_at: at(0), created_at: at(0), completed_at: null }]);
  return store;
}

describe('storeSubscription (js/subscription.js)', () => {
  test('subscribe/getSnapshot work detached, as useSyncExternalStore calls them', async () => {
    const store = runningStore();
    const sub = storeSubscription(store);
    const { subscribe, getSnapshot } = sub; // React receives the functions, not the object
    assert.equal(getSnapshot(), store.version());
    const view = mount(subscribe, getSnapshot, () => store.pendingClarification('sess-1'));
    assert.deepEqual(view.renders, [null]);

    // A batch of three events: one notification, one re-render.
    store.applyMessageEvent('added', question('q1', 1, { pending_action: 'clarification', pending_action_revision: rev(2) }));
    store.applyMessageEvent('added', text('m2', 'sess-1', 2));
    store.applyMessageEvent('added', text('m3', 'sess-1', 3));
    await tick();
    assert.equal(view.renders.length, 2);
    assert.deepEqual(view.renders[1], { pending_id: 'p1', message_ids: ['q1'] });
    assert.equal(getSnapshot(), store.version());

    // A no-op (duplicate delivery) neither notifies nor re-renders.
    store.applyMessageEvent('added', text('m3', 'sess-1', 3));
    await tick();
    assert.equal(view.renders.length, 2);

    // A change of another session re-renders (the snapshot is store-wide) but the answer keeps its
    // identity, so memoized children (React.memo, useMemo deps) do not update.
    store.applyMessageEvent('added', text('m9', 'sess-2', 9));
    await tick();
    assert.equal(view.renders.length, 3);
    assert.equal(view.renders[2], view.renders[1], 'same bundle object');

    // Unmount: no more renders.
    view.unmount();
    store.applyMessageEvent('added', text('m4', 'sess-1', 4));
    await tick();
    assert.equal(view.renders.length, 3);
    store.free();
  });

  test('the subscription object is stable and frozen (no resubscribe churn)', () => {
    const store = runningStore();
    const sub = storeSubscription(store);
    assert.ok(Object.isFrozen(sub));
    assert.equal(sub.subscribe, sub.subscribe);
    assert.equal(sub.getSnapshot, sub.getSnapshot);
    assert.equal(typeof sub.subscribe(() => {}), 'function');
    store.free();
  });

  test('two components share one subscription and unmount independently', async () => {
    const store = runningStore();
    const sub = storeSubscription(store);
    const overlay = mount(sub.subscribe, sub.getSnapshot, () => store.pendingClarification('sess-1'));
    const badge = mount(sub.subscribe, sub.getSnapshot, () => store.sessionPendingAction('sess-1'));
    store.applyMessageEvent('added', question('q1', 1, { pending_action: 'clarification', pending_action_revision: rev(2) }));
    await tick();
    assert.deepEqual(badge.renders, [null, 'clarification']);
    assert.equal(overlay.renders.length, 2);
    overlay.unmount();
    store.applySessionEvent({ id: 'sess-1', task_id: T, state: 'RUNNING', pending_action: null, pending_action_revision: rev(3) });
    await tick();
    assert.deepEqual(badge.renders, [null, 'clarification', null]);
    assert.equal(overlay.renders.length, 2);
    badge.unmount();
    store.free();
  });

  test('works with any store exposing subscribe() and version()', async () => {
    let listener;
    let version = 0;
    const fake = { subscribe: (l) => ((listener = l), () => (listener = undefined)), version: () => version };
    const sub = storeSubscription(fake);
    const view = mount(sub.subscribe, sub.getSnapshot, () => version);
    version += 1;
    listener({ tasks: [], sessions: ['s'] });
    assert.deepEqual(view.renders, [0, 1]);
    view.unmount();
    assert.equal(listener, undefined);
  });
});
