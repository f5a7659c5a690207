// React bindings (`task-projection/react`): a provider that opens one store per page once the
// wasm is initialized, and hooks that read one answer each and re-render only when that answer
// changes. React is a peer dependency of this entry only.
//
//   const openStore = async (snapshot) => { await init(); return snapshot ? ProjectionStore.hydrate(snapshot) : new ProjectionStore(); };
//   <ProjectionStoreProvider open={openStore} initialState={snapshot} fallback={<p>Loading…</p>}>…</ProjectionStoreProvider>
//   const bundle = usePendingClarification(sessionId);   // in any component below it
//
// Each hook is useSyncExternalStore over the store's change notifications, with the answer itself
// as the snapshot: the store returns the same (frozen) object for an unchanged answer, so React
// compares answers with Object.is and a component re-renders only when its own answer changed.
// Until the store is open (the server render, and the hydration render in the browser) the hooks
// answer from `initialState.answers` (a `store.dehydrate()` made on the server: the store's own
// answers, `undefined` where it did not know), so the server HTML holds the answers and the
// first client render equals it; without an initialState the provider shows `fallback` then.
import { createContext, createElement, useCallback, useContext, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { permissionBody, respond } from './respond.js';
import { storeSubscription } from './subscription.js';

export { storeSubscription };

/** `{ store, answers }`: the live store (or null), and the snapshot's answers while it is null. */
const StoreContext = createContext(null);

/** One subscription per store, shared by every hook that reads it. */
const subscriptions = new WeakMap();
function subscriptionOf(store) {
  let sub = subscriptions.get(store);
  if (sub === undefined) {
    sub = storeSubscription(store);
    subscriptions.set(store, sub);
  }
  return sub;
}

/** What each `open` function opened: one store per function, whatever mounts and remounts (StrictMode). */
const opened = new WeakMap();
function openOnce(open, initialState) {
  let entry = opened.get(open);
  if (entry === undefined) {
    entry = { store: null, error: null, settled: false, promise: null };
    entry.promise = Promise.resolve()
      .then(() => open(initialState))
      .then(
        (store) => {
          entry.store = store;
        },
        (error) => {
          entry.error = error === undefined ? new Error('open() failed') : error;
        },
      )
      .then(() => {
        entry.settled = true;
      });
    opened.set(open, entry);
  }
  return entry;
}

const noSubscription = () => () => {};
const onClient = () => true;
const onServer = () => false;

/**
 * Makes a store available to the hooks below: `store` (one you created), or `open` (a function,
 * defined once at module scope, that resolves to a store, e.g. after `await init()`: it is called
 * once per page, in the browser, with `initialState`, however often the provider mounts). Until
 * it resolves (on the server, and during hydration) the hooks answer from `initialState` (a
 * `store.dehydrate()`), or, without one, the provider shows `fallback`. An `open` that fails
 * throws its error from the provider (for an error boundary).
 */
export function ProjectionStoreProvider({ store, open, initialState, boundaries = false, fallback = null, children }) {
  if (store === undefined && open === undefined) throw new TypeError('ProjectionStoreProvider: pass `store` or `open`');
  // false on the server and in the hydration render, true in any later client render.
  const hydrated = useSyncExternalStore(noSubscription, onClient, onServer);
  const [ready, setReady] = useState(null);
  useEffect(() => {
    if (open === undefined) return undefined;
    // Opened here, not while rendering: never on the server (where a module-scope `open` would
    // keep the first request's state for the process's lifetime).
    const entry = openOnce(open, initialState);
    let live = true;
    entry.promise.then(() => {
      if (live) setReady(entry);
    });
    return () => {
      live = false;
    };
    // `initialState` is read once: `open` runs once per page.
  }, [open]);
  let entry = null;
  if (open !== undefined) {
    if (ready !== null && opened.get(open) === ready) entry = ready;
    // A provider mounted after its `open` settled (a client-side navigation), out of hydration:
    // the store at once, no snapshot or fallback render first.
    else if (hydrated && opened.get(open)?.settled) entry = opened.get(open);
  }
  if (entry !== null && entry.error !== null) throw entry.error;
  const live = store !== undefined ? store : entry !== null ? entry.store : null;
  // With `boundaries`, no initialState of its own: the pages' <SnapshotBoundary>s answer.
  const answers = useMemo(() => snapshotAnswers(initialState) ?? (boundaries ? EMPTY : null), [initialState, boundaries]);
  const value = useMemo(() => (live !== null ? { store: live, answers: null } : answers !== null ? { store: null, answers } : null), [live, answers]);
  if (value === null) return fallback;
  return createElement(StoreContext.Provider, { value }, children);
}

const EMPTY = Object.freeze({ tasks: Object.freeze({}), sessions: Object.freeze({}) });

/** The `answers` of a StoreSnapshot (an object, or its JSON text), or null without one. */
function snapshotAnswers(snapshot) {
  if (snapshot === undefined || snapshot === null) return null;
  const value = typeof snapshot === 'string' ? JSON.parse(snapshot) : snapshot;
  const answers = value !== null && typeof value === 'object' ? value.answers : undefined;
  return answers !== null && typeof answers === 'object' ? answers : EMPTY;
}

/** Each store's snapshots taken through a SnapshotBoundary (objects, and the last texts). */
const boundarySnapshots = new WeakMap();
function mergeOnce(store, snapshot) {
  let seen = boundarySnapshots.get(store);
  if (seen === undefined) {
    seen = { objects: new WeakSet(), texts: [] };
    boundarySnapshots.set(store, seen);
  }
  if (typeof snapshot === 'string') {
    if (seen.texts.includes(snapshot)) return;
    seen.texts.push(snapshot);
    if (seen.texts.length > 8) seen.texts.shift();
  } else if (snapshot !== null && typeof snapshot === 'object') {
    if (seen.objects.has(snapshot)) return;
    seen.objects.add(snapshot);
  }
  store.merge(snapshot);
}

/** The answers of both (the later one's where both answer). */
function combined(a, b) {
  return { tasks: { ...a.tasks, ...b.tasks }, sessions: { ...a.sessions, ...b.sessions } };
}

/**
 * Hands a page's snapshot (a `store.dehydrate()` its server component made) to the provider's
 * store, which may be open already (a client-side navigation: the layout's provider and its
 * socket live on): the snapshot is merged into it as this renders (`store.merge`: what is newer
 * is taken, what is older ignored, once per snapshot), so the hooks below answer from it at
 * once, without a REST request. Until the store is open (the server render, hydration) the hooks
 * below answer from the snapshot's answers, as the provider's `initialState` does.
 */
export function SnapshotBoundary({ snapshot, children }) {
  const context = useStoreContext('SnapshotBoundary');
  const live = context.store;
  if (live !== null && snapshot !== undefined && snapshot !== null) mergeOnce(live, snapshot);
  const own = useMemo(() => snapshotAnswers(snapshot), [snapshot]);
  const value = useMemo(
    () => (live !== null || own === null ? context : { store: null, answers: combined(context.answers, own) }),
    [context, live, own],
  );
  return createElement(StoreContext.Provider, { value }, children);
}

function useStoreContext(hook) {
  const context = useContext(StoreContext);
  if (context === null) throw new Error(`${hook}: no store here (render it inside <ProjectionStoreProvider>)`);
  return context;
}

/** The store of the nearest ProjectionStoreProvider (throws while it answers from initialState). */
export function useProjectionStore() {
  const { store } = useStoreContext('useProjectionStore');
  if (store === null) {
    throw new Error('useProjectionStore: the store is not open yet (the provider answers from its initialState): use useLiveStore(), null until then');
  }
  return store;
}

/** The store of the nearest ProjectionStoreProvider, or null while it answers from initialState. */
export function useLiveStore() {
  return useStoreContext('useLiveStore').store;
}

/**
 * One answer: `read(store)` from the live store, re-read when it changes, or
 * `fromSnapshot(answers)` while the provider answers from initialState.
 */
function useAnswer(hook, read, fromSnapshot) {
  const { store, answers } = useStoreContext(hook);
  const subscribe = store === null ? noSubscription : subscriptionOf(store).subscribe;
  const get = store === null ? () => fromSnapshot(answers) : () => read(store);
  return useSyncExternalStore(subscribe, get, get);
}

const unknown = () => undefined;

/**
 * `read(store)`, re-read when the store changes; the component re-renders only when the result
 * changes (`Object.is`). `read` must return the same value while the answer is unchanged (every
 * store query does). `undefined` while the provider answers from initialState.
 */
export function useStoreAnswer(read) {
  return useAnswer('useStoreAnswer', read, unknown);
}

const own = (object, key) => (object !== null && typeof object === 'object' && Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined);
/** The hook of a store query about one session or task, answering `answers[kind][id][query]` from a snapshot. */
function queryHook(kind, query) {
  const hook = `use${query[0].toUpperCase()}${query.slice(1)}`;
  return (id) => useAnswer(hook, (s) => s[query](id), (a) => own(own(own(a, kind), id), query));
}

export const usePendingClarification = queryHook('sessions', 'pendingClarification');
export const useSessionPendingAction = queryHook('sessions', 'sessionPendingAction');
export const useCurrentTurnId = queryHook('sessions', 'currentTurnId');
export const useHiddenMessageIds = queryHook('sessions', 'hiddenMessageIds');
export const useHasPendingPermission = queryHook('sessions', 'hasPendingPermission');
export const useTaskPendingAction = queryHook('tasks', 'taskPendingAction');
export const useTaskStatusSummary = queryHook('tasks', 'taskStatusSummary');
// A snapshot holds the owner without a preferred session only: with one, unknown until the store is open.
export const usePendingOwner = (taskId, preferredSessionId) =>
  useAnswer(
    'usePendingOwner',
    (s) => s.pendingOwner(taskId, preferredSessionId),
    (a) => (preferredSessionId == null ? own(own(own(a, 'tasks'), taskId), 'pendingOwner') : undefined),
  );

/** The same object while `read(store)` answers an equal one (`same` compares them): answers built fresh per call stay stable for React. */
function useHeld(hook, read, same) {
  const held = useRef(undefined);
  return useAnswer(
    hook,
    (s) => {
      const now = read(s);
      const h = held.current;
      if (!(h === now || (h != null && now != null && same(h, now)))) held.current = now;
      return held.current;
    },
    unknown,
  );
}

const sameState = (a, b) => a.attempt === b.attempt && a.phase === b.phase && a.outcome === b.outcome;

/**
 * What `useRespond` and `usePermission` share: the respond's `state` for `pendingId` (`null` for
 * none), `result`, and `send(body)`, a `respond` of `kind` with `options` that always returns a
 * promise (a start the store refuses rejects with its typed error), and `retry()`, the last body
 * again.
 */
function useAnswering(hook, kind, sessionId, pendingId, options) {
  const store = useLiveStore();
  const state = useHeld(hook, (s) => (pendingId === null ? null : s.respondState(sessionId, pendingId)), sameState);
  const [result, setResult] = useState(null);
  const body = useRef(null);
  const baseUrl = options?.baseUrl;
  const fetcher = options?.fetch;
  const timeoutMs = options?.timeoutMs;
  const send = useCallback(
    (next) => {
      if (store === null) return Promise.reject(new Error(`${hook}: the store is not open yet`));
      if (pendingId === null) return Promise.reject(new Error(`${hook}: nothing to answer`));
      body.current = next;
      let promise;
      try {
        promise = respond(store, { kind, sessionId, pendingId, body: next, baseUrl, fetch: fetcher, timeoutMs });
      } catch (error) {
        return Promise.reject(error);
      }
      return promise.then((r) => {
        setResult(r);
        return r;
      });
    },
    [store, hook, kind, sessionId, pendingId, baseUrl, fetcher, timeoutMs],
  );
  const retry = useCallback(() => (body.current === null ? Promise.reject(new Error(`${hook}: nothing to retry`)) : send(body.current)), [send, hook]);
  return { state, submitting: state?.phase === 'in_flight', result, send, retry };
}

/**
 * The user's answer to clarification bundle `pendingId` of `sessionId` (SPEC §13), for the
 * overlay: `state` (the store's `respondState`: `null` before any attempt, `undefined` while the
 * provider answers from its initialState), `submitting` (an attempt in flight), `result` (the
 * last `respond` result, `null` before one), and `submit(body)`, `skip()` and `retry()` (the last
 * body again), each a `respond` (task-projection/connect) with `options` (`baseUrl`, `fetch`,
 * `timeoutMs`; `skipBody`, `{ reject: true }` by default). A double click sends one request.
 */
export function useRespond(sessionId, pendingId, options) {
  const { state, submitting, result, send, retry } = useAnswering('useRespond', undefined, sessionId, pendingId, options);
  const skipBody = options?.skipBody;
  const submit = useCallback((next) => send(next), [send]);
  const skip = useCallback(() => send(skipBody ?? { reject: true }), [send, skipBody]);
  return { state, submitting, result, submit, skip, retry };
}

/**
 * `store.offeredActions(sessionId)`: `{ respond, cancel, send }`, `undefined` while not known (and
 * while the provider answers from its `initialState`); the same object while unchanged.
 */
export function useOfferedActions(sessionId) {
  return useHeld('useOfferedActions', (s) => s.offeredActions(sessionId), (a, b) => a.respond === b.respond && a.cancel === b.cancel && a.send === b.send);
}

/**
 * The permission session `sessionId` is blocked on and the user's answer to it (SPEC §13):
 * `permission` (`store.pendingPermission`: `{ messageId, pendingId, status, answerable }`, `null`
 * when none, `undefined` while not known: `status: 'expired'` offers nothing), `state`,
 * `submitting` and `result` as `useRespond`'s, and `approve(message, optionId)`,
 * `deny(message, optionId?)` (a deny without an option cancels the request) with the app's
 * `permission_request` row `message` (`permission.messageId`), and `retry()`. A double click
 * sends one request.
 */
export function usePermission(sessionId, options) {
  const permission = useHeld(
    'usePermission',
    (s) => s.pendingPermission(sessionId),
    (a, b) => a.messageId === b.messageId && a.pendingId === b.pendingId && a.status === b.status && a.answerable === b.answerable,
  );
  const { state, submitting, result, send, retry } = useAnswering('usePermission', 'permission', sessionId, permission?.pendingId ?? null, options);
  const answerWith = useCallback((message, approve, optionId) => {
    let body;
    try {
      body = permissionBody(message, approve, optionId);
    } catch (error) {
      return Promise.reject(error);
    }
    return send(body);
  }, [send]);
  const approve = useCallback((message, optionId) => answerWith(message, true, optionId), [answerWith]);
  const deny = useCallback((message, optionId) => answerWith(message, false, optionId), [answerWith]);
  return { permission, state, submitting, result, approve, deny, retry };
}

const sameInbox = (a, b) => {
  if (a.reason !== b.reason || a.count !== b.count || a.more !== b.more || a.hiddenCount !== b.hiddenCount || a.nextSnoozeExpiry !== b.nextSnoozeExpiry) return false;
  if ((a.seed === null) !== (b.seed === null) || (a.seed !== null && (a.seed.count !== b.seed.count || a.seed.hasMore !== b.seed.hasMore))) return false;
  for (let i = 0; i < a.rows.length; i++) {
    const x = a.rows[i];
    const y = b.rows[i];
    if (x.pendingId !== y.pendingId || x.sessionId !== y.sessionId || x.row !== y.row || x.createdAt !== y.createdAt) return false;
  }
  return true;
};

/**
 * The workspace's "needs you" inbox (`store.inbox(workspaceId)`, SPEC §14): `{ state, reason,
 * reread, count, rows, more, hiddenCount, nextSnoozeExpiry, seed }`, the same object while it
 * is unchanged; `undefined` while the provider answers from its `initialState`. `count` is always
 * `rows.length`; caught up is `state === 'known' && count === 0 && !more`, and only that.
 */
export function useInbox(workspaceId) {
  return useHeld('useInbox', (s) => s.inbox(workspaceId), sameInbox);
}

const sameBadge = (a, b) => a.state === b.state && a.count === b.count && a.more === b.more;

/**
 * The inbox's badge: `{ state, count, more }`: `count` the rows' count when known, the boot
 * seed's while the rows are not known yet (`state: 'unknown'`), else `null` (show no number);
 * `state: 'error'` after a failed read. `undefined` while the provider answers from its
 * `initialState`.
 */
export function useInboxBadge(workspaceId) {
  return useHeld(
    'useInboxBadge',
    (s) => {
      const inbox = s.inbox(workspaceId);
      if (inbox.state === 'known') return { state: 'known', count: inbox.count, more: inbox.more };
      if (inbox.seed !== null && inbox.state === 'unknown') return { state: 'unknown', count: inbox.seed.count, more: inbox.seed.hasMore };
      return { state: inbox.state, count: null, more: false };
    },
    sameBadge,
  );
}
