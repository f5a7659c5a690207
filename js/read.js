// The read-once boundary. Every value a caller passes is read here, in JS, exactly once, before
// anything crosses into wasm: the fields the engine reads (a schema per argument) are copied into
// fresh plain objects and arrays, and only those copies are passed to the wasm exports. So
//   - no caller code (a getter, a Proxy trap, a throwing `length`) ever runs under a wasm frame,
//     where an exception would unwind past Rust without restoring its stack or its borrows;
//   - a getter that changes its value between reads cannot make two parts of the engine see two
//     different values: there is one read;
//   - a caller's exception becomes a TaskProjectionError `unreadable_value` (the caller's own
//     exception is its `cause`), thrown before any state changed;
//   - strings that UTF-8 cannot carry (lone surrogates) are refused here with `invalid_value`, so
//     two distinct ids can never collapse into one on the way in (docs/decisions.md).
// Values of a type the engine does not expect at a position are replaced by an empty stand-in of
// the same kind (`[]`, `{}`, a function), so the wasm decoder reports the same typed error without
// touching the caller's object. Plain comparisons only: old WebViews run this file too.

/** A TaskProjectionError, shaped like the ones the wasm side throws. */
export function taskProjectionError(code, field, message, cause) {
  const error = new Error(message);
  error.name = 'TaskProjectionError';
  error.code = code;
  error.field = field;
  if (cause !== undefined) error.cause = cause;
  return error;
}

/** The JS type of `v` for a message (never throws, not even on a revoked Proxy). */
export function typeName(v) {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  try {
    return Array.isArray(v) ? 'array' : 'object';
  } catch (_) {
    return 'a revoked Proxy';
  }
}

/** At most this many characters of an offending value appear in a message (like Rust's). */
const QUOTE_LIMIT = 200;

