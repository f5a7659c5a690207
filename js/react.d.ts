// Declarations of `task-projection/react` (js/react.js; storeSubscription: js/subscription.js).
import type { ReactNode } from 'react';
import type { Inbox, PendingAction, PendingClarification, ProjectionStore, StoreSnapshot, WireStatusSummary } from './task_projection.js';

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
   * Or a function that resolves to one, e.g. `async (snapshot) => { await init(); return snapshot
   * ? ProjectionStore.hydrate(snapshot) : new ProjectionStore(); }`, defined once at module scope:
   * it is called once per page, in the browser, with the provider's `initialState`, however often
   * the provider mounts (StrictMode included).
   */
  open?: (initialState: StoreSnapshot | string | undefined) => ProjectionStore | Promise<ProjectionStore>;
  /**
   * A `store.dehydrate()` made on the server (or its JSON text). Until `open` resolves (the
   * server render, and the hydration render in the browser) every hook answers from its
   * `answers`, so the server HTML holds the answers and the first client render equals it;
   * `open` receives it. Hooks it holds no answer for (`useStoreAnswer`, `usePendingOwner` with
   * a preferred session) answer `undefined` meanwhile.
   */
  initialState?: StoreSnapshot | string;
  /**
   * The pages below hand their snapshots in through `<SnapshotBoundary>` (a provider in the
   * layout: one store, and one socket, across client-side navigations). Without an
   * `initialState` the children render before the store is open, every hook answering from the
   * nearest boundary's snapshot, and `undefined` (not known) outside one.
   */
  boundaries?: boolean;
  /** Shown until `open` resolves when there is no `initialState` (and no `boundaries`): on the server and during hydration. Default: nothing. */
  fallback?: ReactNode;
  children?: ReactNode;
}

/**
 * Makes a store available to the hooks below it. With `open`, the hooks answer from
 * `initialState` until the store is ready, or, without one, it renders `fallback`; an `open` that
 * rejects throws its error from here (for an error boundary).
 * @example
 * const openStore = async (snapshot?: StoreSnapshot | string) => {
 *   await init();
 *   return snapshot ? ProjectionStore.hydrate(snapshot) : new ProjectionStore();
 * };
 * <ProjectionStoreProvider open={openStore} initialState={snapshot} fallback={<p>Loading…</p>}><Inbox /></ProjectionStoreProvider>
 */
export function ProjectionStoreProvider(props: ProjectionStoreProviderProps): ReactNode;

export interface SnapshotBoundaryProps {
  /** The page's `store.dehydrate({ tasks: [taskId] })`, made by its server component (or its JSON text). */
  snapshot?: StoreSnapshot | string | null;
  children?: ReactNode;
}

/**
 * Hands a page's server snapshot to the provider's store. An open store (a client-side
 * navigation) merges it as the boundary renders (`store.merge`: newer parts taken, older ones
 * ignored, once per snapshot), so the hooks below answer from it at once, with no REST request;
 * until the store is open (the server render, hydration) they answer from its `answers`.
 * @example
 * <SnapshotBoundary snapshot={store.dehydrate({ tasks: [taskId] })}><TaskStatus taskId={taskId} /></SnapshotBoundary>
 */
export function SnapshotBoundary(props: SnapshotBoundaryProps): ReactNode;

/**
 * The store of the nearest provider, e.g. to feed it frames in an effect. Throws outside a
 * provider, and while the provider answers from its `initialState` (the store is not open yet:
 * use `useLiveStore()` in a component that renders then).
 */
export function useProjectionStore(): ProjectionStore;

/** The store of the nearest provider, or `null` while it answers from its `initialState` (on the server, during hydration). Throws outside a provider. */
export function useLiveStore(): ProjectionStore | null;

/**
 * `read(store)`, re-read when the store changes; re-renders only when the result changes
 * (`Object.is`). `read` must return the same value while the answer is unchanged (every store
 * query does). `undefined` while the provider answers from its `initialState`.
 */
export function useStoreAnswer<T>(read: (store: ProjectionStore) => T): T | undefined;

// Every hook answers what its query answers: `undefined` while not known yet (show "loading"),
// `null` / `false` / `""` only when known. Before the store is open, what the initialState's
// store answered.

