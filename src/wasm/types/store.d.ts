/** The active clarification bundle of a session (message ids of its pending rows). */
export interface PendingClarification {
  pending_id: string | null;
  message_ids: string[];
}

/** What changed, delivered to `subscribe` listeners at most once per microtask. */
export interface StoreChanges {
  tasks: string[];
  sessions: string[];
}

/** A `settleSelection` outcome from the session-list load. */
export type SelectionLoad =
  | { sessions: readonly WireSession[] }
  | { error: unknown; timedOut?: boolean }
  | { aborted: true };

/** A WebSocket `session.message.*` payload: message fields plus the session's projection. */
export interface WireMessageEvent extends WireMessage {
  session_id: string;
  /** Omitted: the backend could not project (keep what you have); `null`: clean. */
  pending_action?: PendingAction | null;
  pending_action_revision?: Revision | null;
}

/** A turn started/completed payload: the turn with its `session_id`. */
export interface WireTurnEvent extends WireTurn {
  session_id: string;
}

/** A session event: the session (`id` or `session_id`) with its new `state` and projection. */
export interface WireSessionEvent {
  id?: string;
  session_id?: string;
  task_id?: string | null;
  state?: SessionState | null;
  /** The session's clock: orders its `state` against what the store holds (SPEC §5). */
  updated_at?: string | null;
  pending_action?: PendingAction | null;
  pending_action_revision?: Revision | null;
}

/** A WebSocket frame of the reference server (docs/server-api.md). */
export interface WireFrame {
  type: string;
  payload?: unknown;
}

/** What `applyFrame` did with a frame. */
export interface FrameOutcome {
  /** The frame's `type`. */
  type: string;
  /** Whether the store took the frame (false: `task.stalled`, which it keeps nothing of, and
   * unknown types). */
  applied: boolean;
  /**
   * What it did: the apply call's `lastReason()` (e.g. `"applied"`, `"older_revision_rejected"`);
   * for `server.hello` `"first_hello"`, `"same_epoch"` or `"new_epoch"`; `"not_stored"` for
   * `task.stalled`; `"unknown_frame_type"`.
   */
  reason: string;
  /**
   * What to fetch again: `"all"` after the first `server.hello` and after one with a new epoch (a
   * restarted server: refetch the task list, the open task's sessions, the open session's turns
   * and messages); `"sessions"` after `session.created` (the task's session list, `taskId`:
   * its order is the server's); `null` otherwise. A reconnection to the same epoch may have
   * missed events too: refetch `"all"` after every reconnection.
   */
  refetch: "all" | "sessions" | null;
  /** For `refetch: "sessions"`: the task whose session list to fetch again (`null` if the
   * payload named none). */
  taskId?: string | null;
}

/** A task from `task.updated` or a REST task list / boot snapshot. */
export interface WireTaskInput extends WireTask {
  id: string;
}

/**
 * The stateful engine: state lives in wasm, the boundary carries one event in and a small
 * answer out. Feed it every REST snapshot and WebSocket event as it arrives.
 *
 * Object results (`pendingClarification`, `hiddenMessageIds`) keep their identity while the
 * session is unchanged, so `useSyncExternalStore` does not re-render. Every query and event
 * leaves a machine-readable code in `lastReason()`.
 *
 * Dispose with `dispose()` (drops the state; outstanding tickets become inert) and `free()`
 * (releases the object's wasm memory).
 * @example
 * const store = new ProjectionStore();
 * store.applySessionList(taskId, sessions);
 * socket.onmessage = (ev) => store.applyMessageEvent("added", ev.payload);
 * store.pendingClarification(sessionId); // { pending_id, message_ids } | null
 */
