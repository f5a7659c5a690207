// The reference client's tests of its clarification overlay hook, ported to this package
// (kandev apps/web/hooks/domains/session/use-clarification-group.test.ts, against
// use-clarification-group.ts): each case that applies, against `respond` / `useRespond` and the
// store (SPEC §13), with a fake `fetch` standing for the server and React under happy-dom as in
// tests/js/respond.test.mjs. Their `submitState === "ok"` is a settled outcome here (`won`,
// `lost`, `no_longer_active`: the question leaves), `"error"` one that hides nothing (`refused`,
// `failed`).
//
// Not applicable (the reference hook's own state, which this package leaves to the app):
// - "recordAnswer updates local state without posting", "clearAnswer removes the entry and
//   decrements answeredCount", "submitCollected with override merges the freshly recorded
//   answer", and the "only when every question has an answer" half of "submitCollected POSTs the
//   batch only when every question has an answer": the answers being drafted (per question, the
//   answered count, the override) are the app's form state; `respond` posts the body it is given.
// - "submitCollected / skipAll sends credentials: include": `respond` sends
//   `credentials: 'same-origin'`; an app whose API is on another origin passes its own `fetch`
//   (which sets its credentials). Not a rule of the engine.
// - "submitCollected / skipAll stays 'ok' when the optimistic store update throws": the package
//   makes no optimistic row write (a settlement is the store's own state, SPEC §13); the nearest
//   case, a reply whose position the store refuses, is ported below ("a malformed position").
//
// Ported with a different expectation, by design (SPEC §13):
// - Their fetch mock answers `200` with an empty body and expects "ok" ("older backend", and the
//   default mock of every case): here a 2xx that says neither `claimed`, `outcome` nor
//   `success: true` is `failed` (`unreadable`: whether the answer was taken is not known), so the
//   question stays answerable and the retry learns the truth. The cases below answer the envelope
//   the reference server sends, and "claimed absent, empty body" is ported with that expectation.
// - "the optimistic update targets the submit-time bundle": the reply settles the bundle that was
//   started (the attempt names it), never the one live when it resolves.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Window } from 'happy-dom';
import { act, createElement as h } from 'react';
import { ProjectionStore } from 'task-projection';
import { respond } from 'task-projection/connect';
import { ProjectionStoreProvider, useRespond } from '../../js/react.js';

const dom = new Window({ url: 'http://localhost/' });
Object.assign(globalThis, { window: dom, document: dom.document, IS_REACT_ACT_ENVIRONMENT: true });
if (globalThis.navigator === undefined) globalThis.navigator = dom.navigator;
const { createRoot } = await import('react-dom/client');
after(() => dom.happyDOM.close());

const T = 't1';
const S = 's1';
const at = (s) => `2026-05-04T00:00:${String(s).padStart(2, '0')}.000000000Z`;
const rev = (sequence) => ({ epoch: '1', sequence });

/** Their `clarMessage`: a pending question of bundle `pendingId` in turn u1. */
const clarMessage = ({ id, pendingId, questionId, index, total, created = 2 }) => ({
  id, session_id: S, task_id: T, turn_id: 'u1', author_type: 'agent', content: 'Q', type: 'clarification_request',
  metadata: { pending_id: pendingId, question_id: questionId, question_index: index, question_total: total, status: 'pending', question: { id: questionId, prompt: 'Q?' } },
  created_at: at(created), updated_at: at(created),
});

/** A store whose session s1 shows `messages` (turns and a page loaded, projected clarification). */
function storeWith(messages) {
  const store = new ProjectionStore();
  store.applySessionList(T, [{ id: S, task_id: T, state: 'WAITING_FOR_INPUT', started_at: at(0), updated_at: at(1), is_primary: true, pending_action: messages.length > 0 ? 'clarification' : null, pending_action_revision: rev(5) }]);
  store.applyTurnList(S, [{ id: 'u1', session_id: S, task_id: T, started_at: at(1), created_at: at(1), updated_at: at(1), completed_at: null }]);
  store.applyMessagePage(S, messages);
  return store;
}

