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
