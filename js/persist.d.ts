// Declarations of `task-projection/persist` (js/persist.js).
import type { StoreSnapshot } from './task_projection.js';

/** Where snapshots go: `sessionStorage`, `localStorage`, or any object with these three methods. */
export interface SnapshotStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface PersistOptions {
  /** The storage key. */
  key: string;
  /** Default: the window's `sessionStorage` (kept per tab, cleared when the tab closes). */
  storage?: SnapshotStorage;
  /** A save that failed (a full storage, a disposed store), or, for `restore`, an entry that was removed as unreadable. */
  onError?(error: unknown): void;
}

/** The part of a `ProjectionStore` `persist` uses. */
export interface DehydratableStore {
  dehydrate(): StoreSnapshot;
}

/**
 * Saves `store.dehydrate()` (JSON) under `key` on `pagehide` and whenever the page becomes hidden
 * (`visibilitychange`), the last moments a mobile browser or WebView reliably gives a page.
 * Without a `window` (server rendering, Node) it does nothing.
 * @example
 * const snapshot = restore({ key: "tasks" });
 * const store = snapshot ? ProjectionStore.hydrate(snapshot, { restored: true }) : new ProjectionStore();
 * persist(store, { key: "tasks" });
 */
export function persist(store: DehydratableStore, options: PersistOptions): {
  /** Saves now. */
  save(): void;
  /** Removes the listeners (saves no more). */
  stop(): void;
};

/**
 * The snapshot saved under `key`, or `undefined` (none, no storage, no window). Never throws: an
 * entry that is not a snapshot this package reads (corrupt, or from a package whose snapshot
 * version differs) is removed and passed to `onError`.
 */
export function restore(options: PersistOptions): StoreSnapshot | undefined;