const twoQuestions = () => [
  clarMessage({ id: 'm1', pendingId: 'p1', questionId: 'q1', index: 0, total: 2 }),
  clarMessage({ id: 'm2', pendingId: 'p1', questionId: 'q2', index: 1, total: 2 }),
];
const oneQuestion = () => [clarMessage({ id: 'm1', pendingId: 'p1', questionId: 'q1', index: 0, total: 1 })];

/** A fake server: each call answers the next reply (`{ status, body }`, a body string as is, or a
 * function returning a promise of one); calls recorded. */
function server(...replies) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    let reply = replies.shift() ?? won();
    if (typeof reply === 'function') reply = await reply();
    return { status: reply.status, text: async () => (reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)) };
  };
  return { fetch, calls };
}

/** The reference server's reply when this call won (server/src/http/actions.rs). */
const won = (status = 'answered', pendingId = 'p1', action = null) => ({
  status: 200,
  body: {
    outcome: 'success', success: true, claimed: true, status,
    response: { pending_id: pendingId, answers: [], rejected: status === 'rejected' },
    session: { id: S, task_id: T, pending_action: action, pending_action_revision: rev(9) },
  },
});
/** Their `mockLostRaceResponse`: another caller won, with these answers. */
const lostTo = (status, answers) => ({ status: 200, body: { success: true, claimed: false, status, response: answers ? { pending_id: 'p1', answers } : null } });

/** Renders `useRespond(S, pendingId, options)` in a provider; `hook()` is its latest value. */
async function renderRespond(store, pendingId, options) {
  let latest;
  function Probe() {
    latest = useRespond(S, pendingId, options);
    return h('p', null, latest.submitting ? 'sending' : 'idle');
  }
  const root = createRoot(document.createElement('div'));
  await act(async () => root.render(h(ProjectionStoreProvider, { store }, h(Probe))));
  return { hook: () => latest, unmount: () => act(async () => root.unmount()) };
}

const live = (store) => store.pendingClarification(S);

describe('useClarificationGroup — derived state (ported: the store answers it)', () => {
  test('derives total + pendingId from the message bundle', () => {
    const store = storeWith(twoQuestions());
    assert.deepEqual(live(store), { pending_id: 'p1', message_ids: ['m1', 'm2'] });
    assert.equal(live(store).message_ids.length, 2);
  });

  test('returns null pendingId when there are no messages', () => {
    assert.equal(live(storeWith([])), null);
    assert.deepEqual(storeWith([]).hiddenMessageIds(S), []);
  });
});

describe('useClarificationGroup — submit + skip', () => {
  test('submit POSTs the batch to the bundle\'s respond URL, and the question leaves', async () => {
    const store = storeWith(twoQuestions());
    const { fetch, calls } = server(won());
    const r = await renderRespond(store, 'p1', { fetch, baseUrl: 'https://api.test' });
    const body = { answers: [{ question_id: 'q1', selected_options: ['o1'] }, { question_id: 'q2', custom_text: 'free' }], rejected: false };
    await act(async () => {
      await r.hook().submit(body);
    });
    assert.equal(calls.length, 1);
    assert.equal(String(calls[0].url), 'https://api.test/api/v1/clarification/p1/respond');
    assert.equal(calls[0].init.method, 'POST');
    assert.deepEqual(JSON.parse(String(calls[0].init.body)), body);
    assert.equal(r.hook().result.outcome, 'won');
    assert.equal(live(store), null);
    await r.unmount();
  });

  test('skip POSTs rejected=true with the supplied reason', async () => {
    const store = storeWith(oneQuestion());
    const { fetch, calls } = server(won('rejected'));
    const r = await renderRespond(store, 'p1', { fetch, skipBody: { rejected: true, reject_reason: 'Too vague' } });
    await act(async () => {
      await r.hook().skip();
    });
    assert.equal(calls.length, 1);
    assert.deepEqual(JSON.parse(String(calls[0].init.body)), { rejected: true, reject_reason: 'Too vague' });
    assert.equal(r.hook().result.outcome, 'won');
    assert.equal(live(store), null);
    await r.unmount();
  });

  test('a non-OK reply (400) is an error: nothing is hidden, the question stays answerable', async () => {
    const store = storeWith(oneQuestion());
    const { fetch } = server({ status: 400, body: 'nope' });
    const r = await renderRespond(store, 'p1', { fetch });
    await act(async () => {
      await r.hook().submit({ answers: [{ question_id: 'q1', selected_options: ['o1'] }] });
    });
    assert.equal(r.hook().result.outcome, 'refused');
    assert.equal(live(store)?.pending_id, 'p1');
    assert.equal(store.respondState(S, 'p1').phase, 'open');
    await r.unmount();
  });

  test('409 (a duplicate submit after the bundle resolved) settles: submit and skip', async () => {
    for (const action of ['submit', 'skip']) {
      const store = storeWith(oneQuestion());
      const { fetch } = server({ status: 409, body: 'conflict' });
      const r = await renderRespond(store, 'p1', { fetch });
      await act(async () => {
        await (action === 'submit' ? r.hook().submit({ answers: [] }) : r.hook().skip());
      });
      assert.equal(r.hook().result.outcome, 'no_longer_active', action);
      assert.equal(live(store), null, action);
      await r.unmount();
    }
  });
});

