/** The active clarification bundle of a session (message ids of its pending rows). */
export interface PendingClarification {
  pending_id: string | null;
  message_ids: string[];
}

/** A revision in an explanation: a sequence beyond 2^53 − 1 is a decimal string. */
export interface ExplainedRevision {
  epoch: string;
  sequence: number | string;
}

/** Where a turn stands in the current-turn decision (SPEC §2). */
export type TurnStanding =
  /** The current turn. */
  | "current"
  /** A lifecycle record: never current, however recent. */
  | "lifecycle_skipped"
  /** A reservation no known message references yet: not published. */
  | "unpublished_reservation"
  /** Eligible, but the session is not input-capable (quarantine): no turn is current. */
  | "quarantined"
  /** Eligible, but another turn ranks above it (open before completed, then newest). */
  | "outranked";

/** Where a pending clarification request stands in discovery (SPEC §3). */
export type RequestStanding =
  /** In the active bundle: the overlay shows it. */
  | "in_bundle"
  /** Discovery considers nothing (the projection is not a clarification, no current turn, or the authority is unknown). */
  | "discovery_closed"
  /** Its turn is not the current (or latest) turn: superseded, never shown again. */
  | "not_current_turn"
  /** Its bundle has not fully arrived (`question_total`). */
  | "bundle_incomplete"
  /** A newer request of the same turn was chosen. */
  | "newer_request_chosen";

/** An input the store did not take (or, for a session event whose state applied, its projection; `snapshot`: a part of a merged snapshot older than what the store held). */
export interface RejectedInput {
  input:
    | "session_list" | "session.updated" | "session.message.added" | "session.message.updated"
    | "session.message.deleted" | "task.status_summary.updated" | "respond_reply" | "snapshot";
  reason: Reason;
  /** For a revision comparison: which side lost and how. */
  detail: "older_epoch" | "older_sequence" | "malformed_epoch" | null;
  task_id: string | null;
  session_id: string | null;
  message_id: string | null;
  /** The input's revision (a status summary's is a number) and the one held when it came. */
  revision: ExplainedRevision | number | string | null;
  held: ExplainedRevision | number | string | null;
}

/** `store.explain(sessionId)`. */
export interface SessionExplanation {
  session_id: string;
  /** The store holds anything about the session. */
  known: boolean;
  /** The session belongs to a removed task: its answers are known and clean. */
  removed: boolean;
  /** The inputs its answers still await (SPEC §11), in the order an app loads them. */
  missing: ("awaiting_session_list" | "awaiting_turn_list" | "awaiting_message_page")[];
  task_id: string | null;
  /** Present in its task's loaded session list. */
  listed: boolean;
  /** The state held (`"OTHER"` for a state this version does not know). */
  state: SessionState | "OTHER" | null;
  /** `currentTurnId`'s answer: `known: false` while its turns and messages are not loaded. */
  current_turn: { id: string | null; known: boolean; reason: Reason };
  /** How many turns are held (`null`: the history is not loaded). */
  turn_count: number | null;
  /** Up to 20 turns: the current one first, then the others last held first. */
  turns: { id: string; open: boolean; standing: TurnStanding }[];
  /** `sessionPendingAction`'s answer (`known: false`: `undefined`, `value` null). */
  pending_action: { value: PendingAction | null; known: boolean; reason: Reason };
  /** The authoritative projection held (`known: false`: none received). */
  projection: { known: boolean; action: PendingAction | null; revision: ExplainedRevision | null };
  /** `pendingClarification`'s reason, whether it is known, and its bundle's pending id. */
  clarification: { known: boolean; reason: Reason; pending_id: string | null };
  /** The 20 newest pending clarification requests held, newest first. */
  requests: { id: string; turn_id: string | null; pending_id: string | null; standing: RequestStanding }[];
  /** `hasPendingPermission`'s answer (`pending: null` while unknown). */
  permission: { pending: boolean | null; known: boolean; reason: Reason };
  /** Recent inputs about the session the store rejected (of the store's last 64), newest first. */
  rejected: RejectedInput[];
}

