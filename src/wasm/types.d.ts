/** A session's or task's pending action. `null` means clean. */
export type PendingAction = "clarification" | "permission";

/** A session `state`. Other strings are accepted and treated as not input-capable. */
export type SessionState =
  | "CREATED" | "STARTING" | "RUNNING" | "IDLE" | "WAITING_FOR_INPUT"
  | "COMPLETED" | "FAILED" | "CANCELLED" | (string & {});

/** A flag value: set only when exactly `true`, `1`, `"true"` or `"1"`. */
export type WireFlag = boolean | number | string | null | undefined;

/**
 * `pending_action_revision`: the epoch is a decimal string of any length; the sequence a Number
 * up to 2^53 − 1 or a BigInt up to 2^64 − 1 (a larger Number may be rounded and is refused).
 * Returned revisions carry a Number up to 2^53 − 1 and a BigInt beyond.
 */
export interface Revision {
  epoch: string;
  sequence: number | bigint;
}

/** A turn as the backend sends it (snake_case). Unknown fields are ignored. */
export interface WireTurn {
  id: string;
  session_id?: string;
  task_id?: string;
  started_at?: string | null;
  /** Absent or `null`: the turn is open. */
  completed_at?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
  metadata?: {
    lifecycle_only?: WireFlag;
    prompt_dispatch_pending?: WireFlag;
    prompt_dispatch_attempted?: WireFlag;
  } | null;
}

/** A message as the backend sends it. `id` (REST) or `message_id` (WebSocket). */
export interface WireMessage {
  id?: string;
  message_id?: string;
  session_id?: string;
  task_id?: string | null;
  turn_id?: string | null;
  author_type?: string;
  type?: string;
  metadata?: {
    pending_id?: string | null;
    question_id?: string | null;
    question_index?: number | null;
    question_total?: number | null;
    status?: string | null;
    agent_disconnected?: WireFlag;
  } | null;
  created_at?: string | null;
  updated_at?: string | null;
}

/** A session as listed by `GET /tasks/:id/task-sessions`. */
export interface WireSession {
  id: string;
  task_id?: string | null;
  state?: SessionState | null;
  started_at?: string | null;
  updated_at?: string | null;
  completed_at?: string | null;
  is_primary?: WireFlag;
  /** Omitted: unknown (keep what you have); `null`: clean. */
  pending_action?: PendingAction | null;
  pending_action_revision?: Revision | null;
}

/** A task status summary. Other fields are preserved untouched by every function. */
export interface WireStatusSummary {
  revision?: number | null;
  updated_at?: string;
  /** Omitted when none. */
  pending_action?: PendingAction | null;
}

/** A task as the REST snapshot sends it. */
export interface WireTask {
  id?: string | null;
  status_summary?: WireStatusSummary | null;
  status_summary_invalidated?: WireFlag;
  task_pending_action?: PendingAction | null;
  primary_session_pending_action?: PendingAction | null;
}

/**
 * What the caller knows when it asks for the pending clarification (SPEC §3).
 * `currentTurnId`: a turn id, `null` (no current turn) or absent (unknown).
 * `pendingAction`: the session's projection, `null` (clean) or absent (unknown).
 * Passing `{}` disables discovery (authority unknown); passing nothing is the legacy scan.
 */
export interface DiscoveryScope {
  currentTurnId?: string | null;
  pendingAction?: PendingAction | null;
}

/** A pending projection; an absent key means unknown/omitted, `pending_action: null` is clean. */
export interface PendingProjection {
  pending_action?: PendingAction | null;
  pending_action_revision?: Revision | null;
}

/** Where a settled task selection navigates. */
export type SelectionOutcome =
  | { kind: "session"; sessionId: string }
  | { kind: "task_only" }
  | { kind: "inert" };

/**
 * The `code` of every error the engine throws: a value of the wrong type, a value outside its
 * domain (a lone surrogate in a string included), a malformed revision, an epoch that is not all
 * digits, a value whose reading threw (a getter, a Proxy trap: the exception is `cause`), a store
 * used after `dispose()` / `free()`.
 */
export type TaskProjectionErrorCode =
  | "invalid_type" | "invalid_value" | "invalid_revision" | "malformed_epoch"
  | "unreadable_value" | "disposed";

/** Thrown for malformed input; the engine's state is unchanged. */
export interface TaskProjectionError extends Error {
  name: "TaskProjectionError";
  code: TaskProjectionErrorCode;
  /** Path of the offending value, e.g. `messages[2].id` (`this` for `disposed`). */
  field: string;
  /** For `unreadable_value`: what reading the caller's value threw. */
  cause?: unknown;
}

/**
 * The session's current turn (SPEC §2): open before completed, then `started_at`, `created_at`,
 * `id`; lifecycle turns and unpublished reservations never count; a known state that is not
 * input-capable has none.
 * @returns the turn id, `null` when there is none, `undefined` when `turns` is not loaded.
 * @example currentTurnId(turns, session.state) // "turn-7"
 */
export function currentTurnId(
  turns: readonly WireTurn[] | null | undefined,
  sessionState?: SessionState | null,
): string | null | undefined;

