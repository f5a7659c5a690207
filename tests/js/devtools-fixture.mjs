// The stores the devtools tests show (tests/js/devtools.test.mjs in Node with happy-dom,
// tests/js/devtools.browser.test.mjs in Chromium, which loads this file from the static server):
// plain functions over a store of any entry, no imports.
//
// `scenario(store)`: two tasks. task-1 waits for an answer in sess-1 (a question of turn-2 shown,
// one of turn-1 overtaken, a late frame from before a server restart rejected); sess-2 is listed
// and idle; sess-3 is listed but its turns and messages have not loaded (its question is not known
// yet). task-2 is known from the task list only (its sessions have not loaded: its owner is not
// known yet). sess-x was heard of from an event only (its task, task-9, is not held).
export const at = (s) => `2026-12-01T09:00:${String(s).padStart(2, '0')}Z`;

export function scenario(store) {
  const token = store.beginTaskFetch();
  store.applyTaskSnapshot(token, [
    { id: 'task-1', status_summary: { revision: 3, pending_action: 'clarification' } },
    { id: 'task-2', status_summary: { revision: 1, pending_action: null } },
  ]);
  store.applySessionList('task-1', [
    { id: 'sess-1', task_id: 'task-1', state: 'WAITING_FOR_INPUT', is_primary: true, updated_at: at(5), pending_action: 'clarification', pending_action_revision: { epoch: '2', sequence: 3 } },
    { id: 'sess-2', task_id: 'task-1', state: 'IDLE', updated_at: at(4), pending_action: null, pending_action_revision: { epoch: '2', sequence: 1 } },
    { id: 'sess-3', task_id: 'task-1', state: 'RUNNING', updated_at: at(4), pending_action: null, pending_action_revision: { epoch: '2', sequence: 1 } },
  ]);
  store.applyTurnList('sess-1', [
    { id: 'turn-1', started_at: at(1), created_at: at(1), completed_at: at(2) },
    { id: 'turn-2', started_at: at(3), created_at: at(3), completed_at: null },
  ]);
  const ask = (id, turn, s, index = 0, total = 1, pending = `p-${id}`) => ({
    message_id: id, session_id: 'sess-1', turn_id: turn, type: 'clarification_request', created_at: at(s), updated_at: at(s),
    metadata: { pending_id: pending, question_index: index, question_total: total },
  });
  store.applyMessagePage('sess-1', [ask('q-old', 'turn-1', 1), ask('q-a', 'turn-2', 4, 0, 2, 'p-new'), ask('q-b', 'turn-2', 5, 1, 2, 'p-new')]);
  store.applyTurnList('sess-2', [{ id: 'turn-9', started_at: at(1), created_at: at(1), completed_at: at(2) }]);
  store.applyMessagePage('sess-2', []);
  // A frame from before the server restarted (epoch 1) arrives late: rejected.
  store.applySessionEvent({ session_id: 'sess-1', task_id: 'task-1', pending_action: null, pending_action_revision: { epoch: '1', sequence: 9 } });
  // A session heard of from an event only, without its projection: nothing about it is known yet.
  store.applySessionEvent({ session_id: 'sess-x', task_id: 'task-9', state: 'RUNNING', updated_at: at(6) });
  return store;
}

/** `n` more sessions, in tasks of 10, each listed with its turns and messages loaded (a large store). */
export function manySessions(store, n) {
  for (let t = 0; t < n / 10; t++) {
    const task = `bulk-task-${String(t).padStart(5, '0')}`;
    const sessions = [];
    for (let i = 0; i < 10 && t * 10 + i < n; i++) {
      const id = `bulk-sess-${String(t * 10 + i).padStart(5, '0')}`;
      sessions.push({ id, task_id: task, state: i === 0 ? 'WAITING_FOR_INPUT' : 'RUNNING', updated_at: at(1), pending_action: i === 0 ? 'permission' : null, pending_action_revision: { epoch: '1', sequence: 1 } });
    }
    store.applySessionList(task, sessions);
  }
  return store;
}

/** Every answer the panel shows, of every id it could show: to compare before and after. */
export function answersOf(store, sessions, tasks) {
  const out = {};
  for (const id of sessions) {
    out[`s:${id}`] = [store.sessionPendingAction(id), store.pendingClarification(id), store.currentTurnId(id), store.hasPendingPermission(id), store.hiddenMessageIds(id)];
  }
  for (const id of tasks) out[`t:${id}`] = [store.taskPendingAction(id), store.pendingOwner(id), store.taskStatusSummary(id)];
  return out;
}