/** `store.explainOwner(taskId, preferredSessionId?)`. */
export interface OwnerExplanation {
  task_id: string;
  /** The store holds anything about the task. */
  known: boolean;
  /** The task was removed: its answers are known and clean. */
  removed: boolean;
  /** The inputs its answers still await (SPEC §11). */
  missing: ("awaiting_task" | "awaiting_session_list")[];
  /** `pendingOwner`'s answer (`session_id: null`: task-only navigation, or not known yet) and why. */
  owner: { session_id: string | null; known: boolean; reason: Reason };
  /** `taskPendingAction`'s answer. */
  pending_action: { value: PendingAction | null; known: boolean; reason: Reason };
  summary_revision: number | string | null;
  /** The preferred session asked about; `eligible: false` when it belongs to another task. */
  preferred: { session_id: string; eligible: boolean } | null;
  /** The task's listed sessions, newest first (`null`: the list is not loaded). */
  sessions: { id: string; state: SessionState | "OTHER" | null; is_primary: boolean; pending_action: PendingAction | null }[] | null;
  /** Recent inputs about the task or its sessions the store rejected, newest first. */
  rejected: RejectedInput[];
}

/** What changed, delivered to `subscribe` listeners at most once per microtask. */
export interface StoreChanges {
  tasks: string[];
  sessions: string[];
  /** The inbox took a page, a boot seed or a failed read (its answer also moves with sessions). */
  inbox: boolean;
}

/** One row of the workspace inbox (SPEC §14). */
export interface InboxRow {
  pendingId: string;
  sessionId: string;
  taskId: string | null;
  createdAt: string;
  /** The page's row (the store's frozen copy), or `null` for a bundle the store found itself (no page names it yet: render it from the session's answers). */
  row: WireInboxRow | null;
}

/**
 * A workspace's "needs you" inbox (SPEC §14). `count` is `rows.length`, always. Caught up means
 * `state === 'known' && count === 0 && !more`, and nothing else does.
 */
export interface Inbox {
  /** `known`: the rows are the server's; `unknown`: not read yet, or the store knows they may be wrong; `error`: the last read failed. */
  state: 'known' | 'unknown' | 'error';
  reason: 'inbox_known' | 'inbox_not_read' | 'inbox_read_failed' | 'inbox_session_moved' | 'inbox_truncated_removal' | 'inbox_snooze_ended';
  /** Read the page again (`connect({ inbox })` does). */
  reread: boolean;
  count: number;
  rows: InboxRow[];
  /** More rows follow the page's last (the page was truncated). */
  more: boolean;
  hiddenCount: number;
  nextSnoozeExpiry: string | null;
  /** The boot seed's count while no page is held and no frame came after it. */
  seed: { count: number; hasMore: boolean } | null;
}

/** `respondStart`'s attempt (SPEC §13). */
export interface RespondStarted {
  attempt: number;
  /** `false`: this bundle's attempt was already in flight; send no second request. */
  fresh: boolean;
}

/** The permission a session is blocked on (`pendingPermission`, SPEC §3 and §13). */
export interface BlockedPermission {
  messageId: string;
  pendingId: string | null;
  /** As the user sees it: `expired` when the row carries no `request_id` (it cannot be answered). */
  status: 'pending' | 'expired';
  /** Whether the user can answer it (approve, deny). */
  answerable: boolean;
}

/** How a respond request ended: the HTTP status and parsed body, or no reply at all. */
export type RespondReplyInput =
  | { status: number; body?: unknown }
  | { error: 'network' | 'timeout' };

/** What a reply decided (SPEC §13). */
export type RespondOutcome = 'won' | 'lost' | 'no_longer_active' | 'refused' | 'failed';

export interface RespondReplied {
  outcome: RespondOutcome;
  /** Why it failed (`outcome: 'failed'`), else `null`. */
  failure: 'retryable' | 'server_error' | 'network' | 'timeout' | 'unreadable' | null;
  /** Whether the reply changed what the store answers. */
  applied: boolean;
  /** Why it changed nothing, when the attempt was not current: else `null`. */
  reason: 'unknown_attempt' | 'attempt_superseded' | 'already_replied' | null;
}

export interface RespondState {
  attempt: number;
  phase: 'in_flight' | 'settled' | 'open';
  outcome: RespondOutcome | null;
}

/** A `settleSelection` outcome from the session-list load. */
export type SelectionLoad =
  | { sessions: readonly WireSession[] }
  | { error: unknown; timedOut?: boolean }
  | { aborted: true };

