// The reference client's own tests (kdlbs/kandev, apps/web) for answering a permission and
// deleting a session, ported to this package where the decision is the engine's.
//
// components/task/chat/messages/use-permission-handlers.test.ts:
//   ported  handleApprove "sends cancelled=false and rejected=false" (the body's ids and flags)
//   ported  request identity "treats a cached pre-generation request as expired and unanswerable"
//   ported  request identity "expires the cached card ... when the executor response is stale"
//   ported  request identity "ignores a stale response failure after a replacement generation
//           arrives" (a reply to an attempt that is no longer current changes nothing)
//   ported  handleReject "sends rejected=true and cancelled=false when a reject option exists"
//   ported  handleReject "falls back to cancelled=true when no reject option exists"
//   n/a     handleApprove "prefers allow_once over allow_always", "falls back to allow_always",
//           handleAllowAlways (both cases): which option a button means is the app's choice here
//           (`approve(message, optionId)` takes the option the user clicked), not the engine's.
//   n/a     "resets unavailable state when a replacement generation arrives": kandev keys the card
//           by `request_id`; this store keeps no request id (only whether one is present), so a
//           settled permission shows again only by a newer revision from the server (SPEC §13).
//   n/a     toasts (the app's words).
// hooks/domains/session/use-session-actions.test.ts:
//   ported  remove "removes from store" (the session's answers known and clean, never the owner)
//   ported  remove "hands off to most-recent remaining session when active was deleted"
//   ported  remove "clears active session when no other sessions remain"
//   n/a     remove "no-ops when WS request fails (store untouched)": the app calls removeSession
//           only after its delete succeeded; the store is not told otherwise
//   n/a     setPrimary, stop, resume, the Quick Chat task delete, the state predicates and the
//           toasts: transport and wording of the app, not decisions of the engine.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { permissionBody, respond } from 'task-projection/connect';

const at = (s) => `2026-05-25T00:00:${String(s).padStart(2, '0')}Z`;
const ALLOW_ONCE = { option_id: 'allow', name: 'Allow', kind: 'allow_once' };
const REJECT_ONCE = { option_id: 'deny', name: 'Deny', kind: 'reject_once' };

function makePermissionMessage(metadata = {}) {
  return {
    id: 'msg-1', session_id: 'sess-1', task_id: 'task-1', author_type: 'agent', content: '', type: 'permission_request', turn_id: 't1',
    created_at: at(0), updated_at: at(0),
    metadata: { request_id: 'req-1', pending_id: 'pend-1', tool_call_id: 'tc-1', action_type: 'mcp_tool', action_details: {}, options: [ALLOW_ONCE, REJECT_ONCE], ...metadata },
  };
}

function storeWith(message) {
  const store = new ProjectionStore();
  store.applySessionList('task-1', [{ id: 'sess-1', task_id: 'task-1', state: 'WAITING_FOR_INPUT', updated_at: at(0), is_primary: true, pending_action: 'permission', pending_action_revision: { epoch: '1', sequence: 1 } }]);
  store.applyTurnList('sess-1', [{ id: 't1', session_id: 'sess-1', started_at: at(0), created_at: at(0), completed_at: null }]);
  store.applyMessagePage('sess-1', [message]);
  return store;
}

function server(...replies) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push(JSON.parse(init.body));
    const reply = replies.shift() ?? { status: 200, body: { success: true } };
    await new Promise((r) => setTimeout(r, reply.delay ?? 1));
    return { status: reply.status, text: async () => JSON.stringify(reply.body) };
  };
  return { fetch, calls };
}

const send = (store, fetch, body) => respond(store, { kind: 'permission', sessionId: 'sess-1', pendingId: 'pend-1', body, fetch });