describe('useClarificationGroup — the store on resolve (a silent socket)', () => {
  test('a won submit settles every message of the bundle: none is hidden or pending, with no event', async () => {
    const store = storeWith(twoQuestions());
    const { fetch } = server(won());
    await respond(store, { sessionId: S, pendingId: 'p1', body: { answers: [] }, fetch });
    assert.equal(live(store), null);
    assert.deepEqual(store.hiddenMessageIds(S), []);
    assert.equal(store.sessionPendingAction(S), null);
  });

  test('a won skip settles every message of the bundle too', async () => {
    const store = storeWith(twoQuestions());
    const { fetch } = server(won('rejected'));
    await respond(store, { sessionId: S, pendingId: 'p1', body: { rejected: true }, fetch });
    assert.equal(live(store), null);
    assert.equal(store.respondState(S, 'p1').phase, 'settled');
  });

  test('a failed request (400) does not touch what the store shows', async () => {
    const store = storeWith(oneQuestion());
    const before = JSON.stringify([live(store), store.hiddenMessageIds(S), store.sessionPendingAction(S)]);
    const { fetch } = server({ status: 400, body: 'nope' });
    const result = await respond(store, { sessionId: S, pendingId: 'p1', body: { answers: [] }, fetch });
    assert.equal(result.applied, false);
    assert.equal(JSON.stringify([live(store), store.hiddenMessageIds(S), store.sessionPendingAction(S)]), before);
  });

  test('the reply settles the bundle that was submitted, not the one live when it resolves', async () => {
    const store = storeWith([clarMessage({ id: 'm-old', pendingId: 'p-old', questionId: 'q-old', index: 0, total: 1 })]);
    let release;
    const gate = new Promise((resolve) => {
      release = resolve;
    });
    const { fetch } = server(() => gate.then(() => won('answered', 'p-old', 'clarification')));
    const pending = respond(store, { sessionId: S, pendingId: 'p-old', body: { answers: [] }, fetch });
    // The next question streams in while the POST is in flight.
    store.applyMessageEvent('added', { ...clarMessage({ id: 'm-new', pendingId: 'p-new', questionId: 'q-new', index: 0, total: 1, created: 5 }), message_id: 'm-new', pending_action: 'clarification', pending_action_revision: rev(6) });
    assert.equal(live(store).pending_id, 'p-new');
    release();
    const result = await pending;
    assert.equal(result.outcome, 'won');
    assert.equal(live(store).pending_id, 'p-new');
    assert.equal(store.respondState(S, 'p-new'), null);
  });

  // The same race, one step further: once the new question is answered the old one must not show
  // again (the user's answer to it won). Fails today: the reply found p-old not live (p-new was)
  // and settled nothing (src/store/action.rs `still_live`; tests/store_respond.rs
  // `regression_a_won_reply_settles_a_bundle_an_older_projection_hides`).
  test('after that race, the submitted bundle does not come back when the newer one is answered', { todo: 'store bug reported: a reply settles only the bundle discovery shows' }, async () => {
    const store = storeWith([clarMessage({ id: 'm-old', pendingId: 'p-old', questionId: 'q-old', index: 0, total: 1 })]);
    let release;
    const gate = new Promise((resolve) => {
      release = resolve;
    });
    const { fetch } = server(() => gate.then(() => won('answered', 'p-old', 'clarification')));
    const pending = respond(store, { sessionId: S, pendingId: 'p-old', body: { answers: [] }, fetch });
    const newer = clarMessage({ id: 'm-new', pendingId: 'p-new', questionId: 'q-new', index: 0, total: 1, created: 5 });
    store.applyMessageEvent('added', { ...newer, message_id: 'm-new', pending_action: 'clarification', pending_action_revision: rev(6) });
    release();
    await pending;
    store.applyMessageEvent('updated', { ...newer, message_id: 'm-new', metadata: { ...newer.metadata, status: 'answered' }, updated_at: at(7), pending_action: 'clarification', pending_action_revision: rev(10) });
    assert.equal(live(store), null);
  });

  test('a malformed position in a won reply is reported, not thrown: the outcome stands', async () => {
    const store = storeWith(oneQuestion());
    const reply = won();
    reply.body.session.pending_action = 'not-an-action';
    const reported = [];
    const original = globalThis.reportError;
    globalThis.reportError = (e) => reported.push(e);
    try {
      const { fetch } = server(reply);
      const result = await respond(store, { sessionId: S, pendingId: 'p1', body: { answers: [] }, fetch });
      assert.equal(result.outcome, 'won');
      assert.equal(live(store), null);
      assert.equal(reported.length, 1);
    } finally {
      globalThis.reportError = original;
    }
  });
});