/**
 * The published turns in display order (ascending `started_at`, `created_at`, `id`).
 * @example visibleTurnHistory(turns).map((t) => t.id)
 */
export function visibleTurnHistory<T extends WireTurn>(turns: readonly T[]): T[];

/**
 * The live agent question (SPEC §3), or `null`. Returns your own message object. `null` or
 * `undefined` messages are an empty transcript.
 * @example findPendingClarification(messages, { currentTurnId, pendingAction: session.pending_action })
 */
export function findPendingClarification<M extends WireMessage>(
  messages: readonly M[] | null | undefined,
  scope?: DiscoveryScope | null,
): M | null;

/**
 * The pending rows of the active bundle (same `pending_id`), empty until every announced
 * question (`question_total`) has arrived. Returns your own message objects.
 * @example pendingClarificationBundle(messages, scope).map((m) => m.id)
 */
export function pendingClarificationBundle<M extends WireMessage>(
  messages: readonly M[] | null | undefined,
  scope?: DiscoveryScope | null,
): M[];

/**
 * The transcript to render: every message but the active bundle's pending rows (the overlay
 * shows those); superseded questions stay as history.
 */
export function visibleTranscriptMessages<M extends WireMessage>(
  messages: readonly M[] | null | undefined,
  scope?: DiscoveryScope | null,
): M[];

/**
 * Whether the newest turn's latest `permission_request` is pending (SPEC §3). `null` or
 * `undefined` is an empty transcript (like the discovery functions above).
 */
export function hasPendingPermission(messages: readonly WireMessage[] | null | undefined): boolean;

/**
 * A session's authoritative pending action from its rows (SPEC §4).
 * @example sessionPendingAction({ session, turns, messages }) // "clarification"
 */
export function sessionPendingAction(input: {
  /** Absent: the session state is unknown. */
  session?: WireSession | null;
  turns?: readonly WireTurn[] | null;
  messages?: readonly WireMessage[] | null;
}): PendingAction | null;

/** A task's pending action from its sessions (permission wins, input-capable sessions only). */
export function taskPendingAction(sessions: readonly WireSession[]): PendingAction | null;

/** The task action the client shows: the summary's, else the legacy `task_pending_action`. */
export function effectiveTaskPendingAction(task: WireTask): PendingAction | null;

/**
 * Orders two revisions by (epoch as an arbitrary-length number, sequence).
 * @throws TaskProjectionError `malformed_epoch` / `invalid_revision`.
 * @example compareRevisions({ epoch: "10", sequence: 1 }, { epoch: "9", sequence: 5 }) // 1
 */
export function compareRevisions(a: Revision, b: Revision): -1 | 0 | 1;

/** Whether `incoming` may replace `held` (equal re-delivery is accepted). */
export function canReplaceRevision(
  held: Revision | null | undefined,
  incoming: Revision | null | undefined,
): boolean;

/**
 * Merges an incoming projection into the held one under the revision rule (SPEC §5).
 * @example mergePendingProjection(session, event) // { pending_action: "clarification", pending_action_revision: {...} }
 */
export function mergePendingProjection(
  held: PendingProjection | null | undefined,
  incoming: PendingProjection | null | undefined,
): PendingProjection;

/**
 * The session to open when the user clicks a task (SPEC §6); `""` means task-only navigation.
 * Pass `preferredSessionId` (the remembered session) only when it has an environment.
 */
export function resolveTaskSessionId(input: {
  task: WireTask;
  sessions: readonly WireSession[];
  preferredSessionId?: string | null;
}): string;

/** How an asynchronous task selection settles (SPEC §6), as a pure function. */
export function selectionOutcome(input: {
  taskAtStart: WireTask;
  /** `null`/absent: the task projection disappeared. */
  taskNow?: WireTask | null;
  sessions?: readonly WireSession[] | null;
  loadFailed?: boolean | null;
  aborted?: boolean | null;
  superseded?: boolean | null;
  activeTaskChanged?: boolean | null;
  preferredSessionId?: string | null;
}): SelectionOutcome;

/** Whether a live `task.status_summary.updated` replaces the held summary (strictly newer). */
export function isNewerStatusSummary(
  incoming: WireStatusSummary | null | undefined,
  held: WireStatusSummary | null | undefined,
): boolean;

/**
 * Merges a REST snapshot's summary against what was held (SPEC §7).
 * @returns `held` or `response.status_summary` (your own objects), or `null` to drop it.
 */
export function mergeFetchedStatusSummary<S extends WireStatusSummary>(input: {
  held?: S | null;
  taskPresentAtFetchStart: boolean;
  fetchStartRevision?: number | null;
  response: Omit<WireTask, "status_summary"> & { status_summary?: S | null };
}): S | null;

/** `profile_session_start_policy`: trimmed `"new"` → `"new"`, anything else → `"reuse"`. */
export function normalizeStartPolicy(value: unknown): "reuse" | "new";

/** `profile_session_end_policy`: trimmed `"park"` → `"park"`, anything else → `"complete"`. */
export function normalizeEndPolicy(value: unknown): "complete" | "park";

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
