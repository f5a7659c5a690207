// useSyncExternalStore wiring for a ProjectionStore, React-agnostic (no React import): what the
// hooks of ./react.js build on, and what an app that calls useSyncExternalStore itself uses.
//
//   const sub = storeSubscription(store);            // once per store (module scope or useMemo)
//   useSyncExternalStore(sub.subscribe, sub.getSnapshot);
//   const bundle = store.pendingClarification(sessionId); // same object while unchanged
//
// The snapshot is the store's version(): it changes exactly when the state changes, and the
// store notifies at most once per batch of synchronous calls. Both functions are bound, so they
// can be passed as they are; keep one subscription object per store so React does not resubscribe.
export function storeSubscription(store) {
  return Object.freeze({
    subscribe(onChange) {
      return store.subscribe(() => onChange());
    },
    getSnapshot() {
      return store.version();
    },
  });
}
