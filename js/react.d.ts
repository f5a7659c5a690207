// Declarations of `task-projection/react` (js/react.js; storeSubscription: js/subscription.js).
import type { ReactNode } from 'react';
import type { PendingAction, PendingClarification, ProjectionStore, WireStatusSummary } from './task_projection.js';

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
 * Wires a `ProjectionStore` into React's `useSyncExternalStore` (what the hooks below use). Create it once
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

// ---- React bindings -------------------------------------------------------------------------------

export interface ProjectionStoreProviderProps {
  /** A store you created (after `init()`). */
  store?: ProjectionStore;
  /**
   * Or a function that resolves to one, e.g. `async () => { await init(); return new
   * ProjectionStore(); }`, defined once at module scope: it is called once per page, however
   * often the provider mounts (StrictMode included).
   */
  open?: () => ProjectionStore | Promise<ProjectionStore>;
  /** Shown until `open` resolves, on the server and during hydration. Default: nothing. */
  fallback?: ReactNode;
  children?: ReactNode;
}

/**
 * Makes a store available to the hooks below it. With `open`, renders `fallback` until the store
 * is ready; an `open` that rejects throws its error from here (for an error boundary).
 * @example
 * const openStore = async () => { await init(); return new ProjectionStore(); };
 * <ProjectionStoreProvider open={openStore} fallback={<p>Loading…</p>}><Inbox /></ProjectionStoreProvider>
 */
export function ProjectionStoreProvider(props: ProjectionStoreProviderProps): ReactNode;

/** The store of the nearest provider (throws outside one), e.g. to feed it frames in an effect. */
export function useProjectionStore(): ProjectionStore;

/**
 * `read(store)`, re-read when the store changes; re-renders only when the result changes
 * (`Object.is`). `read` must return the same value while the answer is unchanged (every store
 * query does).
 */
export function useStoreAnswer<T>(read: (store: ProjectionStore) => T): T;

/** `store.pendingClarification(sessionId)`, re-rendering only when the live question changes. */
export function usePendingClarification(sessionId: string): PendingClarification | null;
/** `store.sessionPendingAction(sessionId)`. */
export function useSessionPendingAction(sessionId: string): PendingAction | null;
/** `store.currentTurnId(sessionId)`. */
export function useCurrentTurnId(sessionId: string): string | null | undefined;
/** `store.hiddenMessageIds(sessionId)`: the rows the question overlay shows. */
export function useHiddenMessageIds(sessionId: string): readonly string[];
/** `store.hasPendingPermission(sessionId)`. */
export function useHasPendingPermission(sessionId: string): boolean;
/** `store.taskPendingAction(taskId)`. */
export function useTaskPendingAction(taskId: string): PendingAction | null;
/** `store.taskStatusSummary(taskId)`. */
export function useTaskStatusSummary(taskId: string): WireStatusSummary | null;
/** `store.pendingOwner(taskId, preferredSessionId)`: the session to open, `""` for task-only. */
export function usePendingOwner(taskId: string, preferredSessionId?: string | null): string;
