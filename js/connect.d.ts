// Declarations of `task-projection/connect` (js/connect.js).
import type { FrameOutcome, Inbox, StreamPosition, WireInboxPage } from './task_projection.js';

/** What `connect` asks the app to fetch again. */
export interface RefetchRequest {
  /** `"all"`: the task list, the open task's sessions, the open session's turns and messages
   * (a connection's `server.hello` that did not resume the stream); `"sessions"`: one task's
   * session list; `"inbox"`: the workspace's inbox page (option `inbox`; `readInbox` reads it). */
  what: 'all' | 'sessions' | 'inbox';
  /** For `"sessions"`. */
  taskId?: string | null;
  /** For `"inbox"`. */
  workspaceId?: string;
  /** The frame outcome's reason, e.g. `"new_epoch"` (a restarted server), or the inbox's (`Inbox['reason']`). */
  reason: FrameOutcome['reason'] | Inbox['reason'];
}

/** Where a connection stands: opening a socket, open, waiting before the next attempt (after a
 * close or a handshake that timed out), or closed for good (`close()`). */
export type ConnectionState = 'connecting' | 'open' | 'waiting' | 'closed';

/** What `connect` returns. */
export interface Connection {
  /** Stops: closes the socket (code 1000) and reconnects no more. */
  close(): void;
  /** The last status: `"connecting"` at first, `"closed"` only after `close()` (a dropped
   * connection goes on to `"waiting"` at once). */
  state(): ConnectionState;
  /** Calls `listener(status, detail)` after every status change (as `onStatus`; the detail of
   * `"waiting"` is the delay in ms, of `"closed"` the close code or `"timeout"`); returns the function
   * that stops it. A listener's exception is reported (`reportError`), not thrown. */
  subscribe(listener: (state: ConnectionState, detail?: number | 'timeout') => void): () => void;
}

export interface ConnectOptions {
  /** Fetch what is asked and apply it to the store; may return a promise (a rejection goes to `onError`). */
  refetch(request: RefetchRequest): unknown;
  /** After each frame the store took (its outcome, and the frame as received): e.g. to keep the
   * app's own copy of what the store does not hold (message content). */
  onFrame?(outcome: FrameOutcome, data: unknown): void;
  /** `"connecting"`, `"open"`, `"waiting"` (detail: the delay in ms), `"closed"` (detail: the close code, or `"timeout"` when the handshake took longer than `openTimeoutMs`). */
  onStatus?(status: ConnectionState, detail?: number | 'timeout'): void;
  /** A frame the store rejected (a TaskProjectionError; nothing changed) or a failed refetch. Default: `reportError`. */
  onError?(error: unknown): void;
  /** Backoff after a close: `minDelayMs × 2^failures`, at most `maxDelayMs`, times a random 0.5–1. Defaults 250 and 10,000. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A socket that has not opened after this many ms is closed and retried (a server or proxy may hold an upgrade open without answering). Default 10,000. */
  openTimeoutMs?: number;
  /** Another WebSocket implementation (Node < 22: e.g. the `ws` package's). */
  WebSocket?: new (url: string) => WebSocketLike;
  setTimeout?: (f: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  random?: () => number;
  /** The workspace inbox to keep read (SPEC §14): `refetch({ what: "inbox", workspaceId, reason })` whenever the store says its inbox must be read again; one read at a time. */
  inbox?: { workspaceId: string };
}

/** The part of a WebSocket `connect` uses. */
export interface WebSocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code?: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number): void;
}

/** The part of a store `connect` uses. */
export interface FrameSink {
  applyFrame(frame: unknown): FrameOutcome;
}

/**
 * Feeds `store` from the reference server's WebSocket at `url`: every frame through
 * `store.applyFrame`, `refetch` when the outcome asks (a `server.hello` that did not resume,
 * `session.created`), reconnecting with backoff after a close until `close()`. A reconnection
 * asks the server to resume after the last frame the store took: `url` with the query parameters
 * `since` (that frame's offset) and `stream` (the last hello's) set, the others kept; a hello that
 * says `resumed` asks no refetch. It asks only when it knows both (an old server sends neither)
 * and every refetch asked since the last full one succeeded; otherwise `url` as given.
 * @example
 * const link = connect(`${location.origin.replace(/^http/, "ws")}/api/v1/ws`, store, {
 *   refetch: ({ what, taskId }) => (what === "all" ? loadEverything() : loadSessions(taskId)),
 * });
 * link.state(); // "connecting", then "open"
 * // later: link.close();
 */