// ---- generated by tests/generated.rs from src/wire/shape.rs (do not edit; regenerate: UPDATE_GENERATED=1 cargo test --test generated) ----
/** A WebSocket `session.message.*` payload: message fields plus the session's projection. */
export interface WireMessageEvent extends WireMessage {
  session_id: string;
  task_id?: string | null;
  /** Omitted: the backend could not project (keep what you have); `null`: clean. */
  pending_action?: PendingAction | null;
  pending_action_revision?: Revision | null;
}

/** A turn started/completed payload: the turn with its `session_id`. */
export interface WireTurnEvent extends WireTurn {
  session_id: string;
  task_id?: string;
}

/** A session event: the session (`id` or `session_id`) with its new `state` and projection. */
export interface WireSessionEvent {
  id?: string;
  session_id?: string;
  task_id?: string | null;
  state?: SessionState | null;
  is_primary?: WireFlag;
  /** The session's clock: orders its `state` against what the store holds (SPEC §5). */
  updated_at?: string | null;
  pending_action?: PendingAction | null;
  pending_action_revision?: Revision | null;
}

/** A `task.status_summary.updated` payload: the task's new status summary. */
export interface WireStatusSummaryEvent {
  task_id: string;
  workspace_id?: string;
  status_summary: WireStatusSummary | null;
}

/** A task from `task.updated` or a REST task list / boot snapshot. */
export interface WireTaskInput {
  id: string;
  status_summary?: WireStatusSummary | null;
  status_summary_invalidated?: WireFlag;
  task_pending_action?: PendingAction | null;
  primary_session_pending_action?: PendingAction | null;
}

/** A store's snapshot (`dehydrate()`; SPEC §12, docs/snapshot-format.md): plain JSON-safe data. */
export interface StoreSnapshot {
  format: "task-projection/snapshot";
  version: 1;
  /** The server epoch of the last `server.hello` (`null`: none). */
  epoch: string | null;
  /** Where the state stands in the server's event stream (`null`: unknown). */
  stream: string | null;
  offset: number | null;
  /** The state itself: opaque, read back by `ProjectionStore.hydrate`. */
  tasks: unknown[];
  sessions: unknown[];
  removed: {
    tasks: string[];
    sessions: string[];
  };
  rejected: unknown[];
  /**
   * The store's answers when it was dehydrated, each key named after its query and absent while
   * that answer was unknown: `answers.sessions[id]?.[query]` is what `store[query](id)` answered
   * (`pendingOwner` without a preferred session). For a page that renders before the wasm is ready.
   */
  answers: {
    tasks: Record<string, {
      taskPendingAction?: PendingAction | null;
      taskStatusSummary?: WireStatusSummary | null;
      pendingOwner?: string;
    }>;
    sessions: Record<string, {
      sessionPendingAction?: PendingAction | null;
      currentTurnId?: string | null;
      pendingClarification?: PendingClarification | null;
      hiddenMessageIds?: string[];
      hasPendingPermission?: boolean;
    }>;
  };
}

/** A place in the server's event stream. */
export interface StreamPosition {
  stream: string;
  offset: number;
}

/**
 * An inbox row (`GET /api/v1/clarification-inbox`): the store keeps its own frozen copy and
 * hands it back as `InboxRow.row`.
 */
export interface WireInboxRow {
  pending_id: string;
  session_id: string;
  task_id: string;
  created_at: string;
  session_state?: string;
  task_title?: string;
  context?: string;
  messages?: unknown[];
}

/** An inbox page: the reference server's, or the reference client's (without `stream` / `offset`). */
export interface WireInboxPage {
  bundles: WireInboxRow[];
  count?: number;
  hidden_count?: number;
  next_snooze_expiry?: string | null;
  next_cursor?: string | null;
  /** Where the page was read (with `offset`), as `GET /api/v1/tasks` gives it. */
  stream?: string;
  offset?: number;
}

/** The inbox's boot seed (`GET /api/v1/clarification-inbox/boot`). */
export interface WireInboxSeed {
  workspaceId: string;
  count: number;
  hasMore?: boolean;
  nextSnoozeExpiry?: string | null;
}
// ---- end of generated ----

/**
 * Why the store did or answered what it did: `lastReason()` (the last call, query or apply),
 * `lastApplyReason()` (the last apply call), `applyFrame(...).reason`. Stable codes.
 */
