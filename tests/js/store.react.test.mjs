// js/subscription.js (storeSubscription) wired the way React's useSyncExternalStore uses it, with a fake
// consumer that follows React's contract: subscribe once with a change callback, read
// getSnapshot(), re-render only when the snapshot changed (Object.is), unsubscribe on unmount.
// Then js/react.js rendered by React itself: ProjectionStoreProvider with an `initialState`
// (a `store.dehydrate()`) rendered to HTML by react-dom/server (the answers, no fallback, no
// `open` on the server), hydrated by react-dom/client in a DOM (happy-dom) with no mismatch and a
// first client render equal to the server's, then answering from the store `open` resolved to
// (the same answers) and re-rendering on its changes; and what the provider did before (fallback
// without an initialState, one `open` under StrictMode, the `store` prop, `open`'s error thrown
// for an error boundary). Then a provider in the layout (`boundaries`) with the pages' snapshots
// handed in through SnapshotBoundary: answered from on the server and in hydration, merged into
// the open store on a client-side navigation.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { Window } from 'happy-dom';
import { Component, StrictMode, act, createElement as h } from 'react';
import { renderToString } from 'react-dom/server';
import { ProjectionStore } from 'task-projection';
import {
  ProjectionStoreProvider, SnapshotBoundary, useCurrentTurnId, useHasPendingPermission, useHiddenMessageIds, useLiveStore, usePendingClarification,
  usePendingOwner, useProjectionStore, useSessionPendingAction, useStoreAnswer, useTaskPendingAction, useTaskStatusSummary,
} from '../../js/react.js';
import { storeSubscription } from '../../js/subscription.js';
import { REST_ASKED, storeOf } from './readme-backend.mjs';

// A DOM for react-dom/client (which decides at import whether it has one).
const dom = new Window({ url: 'http://localhost/' });
Object.assign(globalThis, { window: dom, document: dom.document, IS_REACT_ACT_ENVIRONMENT: true });
if (globalThis.navigator === undefined) globalThis.navigator = dom.navigator; // Node < 21
const { createRoot, hydrateRoot } = await import('react-dom/client');
after(() => dom.happyDOM.close());

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
  store.applyMessagePage('sess-1', []);
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

// ---- React: ProjectionStoreProvider with an initialState -------------------------------------------

/** A store that holds REST_ASKED: task-1 waits for a two-question bundle in sess-1. */
const askedStore = () => storeOf(ProjectionStore, REST_ASKED);

/** What a server component hands to the client: the snapshot, through JSON (as RSC serializes it). */
function serverSnapshot() {
  const store = askedStore();
  try {
    return JSON.parse(JSON.stringify(store.dehydrate({ tasks: ['task-1'] })));
  } finally {
    store.free();
  }
}

/** Every hook's answer for task-1 / sess-1 (and an unknown session), rendered as JSON; each render recorded. */
function answersView(renders) {
  return function Answers() {
    const answers = {
      live: useLiveStore() !== null,
      session: useSessionPendingAction('sess-1'),
      question: usePendingClarification('sess-1'),
      hidden: useHiddenMessageIds('sess-1'),
      turn: useCurrentTurnId('sess-1'),
      permission: useHasPendingPermission('sess-1'),
      task: useTaskPendingAction('task-1'),
      summary: useTaskStatusSummary('task-1'),
      owner: usePendingOwner('task-1'),
      preferred: usePendingOwner('task-1', 'sess-1'),
      unknownSession: usePendingClarification('sess-404'),
      version: useStoreAnswer((s) => s.version()),
    };
    renders.push(answers);
    return h('pre', { id: 'answers' }, JSON.stringify(answers));
  };
}

/** The answers the store's own queries give (what every hook must show once it is open). */
function storeAnswers(store) {
  return {
    session: store.sessionPendingAction('sess-1'), question: store.pendingClarification('sess-1'), hidden: store.hiddenMessageIds('sess-1'),
    turn: store.currentTurnId('sess-1'), permission: store.hasPendingPermission('sess-1'), task: store.taskPendingAction('task-1'),
    summary: store.taskStatusSummary('task-1'), owner: store.pendingOwner('task-1'), unknownSession: store.pendingClarification('sess-404'),
  };
}
const without = (answers, ...keys) => Object.fromEntries(Object.entries(answers).filter(([k]) => !keys.includes(k)));

/** A promise and its resolve/reject, for an `open` the test settles. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** console.error calls while `f` runs (React reports hydration mismatches and misuse there). */
async function consoleErrors(f) {
  const errors = [];
  const original = console.error;
  console.error = (...args) => errors.push(args.map(String).join(' '));
  try {
    await f();
  } finally {
    console.error = original;
  }
  return errors;
}

