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
 * used after `dispose()` / `free()`, a call made before the browser entry's `await init()`
 * finished (`not_initialized`, field `init`), `startRecording()` before
 * `import "task-projection/trace"` (`recording_unavailable`, field `this`), a development feature
 * (`explain`, `explainOwner`, `digest`, `stats`, `startRecording`) called on the production build
 * (`development_only`, field `this`).
 */
export type TaskProjectionErrorCode =
  | "invalid_type" | "invalid_value" | "invalid_revision" | "malformed_epoch"
  | "unreadable_value" | "disposed" | "not_initialized" | "recording_unavailable"
  /** A development feature called on the production build (`development` export condition). */
  | "development_only"
  /** A snapshot of another format or version than this build reads (`ProjectionStore.hydrate`). */
  | "unsupported_version";

/** Thrown for malformed input; the engine's state is unchanged. */
export interface TaskProjectionError extends Error {
  name: "TaskProjectionError";
  code: TaskProjectionErrorCode;
  /** Path of the offending value, e.g. `messages[2].id` (`this` for `disposed`, `init` for
   * `not_initialized`). */
  field: string;
  /** For `unreadable_value`: what reading the caller's value threw. */
  cause?: unknown;
}

/** The package version (`package.json`'s `version`), e.g. to log beside a bug report. */
export const version: string;