export function connect(url: string | URL, store: FrameSink, options: ConnectOptions): Connection;

/** The options of `respond` (SPEC §13). */
export interface RespondOptions {
  sessionId: string;
  pendingId: string;
  /** The request body: `{ answers: [{ question_id, answer }] }` or `{ reject: true }` (the reference server's), or the reference client's. */
  body: object;
  /** Prefixes `/api/v1/clarification/:pending_id/respond` (default `''`: the page's origin). */
  baseUrl?: string;
  /** The app's `fetch` (default the global one). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** A request that has not answered by then counts as a timeout (default 15,000 ms). */
  timeoutMs?: number;
  /** `'permission'`: answers the permission `pendingId` the session is blocked on, posting `body` (`permissionBody`) to `/api/v1/permissions/respond`. */
  kind?: 'clarification' | 'permission';
}

/** A permission's respond body (the reference client's `permission.respond`). */
export interface PermissionBody {
  task_id: unknown;
  session_id: unknown;
  request_id: unknown;
  pending_id: unknown;
  option_id?: string;
  cancelled: boolean;
  rejected: boolean;
}

/**
 * The body answering the app's `permission_request` row `message`: approve (`approve: true`) or
 * deny with the option the user picked from `message.metadata.options`; a deny without an option
 * cancels the request.
 */
export function permissionBody(message: object, approve: boolean, optionId?: string): PermissionBody;

/** What `respond` resolved to: the store's `respondReply` result and what came back. */
export interface RespondResult {
  outcome: 'won' | 'lost' | 'no_longer_active' | 'refused' | 'failed';
  failure: 'retryable' | 'server_error' | 'network' | 'timeout' | 'unreadable' | null;
  applied: boolean;
  reason: 'unknown_attempt' | 'attempt_superseded' | 'already_replied' | null;
  attempt: number;
  status: number | null;
  /** The winning response (`claimed: false`: another caller's answers), or `null`. */
  response: unknown;
  body: unknown;
  /** The body that was posted: after a failure, what a retry sends again. */
  sent: object;
}

/** The store calls `respond` makes. */
export interface RespondSink {
  respondStart(sessionId: string, pendingId: string, kind?: 'clarification' | 'permission'): { attempt: number; fresh: boolean };
  respondReply(attempt: number, reply: { status: number; body?: unknown } | { error: 'network' | 'timeout' }): Omit<RespondResult, 'attempt' | 'status' | 'response' | 'body' | 'sent'>;
  applySessionEvent(event: object): void;
  applyStatusSummaryEvent(event: object): void;
}

/**
 * Answers or skips a clarification bundle (or answers a permission, `kind: 'permission'`) for the
 * user: one request per attempt (a double click joins it), the reply and its position given to the
 * store. Rejects only when it may not be answered (`bundle_not_live`, `live_question_unknown`,
 * `permission_expired`).
 */
export function respond(store: RespondSink, options: RespondOptions): Promise<RespondResult>;

/** The part of a store `readInbox` uses. */
export interface InboxSink {
  applyInboxPage(workspaceId: string, page: WireInboxPage, at?: StreamPosition | null): void;
  inboxReadFailed(workspaceId: string, at?: StreamPosition | null): void;
  streamPosition?(): StreamPosition | null;
}

/**
 * Reads the workspace's inbox page (`GET <baseUrl>/api/v1/clarification-inbox?workspace_id=`,
 * with the requester's cookie) into `store` (SPEC §14). A failed read (network, non-2xx, not JSON)
 * is `inboxReadFailed` and resolves `{ ok: false, error }`; a page the store refuses rejects with
 * its `TaskProjectionError` (nothing changed).
 */
export function readInbox(
  store: InboxSink,
  workspaceId: string,
  options?: { baseUrl?: string; limit?: number; fetch?: typeof fetch },
): Promise<{ ok: boolean; error: unknown }>;
