/** The part of a `ProjectionStore` the subscription uses. */
export interface VersionedStore {
  subscribe(listener: (changes: { tasks: string[]; sessions: string[] }) => void): () => void;
  version(): number;
}

/** `useSyncExternalStore(sub.subscribe, sub.getSnapshot)` wiring; both functions are bound. */
export interface StoreSubscription {
  /** Calls `onChange` (without arguments) at most once per batch of store changes. */
  readonly subscribe: (onChange: () => void) => () => void;
  /** The store's `version()`: changes exactly when the state changes. */
  readonly getSnapshot: () => number;
}

/**
 * Wires a `ProjectionStore` into React's `useSyncExternalStore` (no React import). Create it once
 * per store (module scope or `useMemo`), then read answers from the store during render.
 * @example
 * const sub = storeSubscription(store);
 * function ClarificationOverlay({ sessionId }: { sessionId: string }) {
 *   useSyncExternalStore(sub.subscribe, sub.getSnapshot);
 *   const bundle = store.pendingClarification(sessionId);
 *   return bundle ? <Questions ids={bundle.message_ids} /> : null;
 * }
 */
export function storeSubscription(store: VersionedStore): StoreSubscription;
