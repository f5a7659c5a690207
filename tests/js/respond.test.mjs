// `respond` (task-projection/connect) and `useRespond` (task-projection/react): the user's answer
// posted and fed to the store (SPEC §13) with a fake `fetch` standing for the server: a double
// click sends one request, the reply alone settles the question over a silent socket, a 503 or a
// network failure hides nothing and the retry is a new request, a 409 settles, the reply's
// position is applied, and the hook renders the overlay's states with React.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { act, createElement as h } from 'react';
import { ProjectionStore } from 'task-projection';
import { respond } from 'task-projection/connect';
import { ProjectionStoreProvider, useRespond, usePendingClarification } from '../../js/react.js';
import { createRoot, server } from './respond-support.mjs';


const T = 'task-1';
const S = 's1';
const at = (s) => `2026-12-06T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence) => ({ epoch: '1', sequence });

function waiting() {
  const store = new ProjectionStore();
  store.applySessionList(T, [{ id: S, task_id: T, state: 'WAITING_FOR_INPUT', started_at: at(0), updated_at: at(1), is_primary: true, pending_action: 'clarification', pending_action_revision: rev(5) }]);
  store.applyTurnList(S, [{ id: 't1', session_id: S, task_id: T, started_at: at(1), created_at: at(1), updated_at: at(1), completed_at: null }]);
  store.applyMessagePage(S, [{ id: 'm1', session_id: S, task_id: T, turn_id: 't1', author_type: 'agent', type: 'clarification_request', metadata: { pending_id: 'p1', status: 'pending' }, created_at: at(2), updated_at: at(2) }]);
  store.applyStatusSummaryEvent({ task_id: T, status_summary: { revision: 3, updated_at: at(2), pending_action: 'clarification' } });
  return store;
}


const won = (sequence = 8, summaryRevision = 4) => ({
  status: 200,
  body: {
    outcome: 'success', result: 'success', state: 'active_live', success: true, claimed: true, status: 'answered',
    response: { pending_id: 'p1', answers: [{ question_id: 'q1', custom_text: 'yes' }], rejected: false },
    session: { id: S, task_id: T, pending_action: null, pending_action_revision: rev(sequence) },
    status_summary: { revision: summaryRevision, updated_at: at(9) },
  },
});
const body = { answers: [{ question_id: 'q1', answer: 'yes' }] };

describe('respond (task-projection/connect)', () => {
  test('a double click sends one request; the reply alone settles the session and the task', async () => {
    const store = waiting();
    const { fetch, calls } = server(won());
    const first = respond(store, { sessionId: S, pendingId: 'p1', body, fetch });
    const second = respond(store, { sessionId: S, pendingId: 'p1', body, fetch });
    assert.equal(store.respondState(S, 'p1').phase, 'in_flight');
    assert.equal(store.pendingClarification(S).pending_id, 'p1');
    const [a, b] = await Promise.all([first, second]);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].url, '/api/v1/clarification/p1/respond');
    assert.equal(calls[0].init.method, 'POST');
    assert.deepEqual(JSON.parse(calls[0].init.body), body);
    assert.equal(a, b);
    assert.equal(a.outcome, 'won');
    assert.equal(a.applied, true);
    assert.equal(store.pendingClarification(S), null);
    assert.equal(store.sessionPendingAction(S), null);
    assert.equal(store.taskPendingAction(T), null);
  });

  test('503, then the retry wins; a late older frame does not bring the question back', async () => {
    const store = waiting();
    const { fetch, calls } = server({ status: 503, body: { outcome: 'retryable_error', error: { code: 'retryable_error' } } }, won());
    const failed = await respond(store, { sessionId: S, pendingId: 'p1', body, fetch });
    assert.deepEqual([failed.outcome, failed.failure, failed.status], ['failed', 'retryable', 503]);
    assert.equal(store.pendingClarification(S).pending_id, 'p1');
    // The attempted body comes back for the retry.
    assert.equal(failed.sent, body);
    const retried = await respond(store, { sessionId: S, pendingId: 'p1', body: failed.sent, fetch });
    assert.equal(calls.length, 2);
    assert.notEqual(retried.attempt, failed.attempt);
    assert.equal(retried.outcome, 'won');
    store.applyMessageEvent('updated', { message_id: 'm1', session_id: S, task_id: T, turn_id: 't1', type: 'clarification_request', metadata: { pending_id: 'p1', status: 'pending' }, created_at: at(2), updated_at: at(2), pending_action: 'clarification', pending_action_revision: rev(6) });
    assert.equal(store.pendingClarification(S), null);
    assert.equal(store.sessionPendingAction(S), null);
  });

  test('409, a lost race, a network failure, a timeout and a body that is not JSON', async () => {
    for (const [reply, outcome, shown] of [
      [{ status: 409, body: { error: { code: 'clarification_not_active' } } }, 'no_longer_active', false],
      [{ status: 200, body: { success: true, claimed: false, status: 'rejected', response: { rejected: true } } }, 'lost', false],
      [new TypeError('fetch failed'), 'failed', true],
      [{ status: 502, body: '<html>bad gateway</html>' }, 'failed', true],
      [{ status: 200, body: { claimed: 'yes' } }, 'failed', true],
    ]) {
      const store = waiting();
      const { fetch } = server(reply);
      const result = await respond(store, { sessionId: S, pendingId: 'p1', body, fetch });
      assert.equal(result.outcome, outcome, JSON.stringify(reply));
      assert.equal(store.pendingClarification(S)?.pending_id ?? null, shown ? 'p1' : null);
      if (outcome === 'lost') assert.deepEqual(result.response, { rejected: true });
    }
    const store = waiting();
    const never = () => new Promise((_, reject) => setTimeout(() => reject(new Error('aborted')), 50));
    const timedOut = await respond(store, { sessionId: S, pendingId: 'p1', body, fetch: never, timeoutMs: 10 });
    assert.deepEqual([timedOut.outcome, timedOut.failure], ['failed', 'timeout']);
  });

  test('a bundle that is not live is refused before any request', async () => {
    const store = waiting();
    const { fetch, calls } = server();
    assert.throws(() => respond(store, { sessionId: S, pendingId: 'p9', body, fetch }), { code: 'bundle_not_live' });
    assert.throws(() => respond(store, { sessionId: S, pendingId: 'p1', body: null, fetch }), { code: 'invalid_type', field: 'options.body' });
    assert.equal(calls.length, 0);
  });
});

describe('useRespond (task-projection/react)', () => {
  test('the overlay shows submitting, then the question leaves; skip sends the reject body', async () => {
    const store = waiting();
    const { fetch, calls } = server({ status: 200, body: { success: true, claimed: true, status: 'rejected' } });
    const seen = [];
    let hook;
    function Overlay() {
      hook = useRespond(S, 'p1', { fetch });
      const question = usePendingClarification(S);
      seen.push({ question: question?.pending_id ?? null, submitting: hook.submitting });
      return h('p', null, question === null ? 'Nothing needs you.' : hook.submitting ? 'Sending…' : 'Answer');
    }
    const container = document.createElement('div');
    const root = createRoot(container);
    await act(async () => root.render(h(ProjectionStoreProvider, { store }, h(Overlay))));
    assert.equal(container.textContent, 'Answer');
    let skipped;
    await act(async () => {
      skipped = hook.skip();
      hook.skip();
    });
    await act(async () => {
      await skipped;
    });
    assert.equal(calls.length, 1);
    assert.deepEqual(JSON.parse(calls[0].init.body), { reject: true });
    assert.equal(container.textContent, 'Nothing needs you.');
    assert.ok(seen.some((s) => s.submitting && s.question === 'p1'), JSON.stringify(seen));
    assert.equal(hook.result.outcome, 'won');
    await act(async () => root.unmount());
  });
});