/** `text` cut for an error message. */
export function quote(text) {
  const s = String(text);
  return s.length <= QUOTE_LIMIT ? s : `${s.slice(0, QUOTE_LIMIT)}… (${s.length - QUOTE_LIMIT} more characters)`;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = typeof ''.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !LONE_SURROGATE.test(s);

/** More elements than this in one array is refused (a Proxy can claim any `length`). */
export const MAX_ELEMENTS = 1 << 24;

// Schema nodes. LEAF: any primitive is copied; an object, array or function becomes a stand-in.
const LEAF = 0;
const OBJECT = 1;
const ARRAY = 2;
/** An object the engine keeps and hands back (a status summary): read like OBJECT, and the copy
 * is mapped back to the caller's object by `original()`. */
const KEPT = 3;

const obj = (keys) => ({ t: OBJECT, keys: Object.keys(keys), of: keys });
const arr = (of) => ({ t: ARRAY, of });
const kept = (node) => ({ t: KEPT, keys: node.keys, of: node.of });

const EMPTY_ARRAY = Object.freeze([]);
const EMPTY_OBJECT = Object.freeze({});
const A_FUNCTION = Object.freeze(function standIn() {});

/** Copy of a kept object → the caller's object. */
const ORIGINALS = new WeakMap();

/** The caller's object a kept copy was made from (the value itself when it is not a copy). */
export function original(value) {
  if (value === null || typeof value !== 'object') return value;
  const o = ORIGINALS.get(value);
  return o === undefined ? value : o;
}

// The path of the value being read (keys and indices), for error messages. Reset per call.
const path = [];
let root = '';

function pathText() {
  let text = root;
  for (let i = 0; i < path.length; i++) {
    const k = path[i];
    text += typeof k === 'number' ? `[${k}]` : `.${k}`;
  }
  return text;
}

function leaf(v) {
  const t = typeof v;
  if (t === 'string') {
    if (!wellFormed(v)) throw refuse('invalid_value', 'not well-formed UTF-16 (a lone surrogate), which cannot be kept exactly');
    return v;
  }
  if (t === 'object') {
    if (v === null) return v;
    return Array.isArray(v) ? EMPTY_ARRAY : EMPTY_OBJECT;
  }
  if (t === 'function') return A_FUNCTION;
  return v; // number, boolean, bigint, undefined, symbol: primitives, safe to pass
}

function read(v, node) {
  if (node === LEAF) return leaf(v);
  if (node === MESSAGE || node === MESSAGE_EVENT) return readMessage(v, node === MESSAGE_EVENT);
  if (node.t === ARRAY) {
    if (typeof v !== 'object' || v === null || !Array.isArray(v)) return leaf(v);
    const n = checkedLength(v);
    const out = new Array(n);
    const of = node.of;
    for (let i = 0; i < n; i++) {
      path.push(i);
      out[i] = read(v[i], of);
      path.pop();
    }
    return out;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return leaf(v);
  const keys = node.keys;
  const of = node.of;
  // Every schema key is set (undefined when absent): the engine treats both alike, and no read
  // of a copy ever reaches a prototype.
  const out = {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    path.push(k);
    out[k] = read(v[k], of[k]);
    path.pop();
  }
  if (node.t === KEPT) ORIGINALS.set(out, v);
  return out;
}

/**
 * `read(v, MESSAGE)` / `read(v, MESSAGE_EVENT)` written out: the hot inputs (every WebSocket
 * message event, every REST page row). The same reads in the same order and the same copy as the
 * generic walk (tests/js/boundary.test.mjs compares them), without its per-key bookkeeping: the
 * key being read is kept in `key` for error paths.
 */
function readMessage(v, event) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return leaf(v);
  let key = 'id';
  let id, messageId, type, turnId, created, updated, m, status, pendingId, total;
  let sessionId, taskId, action, r, epoch, sequence;
  let meta = false;
  let rev = false;
  try {
    id = v.id;
    key = 'message_id'; messageId = v.message_id;
    key = 'type'; type = v.type;
    key = 'turn_id'; turnId = v.turn_id;
    key = 'created_at'; created = v.created_at;
    key = 'updated_at'; updated = v.updated_at;
    key = 'metadata'; m = v.metadata;
    meta = typeof m === 'object' && m !== null && !Array.isArray(m);
    if (meta) {
      key = 'metadata.status'; status = m.status;
      key = 'metadata.pending_id'; pendingId = m.pending_id;
      key = 'metadata.question_total'; total = m.question_total;
    }
    if (event) {
      key = 'session_id'; sessionId = v.session_id;
      key = 'task_id'; taskId = v.task_id;
      key = 'pending_action'; action = v.pending_action;
      key = 'pending_action_revision'; r = v.pending_action_revision;
      rev = typeof r === 'object' && r !== null && !Array.isArray(r);
      if (rev) {
        key = 'pending_action_revision.epoch'; epoch = r.epoch;
        key = 'pending_action_revision.sequence'; sequence = r.sequence;
      }
    }
  } catch (error) {
    throw unreadableAt(error, key);
  }
  const copy = {
    id: text(id, 'id'),
    message_id: text(messageId, 'message_id'),
    type: text(type, 'type'),
    turn_id: text(turnId, 'turn_id'),
    created_at: text(created, 'created_at'),
    updated_at: text(updated, 'updated_at'),
    metadata: meta
      ? { status: text(status, 'metadata.status'), pending_id: text(pendingId, 'metadata.pending_id'), question_total: leaf(total) }
      : leaf(m),
  };
  if (!event) return copy;
  copy.session_id = text(sessionId, 'session_id');
  copy.task_id = text(taskId, 'task_id');
  copy.pending_action = text(action, 'pending_action');
  copy.pending_action_revision = rev
    ? { epoch: text(epoch, 'pending_action_revision.epoch'), sequence: text(sequence, 'pending_action_revision.sequence') }
    : leaf(r);
  return copy;
}

/** `leaf(v)` for the field `key` of the value being read (the key completes an error's path). */
function text(v, key) {
  if (typeof v === 'string' && !wellFormed(v)) {
    path.push(key);
    throw refuse('invalid_value', 'not well-formed UTF-16 (a lone surrogate), which cannot be kept exactly');
  }
  return leaf(v);
}

/** A caller's exception while reading field `key` of the value being read. */
function unreadableAt(error, key) {
  if (OURS.has(error)) return error;
  path.push(key);
  return unreadable(error);
}

/** Errors this file throws (told apart from a caller's exception). */
const OURS = new WeakSet();

function refuse(code, message) {
  const field = pathText();
  const error = taskProjectionError(code, field, `${field}: ${message}`);
  OURS.add(error);
  return error;
}

function describe(error) {
  try {
    return error && typeof error.message === 'string' ? error.message : String(error);
  } catch (_) {
    return 'an exception';
  }
}

/** `error` as thrown out of a read: ours as is, a caller's as `unreadable_value` at the path. */
function unreadable(error) {
  let out = error;
  if (!OURS.has(error)) {
    out = taskProjectionError('unreadable_value', pathText(), `${pathText()}: reading it threw (${quote(describe(error))})`, error);
    OURS.add(out);
  }
  path.length = 0;
  return out;
}

function checkedLength(v) {
  const n = v.length;
  if (!(n >= 0 && n <= MAX_ELEMENTS && n === Math.floor(n))) {
    throw refuse('invalid_value', `an array of ${quote(n)} elements (at most ${MAX_ELEMENTS})`);
  }
  return n;
}

/**
 * `value` read once by `node`, for the argument named `name` (the root of error paths). Throws a
 * TaskProjectionError; nothing has been passed to wasm yet when it does.
 */
export function readArg(value, node, name) {
  root = name;
  path.length = 0;
  try {
    return read(value, node);
  } catch (error) {
    throw unreadable(error);
  }
}

/**
 * The elements of an array argument read once (the caller's own objects, handed back by index)
 * and their copies by `node`; `undefined` when `value` is not an array (a stand-in then goes to
 * wasm, which reports the typed error).
 */
export function readItems(value, node, name) {
  root = name;
  path.length = 0;
  try {
    if (typeof value !== 'object' || value === null || !Array.isArray(value)) return undefined;
    const n = checkedLength(value);
    const items = new Array(n);
    const copies = new Array(n);
    for (let i = 0; i < n; i++) {
      path.push(i);
      const item = value[i];
      items[i] = item;
      copies[i] = read(item, node);
      path.pop();
    }
    return { items, copies };
  } catch (error) {
    throw unreadable(error);
  }
}

// ---- the schemas: what the wasm decoders read (src/wire/decode.rs, events.rs, api.rs,
// store_api.rs). tests/js/boundary.test.mjs checks that every key the raw decoders read on every
// scenario input is copied here.

export const REVISION = obj({ epoch: LEAF, sequence: LEAF });
const MESSAGE_KEYS = {
  id: LEAF,
  message_id: LEAF,
  type: LEAF,
  turn_id: LEAF,
  created_at: LEAF,
  updated_at: LEAF,
  metadata: obj({ status: LEAF, pending_id: LEAF, question_total: LEAF }),
};
export const MESSAGE = obj(MESSAGE_KEYS);
const TURN_KEYS = {
  id: LEAF,
  started_at: LEAF,
  created_at: LEAF,
  updated_at: LEAF,
  completed_at: LEAF,
  metadata: obj({ lifecycle_only: LEAF, prompt_dispatch_pending: LEAF, prompt_dispatch_attempted: LEAF }),
};
export const TURN = obj(TURN_KEYS);
export const SESSION = obj({
  id: LEAF,
  task_id: LEAF,
  state: LEAF,
  is_primary: LEAF,
  pending_action: LEAF,
  pending_action_revision: REVISION,
  updated_at: LEAF,
});
export const SUMMARY = obj({ revision: LEAF, pending_action: LEAF });
const TASK_KEYS = {
  id: LEAF,
  status_summary: SUMMARY,
  status_summary_invalidated: LEAF,
  task_pending_action: LEAF,
  primary_session_pending_action: LEAF,
};
export const TASK = obj(TASK_KEYS);
export const SCOPE = obj({ currentTurnId: LEAF, pendingAction: LEAF });
export const PROJECTION = obj({ pending_action: LEAF, pending_action_revision: REVISION });
export const MESSAGE_EVENT = obj(Object.assign({}, MESSAGE_KEYS, {
  session_id: LEAF,
  task_id: LEAF,
  pending_action: LEAF,
  pending_action_revision: REVISION,
}));
export const TURN_EVENT = obj(Object.assign({}, TURN_KEYS, { session_id: LEAF, task_id: LEAF }));
export const SESSION_EVENT = obj({
  id: LEAF,
  session_id: LEAF,
  task_id: LEAF,
  state: LEAF,
  is_primary: LEAF,
  updated_at: LEAF,
  pending_action: LEAF,
  pending_action_revision: REVISION,
});
export const SUMMARY_EVENT = obj({ task_id: LEAF, status_summary: kept(SUMMARY) });
export const TASK_INPUT = obj({
  id: LEAF,
  status_summary: kept(SUMMARY),
  status_summary_invalidated: LEAF,
  task_pending_action: LEAF,
});
export const MESSAGES = arr(MESSAGE);
export const TURNS = arr(TURN);
export const SESSIONS = arr(SESSION);
export const TASK_INPUTS = arr(TASK_INPUT);
export const MESSAGE_EVENTS = arr(MESSAGE_EVENT);
export const SESSION_INPUT = obj({ session: SESSION, turns: TURNS, messages: MESSAGES });
export const RESOLVE_INPUT = obj({ task: TASK, sessions: SESSIONS, preferredSessionId: LEAF });
export const SELECTION_INPUT = obj({
  taskAtStart: TASK,
  taskNow: TASK,
  sessions: SESSIONS,
  loadFailed: LEAF,
  aborted: LEAF,
  superseded: LEAF,
  activeTaskChanged: LEAF,
  preferredSessionId: LEAF,
});
export const FETCHED_INPUT = obj({
  held: kept(SUMMARY),
  taskPresentAtFetchStart: LEAF,
  fetchStartRevision: LEAF,
  response: obj(Object.assign({}, TASK_KEYS, { status_summary: kept(SUMMARY) })),
});
export const SELECTION_OPTIONS = obj({ preferredSessionId: LEAF });
export const SETTLE_OUTCOME = obj({ aborted: LEAF, timedOut: LEAF, error: LEAF, sessions: SESSIONS });
export { LEAF };