class Boundary extends Component {
  state = { error: null };
  static getDerivedStateFromError(error) {
    return { error };
  }
  render() {
    return this.state.error === null ? this.props.children : h('p', { id: 'error' }, `boundary: ${this.state.error.message}`);
  }
}

describe('ProjectionStoreProvider with an initialState (js/react.js, React)', () => {
  test('server render: every hook answers from the snapshot, no fallback, no open()', () => {
    const snapshot = serverSnapshot();
    const opens = [];
    const open = (state) => (opens.push(state), new ProjectionStore());
    const renders = [];
    const html = renderToString(h(ProjectionStoreProvider, { open, initialState: snapshot, fallback: h('p', null, 'FALLBACK') }, h(answersView(renders))));
    assert.ok(!html.includes('FALLBACK'), html);
    assert.equal(opens.length, 0, 'open() runs in the browser only');
    assert.equal(renders.length, 1);
    const [shown] = renders;
    // The source store's answers, as it answered them at dehydrate time.
    const source = askedStore();
    try {
      assert.deepEqual(without(shown, 'live', 'preferred', 'version'), storeAnswers(source));
    } finally {
      source.free();
    }
    assert.equal(shown.live, false);
    assert.equal(shown.session, 'clarification');
    assert.deepEqual(shown.question, { pending_id: 'p-1', message_ids: ['q-1', 'q-2'] });
    assert.equal(shown.owner, 'sess-1');
    // What a snapshot does not hold is unknown: an owner with a preferred session, useStoreAnswer, a session it does not name.
    assert.equal(shown.preferred, undefined);
    assert.equal(shown.version, undefined);
    assert.equal(shown.unknownSession, undefined);
    assert.ok(html.includes('&quot;session&quot;:&quot;clarification&quot;'), html);

    // Its JSON text works the same.
    const fromText = [];
    const again = renderToString(h(ProjectionStoreProvider, { open, initialState: JSON.stringify(snapshot) }, h(answersView(fromText))));
    assert.equal(again, html);
  });

  test('server render without an initialState: the fallback, as before', () => {
    const html = renderToString(h(ProjectionStoreProvider, { open: () => new ProjectionStore(), fallback: h('p', null, 'FALLBACK') }, h(answersView([]))));
    assert.equal(html, '<p>FALLBACK</p>');
  });

  test('hydration: the first client render equals the server HTML; then the store open() resolved to answers, the same, and re-renders on changes', async () => {
    const snapshot = serverSnapshot();
    const gate = deferred();
    const received = [];
    // Module scope in an app: called once per page, with the initialState.
    const open = async (state) => {
      received.push(state);
      await gate.promise;
      return ProjectionStore.hydrate(state);
    };
    const served = [];
    const html = renderToString(h(StrictMode, null, h(ProjectionStoreProvider, { open, initialState: snapshot, fallback: h('p', null, 'FALLBACK') }, h(answersView(served)))));

    const container = document.createElement('div');
    document.body.appendChild(container);
    container.innerHTML = html;
    const renders = [];
    const HydratedView = answersView(renders);
    const recoverable = [];
    let root;
    const errors = await consoleErrors(async () => {
      await act(async () => {
        root = hydrateRoot(
          container,
          h(StrictMode, null, h(ProjectionStoreProvider, { open, initialState: snapshot, fallback: h('p', null, 'FALLBACK') }, h(HydratedView))),
          { onRecoverableError: (error) => recoverable.push(error.message) },
        );
      });
    });
    assert.deepEqual(recoverable, [], 'no hydration mismatch');
    assert.deepEqual(errors, [], 'no console error');
    const parsed = document.createElement('div');
    parsed.innerHTML = html;
    assert.equal(container.innerHTML, parsed.innerHTML, 'the hydrated DOM is the server HTML');
    assert.deepEqual(renders[0], served[0], 'the first client render answers what the server rendered');
    assert.equal(received.length, 1, 'open() called once (StrictMode mounts twice)');
    assert.equal(received[0], snapshot, 'open() receives the initialState');
    assert.ok(renders.length > 0 && renders.every((r) => !r.live), 'answers from the snapshot while open() is pending');
    const first = renders[0];

    // open() resolves: the live store answers, the same answers.
    await act(async () => {
      gate.resolve();
      await gate.promise;
    });
    const live = renders.at(-1);
    assert.equal(live.live, true);
    assert.deepEqual(without(live, 'live', 'preferred', 'version'), without(first, 'live', 'preferred', 'version'));
    assert.equal(live.preferred, 'sess-1', 'the live store answers with a preferred session too');
    assert.equal(typeof live.version, 'number');
    assert.ok(!container.innerHTML.includes('FALLBACK'));

    // A change of the live store re-renders with its answer.
    let store;
    function Grab() {
      store = useProjectionStore();
      return null;
    }
    await act(async () => {
      root.render(h(StrictMode, null, h(ProjectionStoreProvider, { open, initialState: snapshot }, h(HydratedView), h(Grab))));
    });
    assert.ok(store instanceof ProjectionStore);
    const before = renders.length;
    await act(async () => {
      store.applySessionEvent({
        session_id: 'sess-1', task_id: 'task-1', state: 'RUNNING', updated_at: '2026-12-01T09:00:09.000000000Z',
        pending_action: null, pending_action_revision: { epoch: '1733043600', sequence: 8 },
      });
    });
    assert.ok(renders.length > before, 're-rendered');
    assert.equal(renders.at(-1).session, null);
    assert.deepEqual(without(renders.at(-1), 'live', 'preferred', 'version'), storeAnswers(store));
    await act(async () => root.unmount());
    container.remove();
  });

  test('useProjectionStore() throws while answering from the snapshot; useLiveStore() is null then', () => {
    const snapshot = serverSnapshot();
    let live;
    function Reader() {
      live = useLiveStore();
      return null;
    }
    renderToString(h(ProjectionStoreProvider, { open: () => new ProjectionStore(), initialState: snapshot }, h(Reader)));
    assert.equal(live, null);
    function Feeder() {
      useProjectionStore();
      return null;
    }
    assert.throws(
      () => renderToString(h(ProjectionStoreProvider, { open: () => new ProjectionStore(), initialState: snapshot }, h(Feeder))),
      /useProjectionStore: the store is not open yet .*useLiveStore/,
    );
    assert.throws(() => renderToString(h(Reader)), /useLiveStore: no store here/);
  });
});

