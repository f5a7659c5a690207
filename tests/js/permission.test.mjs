// The user's answer to a permission (SPEC §13) through the store (`pendingPermission`,
// `respondStart(..., 'permission')`), `respond` with `kind: 'permission'` and `permissionBody`
// (task-projection/connect), and `usePermission` (task-projection/react), with a fake `fetch`
// standing for the server. Which permission can be answered is the store's rule: a pending row
// without `metadata.request_id` blocks the session (SPEC §3) but is shown expired and cannot be
// answered (the reference client's `parsePermission`); the stale codes settle it as no longer
// available; a late failure of an older request changes nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { act, createElement as h } from 'react';
import { ProjectionStore } from 'task-projection';
import { permissionBody, respond } from 'task-projection/connect';
import { ProjectionStoreProvider, useHasPendingPermission, usePermission } from '../../js/react.js';
import { createRoot, server } from './respond-support.mjs';


const T = 'task-1';
const S = 's1';
const at = (s) => `2026-12-06T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence) => ({ epoch: '1', sequence });
const OPTIONS = [
  { option_id: 'allow', name: 'Allow', kind: 'allow_once' },
  { option_id: 'deny', name: 'Deny', kind: 'reject_once' },
];

/** The app's permission row (as the reference server sends it). */
const row = (metadata, updated = 2) => ({
  id: 'perm-1', session_id: S, task_id: T, turn_id: 't1', author_type: 'agent', type: 'permission_request',
  metadata: { pending_id: 'pp-1', tool_call_id: 'tc-1', options: OPTIONS, status: 'pending', ...metadata },
  created_at: at(2), updated_at: at(updated),
});

function blocked(metadata = { request_id: 'req-1' }) {
  const store = new ProjectionStore();
  store.applySessionList(T, [{ id: S, task_id: T, state: 'WAITING_FOR_INPUT', started_at: at(0), updated_at: at(1), is_primary: true, pending_action: 'permission', pending_action_revision: rev(5) }]);
  store.applyTurnList(S, [{ id: 't1', session_id: S, task_id: T, started_at: at(1), created_at: at(1), updated_at: at(1), completed_at: null }]);
  store.applyMessagePage(S, [row(metadata)]);
  return store;
}


const approved = {
  status: 200,
  body: { success: true, session_id: S, pending_id: 'pp-1', request_id: 'req-1', message_id: 'perm-1', status: 'approved', session: { id: S, task_id: T, pending_action: null, pending_action_revision: rev(8) } },
};

describe('permissions in the store', () => {
  test('a pending row with its request_id can be answered; one without blocks but is expired', () => {
    const store = blocked();
    assert.deepEqual(store.pendingPermission(S), { messageId: 'perm-1', pendingId: 'pp-1', status: 'pending', answerable: true });
    const anonymous = blocked({ request_id: undefined });
    assert.equal(anonymous.hasPendingPermission(S), true);
    assert.deepEqual(anonymous.pendingPermission(S), { messageId: 'perm-1', pendingId: 'pp-1', status: 'expired', answerable: false });
    assert.throws(() => anonymous.respondStart(S, 'pp-1', 'permission'), { code: 'permission_expired', field: 'pendingId' });
    // The same through the fast path's fallback (an unusual row shape goes through the decoder).
    const decoded = blocked({ request_id: '', extra: [1] });
    assert.equal(decoded.pendingPermission(S).answerable, false);
    // A snapshot keeps what the rows say.
    assert.deepEqual(ProjectionStore.hydrate(store.dehydrate()).pendingPermission(S), store.pendingPermission(S));
    assert.deepEqual(ProjectionStore.hydrate(anonymous.dehydrate()).pendingPermission(S), anonymous.pendingPermission(S));
    // Unknown before the rows, and a bad kind is a typed error that changes nothing.
    assert.equal(new ProjectionStore().pendingPermission(S), undefined);
    const version = store.version();
    assert.throws(() => store.respondStart(S, 'pp-1', 'approve'), { code: 'invalid_value', field: 'kind' });
    assert.equal(store.version(), version);
  });

  test('a request_id of the wrong type is a typed error', () => {
    const store = blocked();
    const version = store.version();
    assert.throws(() => store.applyMessageEvent('updated', { ...row({ request_id: 7 }, 3), message_id: 'perm-1' }), { field: /metadata\.request_id$/ });
    assert.equal(store.version(), version);
  });
});

describe('respond with kind: "permission"', () => {
  test('approve: one request for a double click, the kandev body, settled at once', async () => {
    const store = blocked();
    const { fetch, calls } = server(approved);
    const body = permissionBody(row({ request_id: 'req-1' }), true, 'allow');
    assert.deepEqual(body, { task_id: T, session_id: S, request_id: 'req-1', pending_id: 'pp-1', option_id: 'allow', cancelled: false, rejected: false });
    const [a, b] = await Promise.all([
      respond(store, { kind: 'permission', sessionId: S, pendingId: 'pp-1', body, fetch }),
      respond(store, { kind: 'permission', sessionId: S, pendingId: 'pp-1', body, fetch }),
    ]);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].url, '/api/v1/permissions/respond');
    assert.equal(a, b);
    assert.equal(a.outcome, 'won');
    assert.equal(store.hasPendingPermission(S), false);
    assert.equal(store.pendingPermission(S), null);
    assert.equal(store.sessionPendingAction(S), null);
    // The REST page read before the answer, replayed: still settled.
    store.applyMessagePage(S, [row({ request_id: 'req-1' })]);
    assert.equal(store.pendingPermission(S), null);
  });

  test('the stale codes settle it as no longer available; an option not offered and a 503 hide nothing', async () => {
    for (const [status, code] of [[404, 'permission_not_found'], [409, 'permission_stale'], [409, 'permission_already_resolved']]) {
      const store = blocked();
      const { fetch } = server({ status, body: { error: { code, message: 'gone' } } });
      const result = await respond(store, { kind: 'permission', sessionId: S, pendingId: 'pp-1', body: permissionBody(row({ request_id: 'req-1' }), false, 'deny'), fetch });
      assert.equal(result.outcome, 'no_longer_active', code);
      assert.equal(store.pendingPermission(S), null, code);
    }
    const store = blocked();
    const { fetch, calls } = server({ status: 400, body: { error: { code: 'permission_option_not_offered' } } }, { status: 503, body: { error: { code: 'retryable_error' } } }, approved);
    const send = () => respond(store, { kind: 'permission', sessionId: S, pendingId: 'pp-1', body: permissionBody(row({ request_id: 'req-1' }), true, 'allow'), fetch });
    assert.equal((await send()).outcome, 'refused');
    assert.equal(store.pendingPermission(S).answerable, true);
    const failed = await send();
    assert.equal(failed.outcome, 'failed');
    assert.equal(failed.failure, 'retryable');
    assert.equal(store.pendingPermission(S).answerable, true);
    assert.equal((await send()).outcome, 'won');
    assert.equal(calls.length, 3);
    assert.equal(store.pendingPermission(S), null);
  });

  test('a deny without an option cancels; with one it rejects', () => {
    const message = row({ request_id: 'req-1' });
    assert.deepEqual(permissionBody(message, false), { task_id: T, session_id: S, request_id: 'req-1', pending_id: 'pp-1', cancelled: true, rejected: false });
    assert.deepEqual(permissionBody(message, false, 'deny'), { task_id: T, session_id: S, request_id: 'req-1', pending_id: 'pp-1', option_id: 'deny', cancelled: false, rejected: true });
    assert.throws(() => permissionBody(null, true, 'allow'), { code: 'invalid_type', field: 'message' });
  });
});

describe('usePermission (task-projection/react)', () => {
  test('the card shows submitting, then nothing; an expired one offers nothing', async () => {
    const store = blocked();
    const { fetch, calls } = server(approved);
    const rows = new Map([['perm-1', row({ request_id: 'req-1' })]]);
    const seen = [];
    let hook;
    function Card() {
      hook = usePermission(S, { fetch });
      const blockedNow = useHasPendingPermission(S);
      const { permission, submitting } = hook;
      seen.push({ blocked: blockedNow, submitting });
      if (permission === undefined) return h('p', null, 'Loading…');
      if (permission === null) return h('p', null, 'Nothing needs you.');
      if (!permission.answerable) return h('p', null, 'Expired');
      return h('p', null, submitting ? 'Sending…' : 'Allow?');
    }
    const container = document.createElement('div');
    const root = createRoot(container);
    await act(async () => root.render(h(ProjectionStoreProvider, { store }, h(Card))));
    assert.equal(container.textContent, 'Allow?');
    let approving;
    await act(async () => {
      const message = rows.get(hook.permission.messageId);
      approving = hook.approve(message, 'allow');
      hook.approve(message, 'allow');
    });
    await act(async () => {
      await approving;
    });
    assert.equal(calls.length, 1);
    assert.equal(JSON.parse(calls[0].init.body).option_id, 'allow');
    assert.equal(container.textContent, 'Nothing needs you.');
    assert.ok(seen.some((s) => s.submitting && s.blocked === true), JSON.stringify(seen));
    assert.equal(hook.result.outcome, 'won');
    await act(async () => root.unmount());

    const expired = blocked({ request_id: undefined });
    const other = document.createElement('div');
    const second = createRoot(other);
    await act(async () => second.render(h(ProjectionStoreProvider, { store: expired }, h(Card))));
    assert.equal(other.textContent, 'Expired');
    await assert.rejects(() => hook.approve(row({}), 'allow'), { code: 'permission_expired' });
    await act(async () => second.unmount());
  });
});
