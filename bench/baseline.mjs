// Plain-JavaScript baseline: what an app team would write instead of using task-projection.
//
// This module exists only for the benchmark (bench/store.bench.mjs, `eventBench`): it is the
// "recompute per render" implementation the engine is compared with, written the way a competent
// app developer would after reading SPEC.md: one scan over the arrays per answer, a Map or a Set
// where natural, no incremental index and no cache (that is the point of a baseline), nothing
// deliberately slow. It is not part of the package and no app should import it. The benchmark
// checks after every event that its answers equal the engine's and fails when they do not.
//
// Given the app's own state for one session, as the backend sends it (REST/WebSocket shapes,
// snake_case; `bench/workload.mjs` generates them): the session object, its `turns` array and its
// `messages` array (REST rows keyed `id`, WebSocket payloads keyed `message_id`), it computes:
//   - `currentTurnId(turns, sessionState, messages)`: the current turn (SPEC §2: timestamp order
//     with nanoseconds, flags, lifecycle-only turns and unpublished reservations dropped, open
//     before completed, then `started_at`, `created_at`, `id`; session quarantine);
//   - `sessionPendingAction({ session, turns, messages })`: the session's pending action from its
//     rows (SPEC §4: terminal → clean; in the current turn a pending clarification, else the
//     latest `permission_request` by `created_at` then position if pending);
//   - `pendingClarificationBundle(messages, { currentTurnId, pendingAction })`: the rows of the
//     live question (SPEC §3: the scope table, the pending request, the bundle by `pending_id`,
//     the `question_total` gate, pending members only);
//   - `mergePendingProjection(session, incoming)`: merges an event's `pending_action` /
//     `pending_action_revision` into the session object in place (SPEC §5: arbitrary-length
//     decimal epochs, equal re-delivery accepted, omitted keeps, legacy without revisions).
// The three answers are those of the package's stateless `currentTurnId`, `sessionPendingAction`
// and `pendingClarificationBundle` (this module returns the app's own message objects too).
//
// Left out (the benchmark does not need them): input validation and typed errors (the engine
// rejects malformed input; this code assumes well-formed wire objects), session states outside
// SPEC §1's list, `visibleTurnHistory`, transcript visibility, `hasPendingPermission`, task-level
// answers (§4 per task, §6, §7), session-field ordering by `updated_at`, message deletes and
// their tombstones, out-of-order or duplicate delivery beyond what `mergePendingProjection`
// decides (the app applies events in arrival order: an `updated` row replaces the held one), and
// sequences beyond 2^53 (compared as JS numbers). Timestamps in raw-text form compare by UTF-16
// code units where the engine compares UTF-8 bytes (the same order except for characters beyond
// U+FFFF against U+E000–U+FFFF).

const INPUT_CAPABLE = new Set(['RUNNING', 'WAITING_FOR_INPUT']);
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** SPEC §2: a flag is set only when it is exactly `true`, `1`, `"true"` or `"1"`. */
export const isFlagSet = (value) => value === true || value === 1 || value === 'true' || value === '1';

/** SPEC §1: a missing or empty status means pending. */
const isPending = (message) => {
  const status = message.metadata?.status;
  return status === undefined || status === null || status === '' || status === 'pending';
};

const isPendingClarification = (message) => message.type === 'clarification_request' && isPending(message);

/** A message's id: `id`, or `message_id` as WebSocket payloads spell it. */
export const messageId = (message) => (message.id !== undefined ? message.id : message.message_id);

const turnOf = (message) => message.turn_id ?? null;

const VALUE_FORM = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;
/**
 * SPEC §2 timestamp order as a string key: `<date>T<time>[.<1-9 digits>]Z` becomes
 * `<date>T<time>.<fraction right-padded to 9 digits>Z`, anything else stays raw text, so two keys
 * compare as the timestamps do (no floating point, no lost nanoseconds). Absent is the empty text.
 */
function timestampKey(text) {
  if (typeof text !== 'string') return '';
  const match = VALUE_FORM.exec(text);
  return match === null ? text : `${match[1]}.${(match[2] ?? '').padEnd(9, '0')}Z`;
}