describe('ProjectionStoreProvider as before (js/react.js, React)', () => {
  test('client render without an initialState: the fallback until open() resolves, one open() under StrictMode', async () => {
    const gate = deferred();
    let opens = 0;
    const open = async (state) => {
      opens += 1;
      assert.equal(state, undefined);
      await gate.promise;
      const store = new ProjectionStore();
      store.applySessionList('task-1', REST_ASKED['/tasks/task-1/task-sessions'].sessions);
      return store;
    };
    const container = document.createElement('div');
    const root = createRoot(container);
    const renders = [];
    await act(async () => {
      root.render(h(StrictMode, null, h(ProjectionStoreProvider, { open, fallback: h('p', null, 'FALLBACK') }, h(answersView(renders)))));
    });
    assert.equal(container.innerHTML, '<p>FALLBACK</p>');
    assert.equal(renders.length, 0);
    await act(async () => {
      gate.resolve();
      await gate.promise;
    });
    assert.equal(opens, 1);
    assert.equal(renders.at(-1).live, true);
    assert.equal(renders.at(-1).session, 'clarification');
    // Mounted again after open() settled (a client-side navigation): the store at once.
    const again = [];
    await act(async () => {
      root.render(h(ProjectionStoreProvider, { open, fallback: h('p', null, 'FALLBACK') }, h('section', null, h(answersView(again)))));
    });
    assert.equal(opens, 1);
    assert.ok(again.length > 0 && again.every((r) => r.live), 'no fallback or snapshot render first');
    await act(async () => root.unmount());
  });

  test('the store prop: answers at once, on the server too', () => {
    const store = askedStore();
    const renders = [];
    renderToString(h(ProjectionStoreProvider, { store }, h(answersView(renders))));
    assert.equal(renders[0].live, true);
    assert.deepEqual(without(renders[0], 'live', 'preferred', 'version'), storeAnswers(store));
    store.free();
  });

  test('an open() that rejects throws its error from the provider (for an error boundary)', async () => {
    const open = async () => {
      throw new Error('no wasm today');
    };
    const container = document.createElement('div');
    const root = createRoot(container);
    const errors = await consoleErrors(async () => {
      await act(async () => {
        root.render(h(Boundary, null, h(ProjectionStoreProvider, { open, initialState: serverSnapshot() }, h(answersView([])))));
      });
    });
    assert.equal(container.innerHTML, '<p id="error">boundary: no wasm today</p>');
    assert.ok(errors.length <= 1, errors.join('\n'));
    await act(async () => root.unmount());
  });

  test('neither store nor open: a TypeError', () => {
    assert.throws(() => renderToString(h(ProjectionStoreProvider, null)), /pass `store` or `open`/);
  });
});

