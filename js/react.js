// React bindings (`task-projection/react`): a provider that opens one store per page once the
// wasm is initialized, and hooks that read one answer each and re-render only when that answer
// changes. React is a peer dependency of this entry only.
//
//   const openStore = async () => { await init(); return new ProjectionStore(); }; // module scope
//   <ProjectionStoreProvider open={openStore} fallback={<p>Loading…</p>}>…</ProjectionStoreProvider>
//   const bundle = usePendingClarification(sessionId);   // in any component below it
//
// Each hook is useSyncExternalStore over the store's change notifications, with the answer itself
// as the snapshot: the store returns the same (frozen) object for an unchanged answer, so React
// compares answers with Object.is and a component re-renders only when its own answer changed.
// Server rendering and the hydration render show `fallback` (the store lives in the browser).
import { createContext, createElement, useContext, useEffect, useState, useSyncExternalStore } from 'react';
import { storeSubscription } from './subscription.js';

export { storeSubscription };

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
function openOnce(open) {
  let entry = opened.get(open);
  if (entry === undefined) {
    entry = { store: null, error: null, promise: null };
    entry.promise = Promise.resolve()
      .then(() => open())
      .then(
        (store) => {
          entry.store = store;
        },
        (error) => {
          entry.error = error === undefined ? new Error('open() failed') : error;
        },
      );
    opened.set(open, entry);
  }
  return entry;
}

/**
 * Makes a store available to the hooks below: `store` (one you created), or `open` (a function,
 * defined once at module scope, that resolves to a store, e.g. after `await init()`: it is called
 * once per page, however often the provider mounts) with `fallback` shown until it resolves, on
 * the server, and during hydration. An `open` that fails throws its error from the provider
 * (for an error boundary).
 */
export function ProjectionStoreProvider({ store, open, fallback = null, children }) {
  const entry = open === undefined ? null : openOnce(open);
  const [ready, setReady] = useState(null);
  useEffect(() => {
    if (entry === null) return undefined;
    let live = true;
    entry.promise.then(() => {
      if (live) setReady(entry);
    });
    return () => {
      live = false;
    };
  }, [entry]);
  if (store === undefined && entry === null) throw new TypeError('ProjectionStoreProvider: pass `store` or `open`');
  // `open` settled (for this `open`: a new one waits for its own).
  const settled = entry !== null && ready === entry;
  if (settled && entry.error !== null) throw entry.error;
  const value = store !== undefined ? store : settled ? entry.store : null;
  if (value === null) return fallback;
  return createElement(StoreContext.Provider, { value }, children);
}

/** The store of the nearest ProjectionStoreProvider. */
export function useProjectionStore() {
  const store = useContext(StoreContext);
  if (store === null) throw new Error('useProjectionStore: no store here (render it inside <ProjectionStoreProvider>)');
  return store;
}

/**
 * `read(store)`, re-read when the store changes; the component re-renders only when the result
 * changes (`Object.is`). `read` must return the same value while the answer is unchanged (every
 * store query does).
 */
export function useStoreAnswer(read) {
  const store = useProjectionStore();
  const sub = subscriptionOf(store);
  const get = () => read(store);
  return useSyncExternalStore(sub.subscribe, get, get);
}

export const usePendingClarification = (sessionId) => useStoreAnswer((s) => s.pendingClarification(sessionId));
export const useSessionPendingAction = (sessionId) => useStoreAnswer((s) => s.sessionPendingAction(sessionId));
export const useCurrentTurnId = (sessionId) => useStoreAnswer((s) => s.currentTurnId(sessionId));
export const useHiddenMessageIds = (sessionId) => useStoreAnswer((s) => s.hiddenMessageIds(sessionId));
export const useHasPendingPermission = (sessionId) => useStoreAnswer((s) => s.hasPendingPermission(sessionId));
export const useTaskPendingAction = (taskId) => useStoreAnswer((s) => s.taskPendingAction(taskId));
export const useTaskStatusSummary = (taskId) => useStoreAnswer((s) => s.taskStatusSummary(taskId));
export const usePendingOwner = (taskId, preferredSessionId) => useStoreAnswer((s) => s.pendingOwner(taskId, preferredSessionId));