/** -1, 0 or 1 in SPEC §2 timestamp order. */
export function compareTimestamps(a, b) {
  if (a === b) return 0;
  // Two value-form timestamps of the same length have the same fraction length: as text.
  if (typeof a === 'string' && typeof b === 'string' && a.length === b.length && VALUE_FORM.test(a) && VALUE_FORM.test(b)) {
    return a < b ? -1 : 1;
  }
  const ka = timestampKey(a);
  const kb = timestampKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

const compareText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** SPEC §2 authority order: open before completed, then `started_at`, `created_at`, `id`. */
function compareAuthority(a, b) {
  const openA = a.completed_at === undefined || a.completed_at === null;
  const openB = b.completed_at === undefined || b.completed_at === null;
  if (openA !== openB) return openA ? 1 : -1;
  return compareTimestamps(a.started_at, b.started_at) || compareTimestamps(a.created_at, b.created_at) || compareText(a.id, b.id);
}

/** A state is known when it is a non-empty string (`""`, absent and `null` are unknown). */
const isKnownState = (state) => typeof state === 'string' && state !== '';

/**
 * SPEC §2 current turn: the turn id, `null` (none, or the session is quarantined) or `undefined`
 * (turn history not loaded). `messages` tells which reservations are referenced (published).
 */
export function currentTurnId(turns, sessionState, messages = []) {
  if (isKnownState(sessionState) && !INPUT_CAPABLE.has(sessionState)) return null;
  if (turns === undefined || turns === null) return undefined;
  let referenced = null; // turn ids the messages reference, built only if a reservation shows up
  let best = null;
  for (const turn of turns) {
    const metadata = turn.metadata ?? {};
    if (isFlagSet(metadata.lifecycle_only)) continue;
    if (isFlagSet(metadata.prompt_dispatch_pending) && !isFlagSet(metadata.prompt_dispatch_attempted)) {
      referenced ??= new Set((messages ?? []).map(turnOf));
      if (!referenced.has(turn.id)) continue;
    }
    // A complete tie keeps the first.
    if (best === null || compareAuthority(turn, best) > 0) best = turn;
  }
  return best === null ? null : best.id;
}

/** SPEC §4 within one turn: a pending clarification, else the latest permission if pending. */
function turnPendingAction(messages, turnId) {
  let latestPermission = null;
  for (const m of messages) {
    if (m.turn_id !== turnId) continue;
    if (m.type === 'clarification_request') {
      if (isPending(m)) return 'clarification';
    } else if (m.type === 'permission_request') {
      // By `created_at`, later positions winning ties.
      if (latestPermission === null || compareTimestamps(m.created_at, latestPermission.created_at) >= 0) latestPermission = m;
    }
  }
  return latestPermission !== null && isPending(latestPermission) ? 'permission' : null;
}

/** SPEC §4: the session's pending action from its rows (`"clarification"`, `"permission"`, `null`). */
export function sessionPendingAction({ session, turns, messages }) {
  const state = session?.state;
  if (TERMINAL.has(state)) return null;
  const turnId = currentTurnId(turns, state, messages);
  if (turnId === null || turnId === undefined) return null;
  return turnPendingAction(messages ?? [], turnId);
}

/**
 * SPEC §3 scope table: which messages discovery considers. Returns `null` (none), `true` (all)
 * or a turn id. `scope` undefined/null is the legacy scan; `{}` considers nothing.
 */
function considered(scope) {
  if (scope === undefined || scope === null) return true;
  const { currentTurnId: turnId, pendingAction } = scope;
  if (pendingAction !== undefined && pendingAction !== 'clarification') return null;
  if (turnId === null) return null;
  if (turnId === undefined) return pendingAction === 'clarification' ? true : null;
  return turnId;
}

/** The latest turn among the considered messages: greatest (`created_at`, `id`) with a turn. */
function latestTurn(messages) {
  let latest = null;
  for (const m of messages) {
    if (turnOf(m) === null) continue;
    if (latest === null) {
      latest = m;
      continue;
    }
    const order = compareTimestamps(m.created_at, latest.created_at) || compareText(messageId(m), messageId(latest));
    if (order > 0) latest = m;
  }
  return latest === null ? null : latest.turn_id;
}

/** SPEC §3 pending request: the live question's request row (your object), or `null`. */
export function findPendingClarification(messages, scope) {
  const list = messages ?? [];
  const what = considered(scope);
  if (what === null) return null;
  // Scoped to a turn, the latest turn is that turn; otherwise one pass finds it (legacy: none).
  const latest = what === true ? latestTurn(list) : what;
  for (let i = list.length - 1; i >= 0; i -= 1) {
    const m = list[i];
    if (latest !== null && m.turn_id !== latest) continue; // other turns, and turnless rows
    if (isPendingClarification(m)) return m;
  }
  return null;
}

/**
 * SPEC §3 bundle: the pending rows of the live question, in array order; empty when there is
 * none or when fewer rows than the request's `question_total` have arrived.
 */
export function pendingClarificationBundle(messages, scope) {
  const request = findPendingClarification(messages, scope);
  if (request === null) return [];
  const pendingId = request.metadata?.pending_id;
  const members = [];
  if (pendingId === undefined || pendingId === null || pendingId === '') {
    members.push(request); // no pending_id: the request alone (still under the gate below)
  } else {
    const what = considered(scope);
    for (const m of messages) {
      if (what !== true && m.turn_id !== what) continue;
      if (m.type === 'clarification_request' && m.metadata?.pending_id === pendingId) members.push(m);
    }
  }
  const total = request.metadata?.question_total;
  if (typeof total === 'number' && total > 0 && members.length < total) return [];
  return members.filter(isPending);
}

const WELL_FORMED_EPOCH = /^[0-9]+$/;
/** Numeric order of two all-digit epochs of any length (leading zeros ignored). */
function compareEpochs(a, b) {
  const x = a.replace(/^0+/, '');
  const y = b.replace(/^0+/, '');
  return x.length !== y.length ? (x.length < y.length ? -1 : 1) : compareText(x, y);
}

/** SPEC §5: may `incoming` replace `held`? */
export function canReplaceRevision(held, incoming) {
  if (incoming === undefined || incoming === null || !WELL_FORMED_EPOCH.test(incoming.epoch)) return false;
  if (held === undefined || held === null || !WELL_FORMED_EPOCH.test(held.epoch)) return true;
  const order = compareEpochs(incoming.epoch, held.epoch);
  return order > 0 || (order === 0 && incoming.sequence >= held.sequence);
}

/**
 * SPEC §5 projection merge, in place: `session` gets the incoming `pending_action` (unless it is
 * omitted) and `pending_action_revision` when the incoming revision may replace the held one;
 * legacy inputs (no revision on either side) take the incoming value unless omitted.
 */
export function mergePendingProjection(session, incoming) {
  const held = session.pending_action_revision;
  const revision = incoming.pending_action_revision;
  if (canReplaceRevision(held, revision)) {
    if (incoming.pending_action !== undefined) session.pending_action = incoming.pending_action;
    session.pending_action_revision = revision;
  } else if ((held === undefined || held === null) && (revision === undefined || revision === null)) {
    if (incoming.pending_action !== undefined) session.pending_action = incoming.pending_action;
  }
  return session;
}