// ---- React: a provider in the layout, the pages' snapshots through SnapshotBoundary ---------------

/** Another task's page: task-9's session list, dehydrated through JSON. */
function otherPageSnapshot() {
  const store = new ProjectionStore();
  try {
    store.applySessionList('task-9', [{ id: 'sess-9', task_id: 'task-9', state: 'RUNNING', is_primary: true, pending_action: null, pending_action_revision: rev(1) }]);
    return JSON.parse(JSON.stringify(store.dehydrate({ tasks: ['task-9'] })));
  } finally {
    store.free();
  }
}

describe('SnapshotBoundary below a layout provider (js/react.js, React)', () => {
  test('server render and hydration: the hooks below a boundary answer from its snapshot, outside one they do not know; no mismatch; then the open store answers the same', async () => {
    const snapshot = serverSnapshot();
    const gate = deferred();
    const open = async (state) => {
      assert.equal(state, undefined, 'a layout provider has no initialState');
      await gate.promise;
      return new ProjectionStore();
    };
    const tree = (inside, outside) =>
      h(StrictMode, null, h(ProjectionStoreProvider, { open, boundaries: true, fallback: h('p', null, 'FALLBACK') },
        h(answersView(outside)), h(SnapshotBoundary, { snapshot }, h(answersView(inside)))));
    const served = [];
    const servedOutside = [];
    const html = renderToString(tree(served, servedOutside));
    assert.ok(!html.includes('FALLBACK'), html);
    const source = askedStore();
    const expected = storeAnswers(source);
    source.free();
    assert.deepEqual(without(served[0], 'live', 'preferred', 'version'), expected);
    assert.equal(servedOutside[0].session, undefined, 'outside a boundary: not known');
    assert.equal(servedOutside[0].task, undefined);

    const container = document.createElement('div');
    document.body.appendChild(container);
    container.innerHTML = html;
    const inside = [];
    const outside = [];
    const recoverable = [];
    let root;
    const errors = await consoleErrors(async () => {
      await act(async () => {
        root = hydrateRoot(container, tree(inside, outside), { onRecoverableError: (error) => recoverable.push(error.message) });
      });
    });
    assert.deepEqual(recoverable, [], 'no hydration mismatch');
    assert.deepEqual(errors, [], 'no console error');
    assert.equal(container.innerHTML, html.replaceAll('&quot;', '"'), 'the first client render is the server HTML');
    await act(async () => {
      gate.resolve();
      await gate.promise;
    });
    const last = inside.at(-1);
    assert.equal(last.live, true);
    assert.deepEqual(without(last, 'live', 'preferred', 'version'), expected, 'the store took the snapshot: the same answers');
    assert.ok(inside.every((r) => r.session === 'clarification'), 'never a render without the answer');
    await act(async () => root.unmount());
    container.remove();
  });

  test('a client-side navigation: the next page\'s snapshot merges into the open store as it renders (its answers at once, what was held stays); the same snapshot again merges nothing', async () => {
    let opened;
    const open = async () => (opened = new ProjectionStore());
    const container = document.createElement('div');
    const root = createRoot(container);
    const page = (snapshot, child) => h(ProjectionStoreProvider, { open, boundaries: true }, h(SnapshotBoundary, { snapshot }, child));
    await act(async () => {
      root.render(page(otherPageSnapshot(), h('p', null, 'page A')));
    });
    await act(async () => {});
    assert.ok(opened !== undefined);
    assert.equal(opened.pendingOwner('task-9'), 'sess-9', 'page A\'s snapshot is in the store');
    assert.equal(opened.sessionPendingAction('sess-1'), undefined);
    // The link: page B's server component handed its snapshot; the provider (in the layout) stays.
    const renders = [];
    const snapshot = serverSnapshot();
    const errors = await consoleErrors(async () => {
      await act(async () => {
        root.render(page(snapshot, h(answersView(renders))));
      });
    });
    assert.deepEqual(errors, [], 'no console error (no update while rendering)');
    assert.ok(renders.length > 0 && renders.every((r) => r.live && r.session === 'clarification'), 'the answer in the first render');
    assert.deepEqual(renders[0].question, { pending_id: 'p-1', message_ids: ['q-1', 'q-2'] });
    assert.equal(opened.pendingOwner('task-9'), 'sess-9', 'what was held stays');
    const version = opened.version();
    await act(async () => {
      root.render(page(snapshot, h(answersView(renders))));
    });
    assert.equal(opened.version(), version, 'the same snapshot again: nothing merged');
    await act(async () => root.unmount());
    opened.free();
  });
});