export type Reason =
  // ---- apply calls -------------------------------------------------------------------------------
  /** The input changed the state. */
  | "applied"
  /** The input was valid and changed nothing (already held, or equal to what is held). */
  | "unchanged"
  /** Its pending-action revision is older than the held one (SPEC §5): the projection is kept. */
  | "older_revision_rejected"
  /** A message update older than the held row, carrying no projection: ignored. */
  | "older_update_carries_no_projection"
  /** The input names a task other than the one its session belongs to: rejected. */
  | "task_mismatch_rejected"
  /** Held for a session no session list has listed yet: it counts once a list lists it. */
  | "buffered_until_session_list"
  /** A turn event before the session's turn list: kept, and merged when the list arrives. */
  | "buffered_until_turn_list"
  /** `applyTaskSnapshot` for a fetch the store no longer tracks: ignored. */
  | "unknown_fetch_token"
  /** About a removed task or one of its sessions: removal is final. */
  | "task_removed"
  /** An add or update of a message that a newer input deleted. */
  | "deleted_message_stays_deleted"
  /** A session event older than the session's state (`updated_at`), without a newer projection. */
  | "older_state_ignored"
  /** `server.hello` (applyFrame), not resumed: the first the store sees (refetch). */
  | "first_hello"
  /** `server.hello` not resumed, with the epoch the store saw last: a reconnection (refetch: events may be lost). */
  | "same_epoch"
  /** `server.hello` not resumed, with another epoch: a restarted server (refetch). */
  | "new_epoch"
  /** `server.hello` with `resumed: true`: the server sends every event after the client's `since`,
   * nothing was lost (no refetch). */
  | "resumed"
  // ---- a session's pending action and current turn (SPEC §2, §4) -------------------------------------
  /** The session's revisioned `pending_action` projection decides (SPEC §4). */
  | "authoritative_projection"
  // ---- not known yet (SPEC §11): the answer is `undefined`, and this is the input it awaits ------
  /** The session's listing (a REST session list) or an event carrying its projection (for a task's owner: the task's session list). */
  | "awaiting_session_list"
  /** The session's turn list. */
  | "awaiting_turn_list"
  /** A page of the session's messages. */
  | "awaiting_message_page"
  /** The task: a task snapshot, `task.updated`, a status-summary event or its session list. */
  | "awaiting_task"
  /** The session's turns are not loaded: the current turn is unknown. */
  | "turn_history_not_loaded"
  /** The session's state cannot take input (quarantined): no current turn, nothing pending. */
  | "session_not_input_capable"
  /** No turn is eligible (lifecycle-only turns and unpublished reservations are skipped). */
  | "no_eligible_turn"
  /** An open turn outranks every completed one. */
  | "open_turn_outranks_completed"
  /** The newest turn by `started_at`, `created_at`, `id`. */
  | "newest_turn"
  /** A terminal session (COMPLETED, FAILED, CANCELLED) has nothing pending. */
  | "terminal_session"
  /** There is no current turn, so nothing is pending. */
  | "no_current_turn"
  /** A pending clarification in the current turn. */
  | "pending_clarification_in_current_turn"
  /** The latest permission request of the current turn is pending. */
  | "latest_permission_pending"
  /** Nothing is pending in the current turn. */
  | "nothing_pending_in_current_turn"
  // ---- the live question (SPEC §3) -----------------------------------------------------------------
  /** The session's projection says something other than a clarification is pending. */
  | "projection_not_clarification"
  /** The current turn is not known yet (turns not loaded). */
  | "authority_unknown"
  /** No pending clarification request in the current turn. */
  | "no_pending_request"
  /** Fewer rows of the bundle than its `question_total` have arrived: nothing shown yet. */
  | "bundle_incomplete"
  /** The live question's bundle (by `pending_id`). */
  | "active_bundle"
  /** The newest permission request is pending. */
  | "newest_permission_pending"
  /** No permission request is pending. */
  | "no_pending_permission"
  // ---- tasks (SPEC §4, §7) ------------------------------------------------------------------------------
  /** The task's status summary decides its pending action. */
  | "status_summary_action"
  /** No summary: the legacy `task_pending_action` field decides. */
  | "legacy_task_action"
  /** Derived from the task's sessions' pending actions. */
  | "derived_from_sessions"
  /** The held status summary. */
  | "status_summary_held"
  /** The task has no status summary. */
  | "no_status_summary"
  // ---- pending owner and selection (SPEC §6) ------------------------------------------------------
  /** The listed input-capable session whose pending action is the task's. */
  | "pending_owner"
  /** The task is pending but no listed session can own it: task-only, never a guess. */
  | "owner_not_input_capable"
  /** A clean task: the remembered session, listed. */
  | "preferred_session"
  /** A clean task: its primary session. */
  | "primary_session"
  /** A clean task: its first listed session. */
  | "first_listed_session"
  /** A clean task with no listed session: the remembered session. */
  | "preferred_not_listed"
  /** No session to open: task-only. */
  | "no_session"
  /** A newer selection replaced this one: inert. */
  | "superseded_by_newer_selection"
  /** Navigation moved to another task while loading: inert. */
  | "active_task_changed"
  /** The load was aborted: inert. */
  | "aborted"
  /** The task is gone: inert. */
  | "task_gone"
  /** The task's pending action changed while the sessions loaded: task-only. */
  | "task_changed_during_load"
  /** The session list failed to load for a pending task: task-only (fail closed). */
  | "load_failed_pending_task"
  /** The session list failed to load for a clean task: the remembered session, else task-only. */
  | "load_failed_clean_task"
  /** `settleSelection` with a ticket that is not the current one. */
  | "ticket_not_current"
  // ---- the user's actions (SPEC §13, in `explain`'s rejected inputs) -------------------------------
  /** A respond reply for an attempt this store does not hold. */
  | "unknown_attempt"
  /** A respond reply for an attempt a newer one replaced. */
  | "attempt_superseded"
  /** A second reply for an attempt that already had one. */
  | "already_replied"
  // ---- the workspace inbox (SPEC §14: `applyInboxPage`, and `inbox`'s `reason`) -------------------
  /** An inbox page read no later than the one held: ignored. */
  | "inbox_page_older"
  | "inbox_known"
  | "inbox_not_read"
  | "inbox_read_failed"
  | "inbox_session_moved"
  | "inbox_truncated_removal"
  | "inbox_snooze_ended";