describe('use-permission-handlers (ported)', () => {
  test('handleApprove sends cancelled=false and rejected=false', async () => {
    const message = makePermissionMessage();
    const store = storeWith(message);
    const { fetch, calls } = server();
    await send(store, fetch, permissionBody(message, true, ALLOW_ONCE.option_id));
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0], { task_id: 'task-1', session_id: 'sess-1', request_id: 'req-1', pending_id: 'pend-1', option_id: 'allow', cancelled: false, rejected: false });
  });

  test('treats a cached pre-generation request as expired and unanswerable', () => {
    const message = makePermissionMessage({ request_id: undefined });
    const store = storeWith(message);
    assert.equal(store.pendingPermission('sess-1').status, 'expired');
    assert.equal(store.pendingPermission('sess-1').answerable, false);
    const { fetch, calls } = server();
    assert.throws(() => send(store, fetch, permissionBody(message, true, 'allow')), { code: 'permission_expired' });
    assert.equal(calls.length, 0);
  });

  test('expires the cached card when the executor response is stale', async () => {
    const message = makePermissionMessage();
    const store = storeWith(message);
    const { fetch } = server({ status: 404, body: { error: { code: 'permission_not_found' } } });
    const result = await send(store, fetch, permissionBody(message, true, 'allow'));
    assert.equal(result.outcome, 'no_longer_active');
    assert.equal(store.pendingPermission('sess-1'), null);
  });

  test('ignores a stale response failure after a newer attempt', async () => {
    const message = makePermissionMessage();
    const store = storeWith(message);
    // The first request times out (a failure: the card stays); the retry wins; the first one's
    // late reply changes nothing.
    const first = store.respondStart('sess-1', 'pend-1', 'permission');
    store.respondReply(first.attempt, { error: 'timeout' });
    const second = store.respondStart('sess-1', 'pend-1', 'permission');
    assert.equal(store.respondReply(second.attempt, { status: 200, body: { success: true } }).outcome, 'won');
    const late = store.respondReply(first.attempt, { status: 500, body: { error: { code: 'internal' } } });
    assert.equal(late.applied, false);
    assert.equal(late.reason, 'attempt_superseded');
    assert.equal(store.pendingPermission('sess-1'), null);
  });

  test('handleReject sends rejected=true and cancelled=false when a reject option exists', () => {
    const body = permissionBody(makePermissionMessage(), false, REJECT_ONCE.option_id);
    assert.equal(body.option_id, 'deny');
    assert.equal(body.rejected, true);
    assert.equal(body.cancelled, false);
  });

  test('handleReject falls back to cancelled=true when no reject option exists', () => {
    const body = permissionBody(makePermissionMessage({ options: [ALLOW_ONCE] }), false);
    assert.equal(body.cancelled, true);
    assert.equal(body.rejected, false);
    assert.equal('option_id' in body, false);
  });
});

describe('use-session-actions remove (ported)', () => {
  const sessions = [
    { id: 's3', task_id: 't', state: 'COMPLETED', started_at: at(3), updated_at: at(3), is_primary: false, pending_action: null },
    { id: 's2', task_id: 't', state: 'COMPLETED', started_at: at(2), updated_at: at(2), is_primary: false, pending_action: null },
    { id: 's1', task_id: 't', state: 'WAITING_FOR_INPUT', started_at: at(1), updated_at: at(1), is_primary: true, pending_action: 'clarification' },
  ];

  test('remove removes the session from the store', () => {
    const store = new ProjectionStore();
    store.applySessionList('t', sessions);
    assert.equal(store.pendingOwner('t'), 's1');
    store.removeSession('s1');
    assert.equal(store.sessionPendingAction('s1'), null);
    assert.equal(store.taskPendingAction('t'), null);
    assert.notEqual(store.pendingOwner('t', 's1'), 's1');
  });

  test('remove hands off to the most recent remaining session when the active one was deleted', () => {
    const store = new ProjectionStore();
    store.applySessionList('t', sessions);
    store.removeSession('s3');
    assert.equal(store.sessionAfterDelete('t', 's3', 's3'), 's2');
  });

  test('remove clears the active session when no other sessions remain', () => {
    const store = new ProjectionStore();
    store.applySessionList('t', [sessions[0]]);
    store.removeSession('s3');
    assert.equal(store.sessionAfterDelete('t', 's3', 's3'), null);
  });
});

describe('a reply that changes nothing says why, in explain (development build)', async () => {
  const { ProjectionStore: Development } = await import('task-projection/development');
  test('attempt_superseded and already_replied are in the rejected inputs, and survive a snapshot', () => {
    const store = new Development();
    store.applySessionList('task-1', [{ id: 'sess-1', task_id: 'task-1', state: 'WAITING_FOR_INPUT', updated_at: at(0), is_primary: true, pending_action: 'permission', pending_action_revision: { epoch: '1', sequence: 1 } }]);
    store.applyTurnList('sess-1', [{ id: 't1', session_id: 'sess-1', started_at: at(0), created_at: at(0), completed_at: null }]);
    store.applyMessagePage('sess-1', [makePermissionMessage()]);
    const first = store.respondStart('sess-1', 'pend-1', 'permission');
    store.respondReply(first.attempt, { error: 'network' });
    const second = store.respondStart('sess-1', 'pend-1', 'permission');
    store.respondReply(second.attempt, { status: 200, body: { success: true } });
    assert.equal(store.respondReply(first.attempt, { status: 200, body: { success: true } }).reason, 'attempt_superseded');
    assert.equal(store.respondReply(second.attempt, { status: 200, body: { success: true } }).reason, 'already_replied');
    const rejected = store.explain('sess-1').rejected.filter((r) => r.input === 'respond_reply').map((r) => r.reason);
    assert.deepEqual(rejected.sort(), ['already_replied', 'attempt_superseded']);
    const hydrated = Development.hydrate(store.dehydrate());
    assert.deepEqual(hydrated.explain('sess-1').rejected, store.explain('sess-1').rejected);
  });
});