export class ProjectionStore {
  constructor(options?: Record<string, never>);
  /**
   * REST: a task's session list (newest first), merged with the lists already received (a session
   * a late list lacks stays listed). Each session's `state` follows its `updated_at`, its
   * projection its revision (docs/convergence.md). Throws `invalid_value` for a session of another
   * task.
   */
  applySessionList(taskId: string, sessions: readonly WireSession[]): void;
  /** REST: a session's turn list, merged with the turns already held (newest row per turn). */
  applyTurnList(sessionId: string, turns: readonly WireTurn[]): void;
  /** REST: a page of a session's messages (a row older than the held one, or deleted, is ignored). */
  applyMessagePage(sessionId: string, messages: readonly WireMessage[]): void;
  /** WebSocket `session.message.added | updated | deleted`. */
  applyMessageEvent(kind: "added" | "updated" | "deleted", payload: WireMessageEvent): void;
  /** A batch of message events of one kind, validated whole before any applies. */
  applyMessageEvents(kind: "added" | "updated" | "deleted", payloads: readonly WireMessageEvent[]): void;
  /** WebSocket turn started / completed. */
  applyTurnEvent(payload: WireTurnEvent): void;
  /** WebSocket session state change: `state` by the session's `updated_at`, the projection by its revision. */
  applySessionEvent(payload: WireSessionEvent): void;
  /** WebSocket `task.status_summary.updated`. */
  applyStatusSummaryEvent(payload: { task_id: string; workspace_id?: string; status_summary: WireStatusSummary | null }): void;
  /** WebSocket `task.updated` (with or without `status_summary`). */
  applyTaskUpdated(payload: WireTaskInput): void;
  /** The task was deleted. Final: later-arriving inputs about it and its sessions are dropped. */
  removeTask(taskId: string): void;
  /** Call when a task-list / boot request is issued; pass the token to `applyTaskSnapshot`. */
  beginTaskFetch(): number;
  /** REST: the tasks of the snapshot requested with `token`. */
  applyTaskSnapshot(token: number, tasks: readonly WireTaskInput[]): void;

  sessionPendingAction(sessionId: string): PendingAction | null;
  currentTurnId(sessionId: string): string | null | undefined;
  pendingClarification(sessionId: string): PendingClarification | null;
  hiddenMessageIds(sessionId: string): readonly string[];
  hasPendingPermission(sessionId: string): boolean;
  taskPendingAction(taskId: string): PendingAction | null;
  taskStatusSummary(taskId: string): WireStatusSummary | null;
  /** The session to open for the task, or `""` for task-only navigation. */
  pendingOwner(taskId: string, preferredSessionId?: string | null): string;
  /** Why the last query or event did what it did, e.g. `"older_revision_rejected"`. */
  lastReason(): string;

  /**
   * One WebSocket frame of the reference server (docs/server-api.md), `{ type, payload }` or its
   * JSON text (`socket.onmessage = (e) => store.applyFrame(e.data)`), routed to the apply call its
   * type names. Returns what happened and what to refetch. A type the store keeps nothing of is
   * reported (`applied: false`), not thrown; a malformed frame or payload throws the typed error
   * (`frame.type`, `payload.…`) with nothing changed.
   */
  applyFrame(frame: WireFrame | string): FrameOutcome;

  /** Starts a task selection (SPEC §6); `reload`: load the session list before settling. */
  beginSelection(taskId: string, options?: { preferredSessionId?: string | null } | null): { ticket: string; reload: boolean };
  /** Navigation changed the active task; an in-flight selection of another task becomes inert. */
  setActiveTask(taskId: string | null): void;
  /** Settles a selection with its load's outcome, applying every guard of SPEC §6. */
  settleSelection(ticket: string, outcome: SelectionLoad): SelectionOutcome;

  /**
   * Calls `listener` at most once per microtask with what changed; returns the unsubscribe
   * function. A listener that throws does not stop the others; its error is reported
   * (`reportError` where available, else rethrown from its own microtask).
   */
  subscribe(listener: (changes: StoreChanges) => void): () => void;
  /** Increases on every change: the snapshot for `useSyncExternalStore`. */
  version(): number;
  /**
   * Drops all state and listeners and releases the wasm memory. Afterwards every method throws
   * `disposed`, except `settleSelection` (settles `inert`), `dispose` and `free` (no-ops).
   */
  dispose(): void;
  /** A hash of the decision-relevant state (tests). */
  digest(): string;
  /** Memory statistics. */
  stats(): { messages: number; messageBytes: number };
  /** Releases the object's wasm memory (like `dispose()`); the object is unusable afterwards. */
  free(): void;
}

/**
 * Waits for a session-list load at most `timeoutMs`, resolving to a `settleSelection` outcome:
 * `{ sessions }`, `{ error }`, or `{ error: "timeout", timedOut: true }`. Never throws nor rejects:
 * a non-promise or a thenable whose `then` throws settles at once as `{ error }`.
 * @example store.settleSelection(ticket, await boundedLoad(fetchSessions(taskId), 5000))
 */
export function boundedLoad(load: Promise<readonly WireSession[]>, timeoutMs: number): Promise<SelectionLoad>;