/** A WebSocket frame of the reference server (docs/server-api.md). */
export interface WireFrame {
  type: string;
  payload?: unknown;
  /** The event's offset in the server's stream (absent on frames that carry none). */
  offset?: number | null;
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
  reason: Reason | "not_stored" | "unknown_frame_type";
  /**
   * What to fetch again: `"all"` after a `server.hello` that did not resume the stream (what was
   * published while there was no connection is lost; fetch the task list, the open task's
   * sessions, the open session's turns and messages; `reason` says whether it is the first
   * connection, a reconnection to the same server run or a restarted server); `null` after a
   * resumed one (`reason` `"resumed"`: every event after the client's `since` follows);
   * `"sessions"` after `session.created` (the task's session list, `taskId`: its order is the
   * server's); `null` otherwise.
   */
  refetch: "all" | "sessions" | null;
  /**
   * The frame's offset in the server's event stream (`null` when it carries none: old servers,
   * the simulator's replayed frames). For `server.hello`: its payload's `offset`, the last event
   * published before this connection. A reconnection resumes after the last offset taken
   * (`?since=<offset>&stream=<stream>`).
   */
  offset: number | null;
  /** For `server.hello`: the event stream the offsets belong to (`null` from an old server). */
  stream?: string | null;
  /** For `refetch: "sessions"`: the task whose session list to fetch again (`null` if the
   * payload named none). */
  taskId?: string | null;
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
  applyStatusSummaryEvent(payload: WireStatusSummaryEvent): void;
  /** WebSocket `task.updated` (with or without `status_summary`). */
  applyTaskUpdated(payload: WireTaskInput): void;
  /** The task was deleted. Final: later-arriving inputs about it and its sessions are dropped. */
  removeTask(taskId: string): void;
  /** Call when a task-list / boot request is issued; pass the token to `applyTaskSnapshot`. */
  beginTaskFetch(): number;
  /** REST: the tasks of the snapshot requested with `token`. */
  applyTaskSnapshot(token: number, tasks: readonly WireTaskInput[]): void;

  // Every query answers `undefined` until the inputs its rule reads have arrived (SPEC §11;
  // `lastReason()` names the input awaited), and `null` / `false` / `""` only when known.