/** `store.pendingClarification(sessionId)`, re-rendering only when the live question changes. */
export function usePendingClarification(sessionId: string): PendingClarification | null | undefined;
/** `store.sessionPendingAction(sessionId)`. */
export function useSessionPendingAction(sessionId: string): PendingAction | null | undefined;
/** `store.currentTurnId(sessionId)`. */
export function useCurrentTurnId(sessionId: string): string | null | undefined;
/** `store.hiddenMessageIds(sessionId)`: the rows the question overlay shows. */
export function useHiddenMessageIds(sessionId: string): readonly string[] | undefined;
/** `store.hasPendingPermission(sessionId)`. */
export function useHasPendingPermission(sessionId: string): boolean | undefined;
/** `store.taskPendingAction(taskId)`. */
export function useTaskPendingAction(taskId: string): PendingAction | null | undefined;
/** `store.taskStatusSummary(taskId)`. */
export function useTaskStatusSummary(taskId: string): WireStatusSummary | null | undefined;
/** `store.pendingOwner(taskId, preferredSessionId)`: the session to open, `""` for task-only, `undefined` while unknown (and, with a preferred session, while the provider answers from its `initialState`). */
export function usePendingOwner(taskId: string, preferredSessionId?: string | null): string | undefined;

/** What `useRespond` gives an overlay (SPEC §13). */
export interface RespondHook {
  /** The store's `respondState`: `null` before any attempt, `undefined` until the store is open. */
  state: import('./task_projection.js').RespondState | null | undefined;
  /** An attempt is in flight: show the bundle as being submitted. */
  submitting: boolean;
  /** The last `respond` result, `null` before one. */
  result: import('./connect.js').RespondResult | null;
  submit(body: object): Promise<import('./connect.js').RespondResult>;
  skip(): Promise<import('./connect.js').RespondResult>;
  /** The last body again (after a failed or refused reply). */
  retry(): Promise<import('./connect.js').RespondResult>;
}

/** Answering, skipping and retrying bundle `pendingId` of `sessionId` with `respond`. */
export function useRespond(
  sessionId: string,
  pendingId: string,
  options?: { baseUrl?: string; fetch?: (url: string, init: RequestInit) => Promise<Response>; timeoutMs?: number; skipBody?: object },
): RespondHook;

/** What `usePermission` gives a permission card (SPEC §13). */
export interface PermissionHook {
  /** The store's `pendingPermission`: `null` when none blocks the session, `undefined` while not known. */
  permission: import('./task_projection.js').BlockedPermission | null | undefined;
  state: import('./task_projection.js').RespondState | null | undefined;
  submitting: boolean;
  result: import('./connect.js').RespondResult | null;
  /** Approves with the option `optionId` of the app's `permission_request` row `message`. */
  approve(message: object, optionId: string): Promise<import('./connect.js').RespondResult>;
  /** Denies with the option `optionId`, or cancels the request without one. */
  deny(message: object, optionId?: string): Promise<import('./connect.js').RespondResult>;
  retry(): Promise<import('./connect.js').RespondResult>;
}

/** The permission `sessionId` is blocked on, approved or denied with `respond`. */
export function usePermission(
  sessionId: string,
  options?: { baseUrl?: string; fetch?: (url: string, init: RequestInit) => Promise<Response>; timeoutMs?: number },
): PermissionHook;

/** `store.offeredActions(sessionId)`: what the user may do in the session now. */
export function useOfferedActions(sessionId: string): { respond: boolean; cancel: boolean; send: boolean } | undefined;

/**
 * The workspace's "needs you" inbox (`store.inbox(workspaceId)`, SPEC §14), the same object while
 * unchanged; `undefined` while the provider answers from its `initialState`. Caught up is
 * `state === "known" && count === 0 && !more`, and only that.
 */
export function useInbox(workspaceId: string): Inbox | undefined;

/**
 * The inbox's badge: `count` the rows' count when known, the boot seed's while the rows are not
 * known yet, else `null` (show no number); `state: "error"` after a failed read.
 */
export function useInboxBadge(workspaceId: string): { state: Inbox['state']; count: number | null; more: boolean } | undefined;