describe('useClarificationGroup — losing a race (claimed: false)', () => {
  test('claimed:false is a settled submit; the result carries the winner\'s answers, not this client\'s', async () => {
    const store = storeWith(oneQuestion());
    const winner = [{ question_id: 'q1', selected_options: ['winner-option'] }];
    const { fetch } = server(lostTo('answered', winner));
    const result = await respond(store, { sessionId: S, pendingId: 'p1', body: { answers: [{ question_id: 'q1', selected_options: ['my-losing-option'] }] }, fetch });
    assert.equal(result.outcome, 'lost');
    assert.equal(live(store), null);
    assert.deepEqual(result.response, { pending_id: 'p1', answers: winner });
  });

  test('a skip that lost carries the winner\'s answers too, not an empty response', async () => {
    const store = storeWith(oneQuestion());
    const winner = [{ question_id: 'q1', custom_text: 'winner text' }];
    const { fetch } = server(lostTo('answered', winner));
    const r = await renderRespond(store, 'p1', { fetch });
    await act(async () => {
      await r.hook().skip();
    });
    assert.equal(r.hook().result.outcome, 'lost');
    assert.deepEqual(r.hook().result.response.answers, winner);
    await r.unmount();
  });

  test('claimed absent and an empty 200 body (an older backend): failed here, nothing hidden', async () => {
    const store = storeWith(oneQuestion());
    const { fetch } = server({ status: 200 });
    const result = await respond(store, { sessionId: S, pendingId: 'p1', body: { answers: [] }, fetch });
    assert.deepEqual([result.outcome, result.failure], ['failed', 'unreadable']);
    assert.equal(live(store)?.pending_id, 'p1');
  });
});

describe('useClarificationGroup — inflight guard', () => {
  test('concurrent submits send one request', async () => {
    const store = storeWith(oneQuestion());
    let release;
    const gate = new Promise((resolve) => {
      release = resolve;
    });
    const { fetch, calls } = server(() => gate.then(() => won()));
    const r = await renderRespond(store, 'p1', { fetch });
    await act(async () => {
      const first = r.hook().submit({ answers: [{ question_id: 'q1', selected_options: ['o1'] }] });
      const second = r.hook().submit({ answers: [{ question_id: 'q1', selected_options: ['o1'] }] });
      release();
      await Promise.all([first, second]);
    });
    assert.equal(calls.length, 1);
    assert.equal(r.hook().result.outcome, 'won');
    assert.equal(live(store), null);
    await r.unmount();
  });
});