  /** What the session waits for: known once it was listed or an event carried its projection. */
  sessionPendingAction(sessionId: string): PendingAction | null | undefined;
  /** The current turn (`null`: none); known once its turns and a message page arrived. */
  currentTurnId(sessionId: string): string | null | undefined;
  /** The live question bundle (`null`: none); known once its turns and a message page arrived. */
  pendingClarification(sessionId: string): PendingClarification | null | undefined;
  /** The rows the question overlay shows; known with `pendingClarification`. */
  hiddenMessageIds(sessionId: string): readonly string[] | undefined;
  /** Whether the session waits for a permission; known once its turns and a message page arrived. */
  hasPendingPermission(sessionId: string): boolean | undefined;
  /** The task's badge; known once a snapshot, `task.updated`, a summary event or its session list arrived. */
  taskPendingAction(taskId: string): PendingAction | null | undefined;
  /** The held summary (your object; `null`: none); known with `taskPendingAction`. */
  taskStatusSummary(taskId: string): WireStatusSummary | null | undefined;
  /** The session to open for the task, or `""` for task-only navigation; known once the task's session list arrived. */
  pendingOwner(taskId: string, preferredSessionId?: string | null): string | undefined;
  /**
   * Why the store answers what it does about a session: its current turn and every turn's
   * standing, the clarification bundle and every pending request's standing, the projection and
   * revision held, and the recent inputs it rejected as older. A fresh plain object per call, for
   * people and devtools (not for rendering: the queries are the answers).
   * Development build only (the `development` export condition, or `task-projection/development`):
   * the production build throws `development_only` (`field` `this`), as for `explainOwner`,
   * `digest`, `stats` and `startRecording`.
   */
  explain(sessionId: string): SessionExplanation;
  /** Why `pendingOwner(taskId, preferredSessionId)` answers what it does (development build). */
  explainOwner(taskId: string, preferredSessionId?: string | null): OwnerExplanation;
  /** Why the last query or apply call did what it did, e.g. `"older_revision_rejected"`. */
  lastReason(): Reason;
  /** Why the last apply call (an event, a REST input, a frame) did what it did; queries do not
   * overwrite it, so it can be logged after a render. */
  lastApplyReason(): Reason;

  /**
   * One WebSocket frame of the reference server (docs/server-api.md), `{ type, payload, offset? }`
   * or its JSON text (`socket.onmessage = (e) => store.applyFrame(e.data)`), routed to the apply
   * call its type names. Returns what happened, what to refetch and the frame's stream offset. A
   * type the store keeps nothing of is reported (`applied: false`), not thrown; a malformed frame,
   * offset or payload throws the typed error (`frame.type`, `frame.offset`, `payload.…`) with
   * nothing changed.
   */
  applyFrame(frame: WireFrame | string): FrameOutcome;

  /** Starts a task selection (SPEC §6); `reload`: load the session list before settling. */
  beginSelection(taskId: string, options?: { preferredSessionId?: string | null } | null): { ticket: string; reload: boolean };
  /** Navigation changed the active task; an in-flight selection of another task becomes inert. */
  setActiveTask(taskId: string | null): void;
  /** Settles a selection with its load's outcome, applying every guard of SPEC §6. */
  settleSelection(ticket: string, outcome: SelectionLoad): SelectionOutcome;

  /**
   * The user answers or skips bundle `pendingId` of a session, or (`kind: 'permission'`)
   * approves or denies the permission `pendingId` the session is blocked on (SPEC §13).
   * `fresh: false`: that attempt is already in flight (send nothing). Throws `bundle_not_live`,
   * `live_question_unknown` or `permission_expired` (field `pendingId`).
   */
  respondStart(sessionId: string, pendingId: string, kind?: 'clarification' | 'permission'): RespondStarted;
  /**
   * What the user may do in the session now (SPEC §13): answer or skip the live question
   * (`respond`: one is live and not being sent), stop the agent (`cancel`: it works, or a question
   * waits on a connected agent; not for a detached question), send a message (`send`: no question
   * is live and the agent is not working). `undefined` while the state or live question is not known.
   */
  offeredActions(sessionId: string): { respond: boolean; cancel: boolean; send: boolean } | undefined;
  /** The session was deleted (`session.deleted`, or the reply of the app's delete): a tombstone (SPEC §5). */
  removeSession(sessionId: string): void;
  /**
   * Which session to open after the user deleted `deletedSessionId` while `openSessionId` was
   * open (SPEC §13): `null` for none, `undefined` while the task's session list is not known.
   */
  sessionAfterDelete(taskId: string, openSessionId: string | null, deletedSessionId: string): string | null | undefined;
  /** The permission the session is blocked on, `null` when none, `undefined` while not known. */
  pendingPermission(sessionId: string): BlockedPermission | null | undefined;
  /**
   * How an attempt's request ended (`{ status, body }` or `{ error }`): won, lost and
   * no_longer_active settle the bundle at once; refused and failed leave it answerable.
   */
  respondReply(attempt: number, reply: RespondReplyInput): RespondReplied;
  /** Where a bundle's respond stands, or `null` when none was started. */
  respondState(sessionId: string, pendingId: string): RespondState | null;

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
  /**
   * A snapshot of what the store holds for `tasks` (with their sessions) and `sessions`, or of
   * everything: the rows the rules read, revisions, tombstones, removals, the stream's epoch and
   * position, and its answers. JSON-safe; a held summary is a copy of your object.
   */
  dehydrate(options?: { tasks?: readonly string[]; sessions?: readonly string[] }): StoreSnapshot;
  /**
   * A store built from a snapshot (or its JSON text): every answer, `explain()` and `digest()`
   * as the source's, and later inputs in any order end as if the source had taken them. A
   * malformed snapshot throws a `TaskProjectionError` naming the field (`unsupported_version` for
   * another format or version), and nothing is created. `{ restored: true }`: see `restored()`.
   */
  static hydrate(snapshot: StoreSnapshot | string, options?: { restored?: boolean }): ProjectionStore;
  /**
   * Merges another page's snapshot (of `dehydrate()`, or its JSON text) into this store: each part
   * is ordered against what the store holds by its input's own rule (clocks, revisions, REST list
   * merges; a removal is final), so an older part is ignored and a newer one taken, in any order;
   * no client clock is read. `lastReason()` is `"applied"`, or `"unchanged"` when nothing was new.
   * A malformed snapshot throws a `TaskProjectionError` and changes nothing.
   */
  merge(snapshot: StoreSnapshot | string): void;
  /** Hydrated with `{ restored: true }` (from storage) and not yet confirmed by a `server.hello` or a task snapshot. */
  restored(): boolean;
  /** Where the state held stands in the server's event stream, or `null`. */
  streamPosition(): StreamPosition | null;
  /** The REST state applied was read at this place of the stream (the reference server's `GET /tasks` says where). */
  applyStreamPosition(position: StreamPosition): void;
  /**
   * A page of the workspace's inbox (`GET /api/v1/clarification-inbox`, SPEC §14), placed by its
   * `stream` / `offset` (or `at`, the `streamPosition()` when the read began, for a server whose
   * page names none): a later read replaces an earlier one, an earlier one is ignored. Malformed:
   * a `TaskProjectionError`, and nothing changes.
   */
  applyInboxPage(workspaceId: string, page: WireInboxPage, at?: StreamPosition | null): void;
  /** The inbox's boot seed: its count answers until a page, or the next frame. */
  applyInboxSeed(seed: WireInboxSeed): void;
  /** A read of the inbox that began at `at` (its `streamPosition()`) failed: the answer is `error` (no rows) until a page comes, unless the page held was read at or after `at`. */
  inboxReadFailed(workspaceId: string, at?: StreamPosition | null): void;
  /** The workspace's inbox; `now` (default: the clock) ends the snoozes it names. */
  inbox(workspaceId: string, now?: Date | string | number): Inbox;
  dispose(): void;
  /** A hash of the decision-relevant state (tests; development build). */
  digest(): string;
  /** Memory statistics (development build). */
  stats(): { messages: number; messageBytes: number };
  /**
   * Records every input from now on, with the answers each changes and why
   * (docs/trace-format.md): ids and the fields the rules read, never message content, in a ring
   * of `maxBytes` UTF-8 bytes (1024 to 2^28; default 1 MiB), oldest lines dropped and counted.
   * The recorder is opt-in and in the development build only (else `development_only`):
   * `import "task-projection/trace"` once installs it (for every store of every entry); before
   * that this throws `recording_unavailable` (`field` `this`), options unread.
   * Throws `invalid_type` / `invalid_value` (`field` `options` / `options.maxBytes`) for bad
   * options, and `invalid_value` (`field` `this`) while already recording; nothing changes then.
   * @example import "task-projection/trace"; … store.startRecording({ maxBytes: 256 * 1024 }); … const trace = store.stopRecording();
   */
  startRecording(options?: { maxBytes?: number }): void;
  /** Ends the recording: the trace (newline-delimited JSON), or `null` when none was on. */
  stopRecording(): string | null;
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
