// The package's `ProjectionStore`. It wraps the wasm class (which it keeps out of reach: the `__`
// boundary methods are not on the public object) and does three things the wasm side must not:
//   1. Reads every argument exactly once, in JS (./read.js), before anything crosses into wasm:
//      onto the tape the wasm methods take their arguments from, or, for messages, into plain
//      copies for the fast path. So no caller code runs under a wasm frame, and a call that throws
//      has changed nothing (a page or a batch is read whole before its first row applies).
//   2. The fast path for the hot inputs (WebSocket message events, REST message pages): the few
//      fields the rules read are passed as primitives in one call per message; the strings that
//      repeat (session, task, turn, pending ids, types, statuses, epochs) by handle, the rest
//      written into a scratch buffer in wasm memory. Only messages whose fields all have their
//      ordinary types take it; anything else goes to the wasm decoder (the same copy), which
//      reports the typed error. On the Rust side both paths map the fields with one function
//      (`wire::MessageMeaning::of`); tests/js/store.fastpath.test.mjs checks they agree.
//   3. Listeners: kept here and called from a microtask with what changed (`__takeChanges`), so a
//      listener, too, never runs under a wasm frame.
//   4. Recording (`startRecording`): the recorder is `task-projection/trace` (js/trace.js), which
//      an app imports to install it; this file only hands it each input the store accepted, as it
//      received it (its tape, or the fast path's copies), and costs one test per input otherwise.
// After `free()` or `dispose()` every method throws a TaskProjectionError `disposed`, except
// `settleSelection` (an outstanding ticket settles `inert`), `dispose` and `free` (no-ops).
import { ProjectionStore as WasmProjectionStore, __memory } from './task_projection.js';
import {
  readArg, readItems, readFrame, tape, utf8Into, taskProjectionError, typeName, assertInitialized,
  LEAF, SESSIONS, TURNS, MESSAGES, MESSAGE, MESSAGE_EVENT, MESSAGE_EVENTS, TURN_EVENT, SESSION_EVENT, SUMMARY_EVENT,
  TASK_INPUT, TASK_INPUTS, SELECTION_OPTIONS, SETTLE_OUTCOME, RESPOND_REPLY, HELLO, TASK_DELETED, SESSION_DELETED, RECORDING_OPTIONS, TAG,
  SNAPSHOT, DEHYDRATE_OPTIONS, HYDRATE_OPTIONS, POSITION, INBOX_PAGE, INBOX_SEED,
  // The codes of the fast-path calls `__applyMessage` and `__sessionQuery` (src/wire/fast.rs).
  FAST,
} from './read.js';

// The recorder's slot, one for every copy of the store in a page (each entry's, the loader's):
// importing `task-projection/trace` (js/trace.js) fills it with the function that starts a
// recording, given what it needs of this copy's read.js. The `.1` is the protocol between the two
// files (that call; `tape`, `args`, `step`, `text` of a recording).
const RECORDER = Symbol.for('task-projection.recorder.1');

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isText = (v) => v === undefined || v === null || typeof v === 'string';

/**
 * The fields of a message copy as the fast path takes them, or `undefined` when the message has
 * an unusual shape (the wasm decoder then handles it).
 */
function messageFields(p) {
  if (!isObject(p)) return undefined;
  const id = p.id !== undefined ? p.id : p.message_id;
  const m = p.metadata;
  const hasMeta = isObject(m);
  if (typeof id !== 'string' || !(hasMeta || m === undefined || m === null)) return undefined;
  const status = hasMeta ? m.status : undefined;
  const pendingId = hasMeta ? m.pending_id : undefined;
  const total = hasMeta ? m.question_total : undefined;
  const requestId = hasMeta ? m.request_id : undefined;
  if (!isText(p.turn_id) || !isText(p.type) || !isText(status) || !isText(pendingId) || !isText(requestId)) return undefined;
  if (!isText(p.created_at) || !isText(p.updated_at)) return undefined;
  // RowFlags (src/rules/model.rs): 1 a non-empty request_id, 2 agent_disconnected set (SPEC §2).
  const d = hasMeta ? m.agent_disconnected : undefined;
  const flags = (typeof requestId === 'string' && requestId !== '' ? 1 : 0) | (d === true || d === 1 || d === 'true' || d === '1' ? 2 : 0);
  return [id, p.turn_id, p.type, status, pendingId, typeof total === 'number' ? total : undefined, p.created_at, p.updated_at, flags];
}

/** The arguments of `Boundary.apply` for an event payload copy, or `undefined`. */
function eventArgs(k, payload) {
  const f = messageFields(payload);
  if (f === undefined || typeof payload.session_id !== 'string' || !isText(payload.task_id)) return undefined;
  const a = payload.pending_action;
  const A = FAST.action;
  const action = a === undefined ? A.absent : a === null ? A.clean : a === 'clarification' ? A.clarification : a === 'permission' ? A.permission : -1;
  if (action < 0) return undefined;
  const r = payload.pending_action_revision;
  let epoch;
  let sequence = 0;
  if (isObject(r)) {
    if (typeof r.epoch !== 'string' || !Number.isSafeInteger(r.sequence) || r.sequence < 0) return undefined;
    epoch = r.epoch;
    sequence = r.sequence;
  } else if (r !== undefined && r !== null) {
    return undefined;
  }
  return [k, payload.session_id, payload.task_id, f, action, epoch, sequence];
}

const kindCode = (kind) => (kind === 'added' ? FAST.kind.added : kind === 'updated' ? FAST.kind.updated : kind === 'deleted' ? FAST.kind.deleted : -1);

/**
 * The fast-path arguments (`Boundary.apply`'s) of every copy of a page or batch, by `argsOf`, or
 * `undefined` when one has none or there are none: all or nothing, like the wasm decoder, which
 * then takes the whole list (and rejects it whole when one is malformed).
 */
function fastArgs(copies, argsOf) {
  if (copies.length === 0) return undefined;
  const all = new Array(copies.length);
  for (let i = 0; i < copies.length; i++) {
    const args = argsOf(copies[i], i);
    if (args === undefined) return undefined;
    all[i] = args;
  }
  return all;
}

/** UTF-8 takes at most 3 bytes per UTF-16 unit: the scratch room one message's text needs. */
function textRoom(f) {
  return 3 * (f[0].length + (f[6] == null ? 0 : f[6].length) + (f[7] == null ? 0 : f[7].length));
}

/** Interned strings beyond this many are all forgotten (both sides) before the next call. */
const MAX_NAMES = 1 << 16;

/**
 * The boundary state of one store: the handles of the strings that repeat from event to event,
 * which cross into wasm once each, and the scratch buffer where the text that does not repeat
 * (message id, timestamps) is written in place, with no allocation per string.
 */
class Boundary {
  constructor(wasm) {
    this.wasm = wasm;
    this.names = new Map();
    // The last text and handle per field (session, task, turn, type, status, pending, epoch):
    // a burst of events repeats them, and a string comparison is cheaper than a Map lookup.
    this.memoText = [undefined, undefined, undefined, undefined, undefined, undefined, undefined];
    this.memoHandle = [0, 0, 0, 0, 0, 0, 0];
    this.memory = __memory();
    this.bytes = new Uint8Array(0);
    this.ptr = 0;
    this.capacity = 0;
    this.at = 0;
  }

  /** The handle of `text` as field `i` (see `memoText`). */
  field(i, text) {
    if (text === this.memoText[i]) return this.memoHandle[i];
    const h = this.handle(text);
    this.memoText[i] = text;
    this.memoHandle[i] = h;
    return h;
  }

  handle(text) {
    if (text === undefined || text === null) return 0;
    let h = this.names.get(text);
    if (h === undefined) {
      h = this.wasm.__intern(text);
      this.names.set(text, h);
    }
    return h;
  }

  /**
   * Makes room for `n` UTF-8 bytes from the start of the buffer and refreshes the view (the
   * wasm memory may have grown since the last call, which detaches the old view). Throws a
   * TaskProjectionError when the memory cannot hold them; callers reserve before applying.
   */
  reserve(n) {
    if (n > this.capacity) {
      const capacity = Math.max(n, this.capacity * 2, 256);
      this.ptr = this.wasm.__scratch(capacity);
      this.capacity = capacity;
    }
    const buffer = this.memory.buffer;
    if (this.bytes.buffer !== buffer || this.bytes.byteOffset !== this.ptr) {
      this.bytes = new Uint8Array(buffer, this.ptr, this.capacity);
    }
  }

  /** Writes `text` (or nothing) at `at` and returns its byte length, -1 when absent. */
  write(text) {
    if (text === undefined || text === null) return -1;
    const length = utf8Into(this.bytes, this.at, text);
    this.at += length;
    return length;
  }

  /** One message (fields as `messageFields` returns them) through `__applyMessage`. */
  apply(k, sessionId, taskId, f, action, epoch, sequence) {
    if (this.names.size >= MAX_NAMES) this.reset();
    const session = this.field(0, sessionId);
    const task = this.field(1, taskId);
    const turn = this.field(2, f[1]);
    const type = this.field(3, f[2]);
    const status = this.field(4, f[3]);
    const pending = this.field(5, f[4]);
    const era = this.field(6, epoch);
    this.reserve(textRoom(f));
    this.at = 0;
    const idLen = this.write(f[0]);
    const createdLen = this.write(f[6]);
    const updatedLen = this.write(f[7]);
    return this.wasm.__applyMessage(k, session, task, idLen, turn, type, status, pending, f[5], f[8],
      createdLen, updatedLen, action, era, sequence);
  }

  /** Every message of a page or batch (`fastArgs`), with room reserved for the longest first. */
  applyAll(all) {
    let room = 0;
    for (let i = 0; i < all.length; i++) room = Math.max(room, textRoom(all[i][3]));
    this.reserve(room);
    for (let i = 0; i < all.length; i++) {
      const a = all[i];
      this.apply(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    }
  }

  /** Forgets every handle, on both sides. */
  reset() {
    this.names.clear();
    this.memoText.fill(undefined);
    this.memoHandle.fill(0);
    this.wasm.__internReset();
  }

  /** The handle of a session id already seen, or `undefined`. */
  known(id) {
    return typeof id === 'string' ? this.names.get(id) : undefined;
  }
}

const defer = typeof queueMicrotask === 'function' ? queueMicrotask : (f) => { Promise.resolve().then(f); };

/** A listener's exception: reported, never thrown into the store or the other listeners. */
function report(error) {
  if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
  else defer(() => { throw error; });
}

/** Public store → its state. Nothing of the wasm object is reachable from the public one. */
const STATE = new WeakMap();

/** The state of a store that is still usable, or a TaskProjectionError `disposed`. */
// The development build (the `development` export condition, pkg/development/) is the one whose
// wasm exports `explain` (Cargo feature `development`): explanations, the rejection log, `digest`,
// `stats` and the recorder's hook. The production build has none of them, and says so.
const DEVELOPMENT = typeof WasmProjectionStore.prototype.explain === 'function';

/** `live(store)`, in the development build only (else `development_only`, arguments unread). */
function development(store, method) {
  const s = live(store);
  if (!DEVELOPMENT) {
    throw taskProjectionError(
      'development_only',
      'this',
      `this: ${method}() is in the development build only: resolve 'task-projection' with the "development" export condition (next dev and vite do; node --conditions=development) or import 'task-projection/development'`,
    );
  }
  return s;
}

function live(store) {
  const s = STATE.get(store);
  if (s === undefined) throw taskProjectionError('invalid_type', 'this', 'this: not a ProjectionStore (a method called without its store?)');
  if (s.wasm === undefined) throw taskProjectionError('disposed', 'this', `this: the store was ${s.freed ? 'freed' : 'disposed'}`);
  return s;
}

/** After a mutation: tell the listeners, once per microtask. */
function changed(s) {
  if (s.listeners.length === 0 || s.scheduled) return;
  s.scheduled = true;
  defer(() => {
    s.scheduled = false;
    if (s.wasm === undefined || s.listeners.length === 0) return;
    const changes = s.wasm.__takeChanges();
    if (changes === null) return;
    const listeners = s.listeners.slice();
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i].listener(changes);
      } catch (error) {
        report(error);
      }
    }
  });
}

/** The message frames' types and their event kinds. */
const MESSAGE_FRAMES = Object.freeze({
  __proto__: null,
  'session.message.added': 'added',
  'session.message.updated': 'updated',
  'session.message.deleted': 'deleted',
});

/** What `applyFrame` did (FrameOutcome in the declarations). */
function frameOutcome(type, applied, reason, refetch, offset, taskId, s) {
  // A frame taken at an offset moves the store's place in the stream (src/rules/connection.rs).
  if (s !== undefined && typeof offset === 'number') s.wasm.__frameOffset(offset, false);
  const out = { type, applied, reason, refetch, offset };
  if (refetch === 'sessions') out.taskId = taskId;
  return out;
}

/** The tape of a call with one argument (the wasm method takes it from there); the input of
 * store `s`'s recording when it is one. */
function one(value, node, name, s) {
  return send(tape().arg(value, node, name), s);
}

/** The tape of a call with two arguments. */
function two(a, nodeA, nameA, b, nodeB, nameB, s) {
  return send(tape().arg(a, nodeA, nameA).arg(b, nodeB, nameB), s);
}

function send(t, s) {
  if (s !== undefined && s.rec !== undefined) s.rec.tape(t);
  return t.send();
}

/** A snapshot argument: the object, or its JSON text parsed. */
function snapshotValue(snapshot) {
  if (typeof snapshot !== 'string') return snapshot;
  try {
    return JSON.parse(snapshot);
  } catch (error) {
    throw taskProjectionError('invalid_type', 'snapshot', `snapshot: not JSON text (${error && error.message})`, error);
  }
}

/** What a refused `respondStart` says, by code. */
const REFUSED = {
  bundle_not_live: "not the session's live question",
  live_question_unknown: "the session's live question is not known yet",
  permission_expired: 'the permission carries no request_id: it cannot be answered',
};

/**
 * The inbox's `now` as timestamp text: a Date or epoch milliseconds converted, anything else as
 * it is (the decoder refuses what is not a timestamp string, as it refuses an invalid time).
 */
function clockText(now) {
  let ms;
  try {
    ms = typeof now === 'number' ? now : now instanceof Date ? Date.prototype.getTime.call(now) : undefined;
  } catch (error) {
    throw taskProjectionError('unreadable_value', 'now', `now: reading it threw (${error && error.message})`, error);
  }
  if (ms === undefined) return now;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : ms;
}

/** While recording: the input `call` was accepted (with `result`). */
function note(s, call, result) {
  if (s.rec !== undefined) s.rec.step(call, result);
  return result;
}

/** A typed error for an argument that must be a function. */
function notAFunction(name, value) {
  return taskProjectionError('invalid_type', name, `${name}: expected a function, got ${typeName(value)}`);
}

/** `applyFrame`'s routing of a frame read once (`store` the package's store, `s` its state). */
function route(store, s, type, payload, offset) {
  const kind = MESSAGE_FRAMES[type];
  if (kind !== undefined) {
    store.applyMessageEvent(kind, payload);
    return frameOutcome(type, true, s.wasm.lastReason(), null, offset, undefined, s);
  }
  switch (type) {
    case 'turn.started':
    case 'turn.completed':
      store.applyTurnEvent(payload);
      break;
    case 'session.state_changed':
      store.applySessionEvent(payload);
      break;
    case 'session.created': {
      // The session joins its task's list only through the list (its order is the server's):
      // the caller refetches it. Read once here, so the task id is known without a second read.
      const copy = readArg(payload, SESSION_EVENT, 'payload');
      store.applySessionEvent(copy);
      const taskId = typeof copy.task_id === 'string' ? copy.task_id : null;
      return frameOutcome(type, true, s.wasm.lastReason(), 'sessions', offset, taskId, s);
    }
    case 'task.status_summary.updated':
      store.applyStatusSummaryEvent(payload);
      break;
    case 'task.updated':
      store.applyTaskUpdated(payload);
      break;
    case 'task.deleted': {
      const copy = readArg(payload, TASK_DELETED, 'payload');
      if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
        throw taskProjectionError('invalid_type', 'payload', `payload: expected an object { task_id }, got ${typeName(copy)}`);
      }
      store.removeTask(copy.task_id);
      break;
    }
    case 'session.deleted': {
      const copy = readArg(payload, SESSION_DELETED, 'payload');
      if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
        throw taskProjectionError('invalid_type', 'payload', `payload: expected an object { session_id }, got ${typeName(copy)}`);
      }
      store.removeSession(copy.session_id);
      break;
    }
    case 'server.hello': {
      // Read once into a copy: the wasm decoder validates it (and the rule reads `epoch` and
      // `resumed`); the outcome reports the copy's `stream` and `offset` (the offset of the
      // last event published before this connection).
      const copy = readArg(payload, HELLO, 'payload');
      one(copy, HELLO, 'payload', s);
      const refetch = s.wasm.__hello();
      note(s, 'applyFrame');
      changed(s); // a hello confirms restored state (`restored()`)
      const out = frameOutcome(type, true, s.wasm.lastReason(), refetch ? 'all' : null, typeof copy.offset === 'number' ? copy.offset + 0 : null);
      out.stream = typeof copy.stream === 'string' ? copy.stream : null;
      return out;
    }
    case 'task.stalled':
      return frameOutcome(type, false, 'not_stored', null, offset, undefined, s);
    default:
      return frameOutcome(type, false, 'unknown_frame_type', null, offset, undefined, s);
  }
  return frameOutcome(type, true, s.wasm.lastReason(), null, offset, undefined, s);
}

export class ProjectionStore {
  constructor(options) {
    // No options yet; reading none keeps a caller's getter from running.
    void options;
    assertInitialized();
    const wasm = new WasmProjectionStore();
    STATE.set(this, {
      wasm,
      boundary: new Boundary(wasm),
      listeners: [],
      scheduled: false,
      freed: false,
      // The rows of the inbox page the store holds (its own copies; the store names them by index).
      inboxRows: [],
      // The fast path is on; tests turn it off to compare it with the wasm decoder.
      fast: true,
      // The recording in progress (startRecording), or undefined.
      rec: undefined,
      // What the devtools hook's `read` is given, while it runs (development build).
      held: undefined,
    });
  }

  // ---- REST ---------------------------------------------------------------------------------

  applySessionList(taskId, sessions) {
    const s = live(this);
    two(taskId, LEAF, 'taskId', sessions, SESSIONS, 'sessions', s);
    s.wasm.applySessionList();
    note(s, 'applySessionList');
    changed(s);
  }

  applyTurnList(sessionId, turns) {
    const s = live(this);
    two(sessionId, LEAF, 'sessionId', turns, TURNS, 'turns', s);
    s.wasm.applyTurnList();
    note(s, 'applyTurnList');
    changed(s);
  }

  applyMessagePage(sessionId, messages) {
    const s = live(this);
    const id = readArg(sessionId, LEAF, 'sessionId');
    const read = readItems(messages, MESSAGE, 'messages');
    const K = FAST.kind;
    const rows = s.fast && typeof id === 'string' && read !== undefined
      ? fastArgs(read.copies, (copy, i) => {
        const f = messageFields(copy);
        return f && [i === 0 ? K.pageFirst : K.pageRow, id, undefined, f, FAST.action.absent, undefined, 0];
      })
      : undefined;
    const copies = read !== undefined ? read.copies : readArg(messages, LEAF, 'messages');
    if (rows !== undefined) {
      s.boundary.applyAll(rows);
    } else {
      two(id, LEAF, 'sessionId', copies, MESSAGES, 'messages');
      s.wasm.applyMessagePage();
    }
    if (s.rec !== undefined) s.rec.args = [id, copies];
    note(s, 'applyMessagePage');
    changed(s);
  }

  beginTaskFetch() {
    const s = live(this);
    if (s.rec !== undefined) s.rec.args = [];
    return note(s, 'beginTaskFetch', s.wasm.beginTaskFetch());
  }

  applyTaskSnapshot(token, tasks) {
    const s = live(this);
    s.wasm.applyTaskSnapshot(two(token, LEAF, 'token', tasks, TASK_INPUTS, 'tasks', s));
    note(s, 'applyTaskSnapshot');
    changed(s);
  }

  // ---- WebSocket ----------------------------------------------------------------------------

  applyMessageEvent(kind, payload) {
    const s = live(this);
    const k = kindCode(kind);
    const copy = readArg(payload, MESSAGE_EVENT, 'payload');
    const args = k >= 0 && s.fast ? eventArgs(k, copy) : undefined;
    if (args !== undefined) {
      s.boundary.apply(args[0], args[1], args[2], args[3], args[4], args[5], args[6]);
    } else {
      two(kind, LEAF, 'kind', copy, MESSAGE_EVENT, 'payload');
      s.wasm.applyMessageEvent();
    }
    // `kind` is a string: the call was accepted.
    if (s.rec !== undefined) s.rec.args = [kind, copy];
    note(s, 'applyMessageEvent');
    changed(s);
  }

  applyMessageEvents(kind, payloads) {
    const s = live(this);
    const k = kindCode(kind);
    const read = readItems(payloads, MESSAGE_EVENT, 'payloads');
    const batch = k >= 0 && s.fast && read !== undefined ? fastArgs(read.copies, (copy) => eventArgs(k, copy)) : undefined;
    const copies = read !== undefined ? read.copies : readArg(payloads, LEAF, 'payloads');
    if (batch !== undefined) {
      s.boundary.applyAll(batch);
    } else {
      two(kind, LEAF, 'kind', copies, MESSAGE_EVENTS, 'payloads');
      s.wasm.applyMessageEvents();
    }
    if (s.rec !== undefined) s.rec.args = [kind, copies];
    note(s, 'applyMessageEvents');
    changed(s);
  }

  applyTurnEvent(payload) {
    const s = live(this);
    one(payload, TURN_EVENT, 'payload', s);
    s.wasm.applyTurnEvent();
    note(s, 'applyTurnEvent');
    changed(s);
  }

  applySessionEvent(payload) {
    const s = live(this);
    one(payload, SESSION_EVENT, 'payload', s);
    s.wasm.applySessionEvent();
    note(s, 'applySessionEvent');
    changed(s);
  }

  applyStatusSummaryEvent(payload) {
    const s = live(this);
    s.wasm.applyStatusSummaryEvent(one(payload, SUMMARY_EVENT, 'payload', s));
    note(s, 'applyStatusSummaryEvent');
    changed(s);
  }

  applyTaskUpdated(payload) {
    const s = live(this);
    s.wasm.applyTaskUpdated(one(payload, TASK_INPUT, 'payload', s));
    note(s, 'applyTaskUpdated');
    changed(s);
  }

  removeTask(taskId) {
    const s = live(this);
    one(taskId, LEAF, 'taskId', s);
    s.wasm.removeTask();
    note(s, 'removeTask');
    changed(s);
  }

  /** The session was deleted (`session.deleted`, or the reply of the app's delete): a tombstone (SPEC §5). */
  removeSession(sessionId) {
    const s = live(this);
    one(sessionId, LEAF, 'sessionId', s);
    s.wasm.removeSession();
    note(s, 'removeSession');
    changed(s);
  }

  // ---- queries ------------------------------------------------------------------------------

  taskPendingAction(taskId) {
    const s = live(this);
    one(taskId, LEAF, 'taskId');
    return s.wasm.taskPendingAction();
  }

  /** The held summary: the store's frozen copy of the one passed in (the same object until it
   * changes), or null / undefined. */
  taskStatusSummary(taskId) {
    const s = live(this);
    one(taskId, LEAF, 'taskId');
    return s.wasm.taskStatusSummary();
  }

  pendingOwner(taskId, preferredSessionId) {
    const s = live(this);
    two(taskId, LEAF, 'taskId', preferredSessionId, LEAF, 'preferredSessionId');
    return s.wasm.pendingOwner();
  }

  /** Why the store answers what it does about a session (a fresh plain object; for people). */
  explain(sessionId) {
    const s = development(this, 'explain');
    one(sessionId, LEAF, 'sessionId');
    return JSON.parse(s.wasm.explain());
  }

  /** Why the store answers what it does about a task's pending owner. */
  explainOwner(taskId, preferredSessionId) {
    const s = development(this, 'explainOwner');
    two(taskId, LEAF, 'taskId', preferredSessionId, LEAF, 'preferredSessionId');
    return JSON.parse(s.wasm.explainOwner());
  }

  lastReason() {
    return live(this).wasm.lastReason();
  }

  lastApplyReason() {
    return live(this).wasm.lastApplyReason();
  }

  // ---- frames -------------------------------------------------------------------------------

  /**
   * One WebSocket frame of the reference server (docs/server-api.md), `{ type, payload, offset? }`
   * or its JSON text, routed to the apply call its type names. Returns what happened, what to
   * refetch and the frame's stream offset; a type the store keeps nothing of is reported, not
   * thrown. A malformed offset or payload throws the typed error (of that apply call), with
   * nothing changed.
   */
  applyFrame(frame) {
    const s = live(this);
    const { type, payload, offset } = readFrame(frame);
    // The frame begins: the sessions it changes take its offset (the inbox, SPEC §14); after a
    // throw, the next input is no frame.
    s.wasm.__frameOffset(typeof offset === 'number' ? offset : -1, true);
    try {
      return route(this, s, type, payload, offset);
    } finally {
      if (s.wasm !== undefined) s.wasm.__frameOffset(-1, true);
    }
  }

  // ---- snapshots (SPEC §12) ------------------------------------------------------------------

  /**
   * What the store holds for `tasks` (and their sessions) and `sessions` (everything without
   * options), with its answers: a plain JSON-safe object of its own (docs/snapshot-format.md).
   * Never throws for what the store holds: a summary was read into JSON data when it came in.
   */
  dehydrate(options) {
    const s = live(this);
    one(options, DEHYDRATE_OPTIONS, 'options');
    const summaries = [];
    const snapshot = JSON.parse(s.wasm.__dehydrate(summaries));
    // Each held summary (written as its index in `summaries`: the store's frozen JSON data) is
    // copied here, unfrozen, once per task.
    const copies = new Map();
    const copy = (id, index) => {
      if (!copies.has(id)) copies.set(id, JSON.parse(JSON.stringify(summaries[index])));
      return copies.get(id);
    };
    for (const task of snapshot.tasks) if (typeof task.summary === 'number') task.summary = copy(task.id, task.summary);
    for (const [id, answers] of Object.entries(snapshot.answers.tasks)) {
      if (typeof answers.taskStatusSummary === 'number') answers.taskStatusSummary = copy(id, answers.taskStatusSummary);
    }
    return snapshot;
  }

  /**
   * A store built from a snapshot (an object or its JSON text) of `dehydrate()`: every answer as
   * the source's. `{ restored: true }` marks its answers as restored (`restored()`) until the
   * stream's first `server.hello` or a task snapshot. A snapshot is read once and checked whole:
   * a malformed one, or of an unknown version (`unsupported_version`), throws and creates nothing.
   */
  static hydrate(snapshot, options) {
    const store = new ProjectionStore();
    const s = STATE.get(store);
    try {
      s.wasm.__snapshot(two(snapshotValue(snapshot), SNAPSHOT, 'snapshot', options, HYDRATE_OPTIONS, 'options'), true);
    } catch (error) {
      store.free();
      throw error;
    }
    return store;
  }

  /**
   * Merges another page's snapshot (an object or its JSON text, of `dehydrate()`) into this
   * store: each part is ordered against what the store holds by the rule of its input (a
   * session's state by its clock, its projection by revision, turns and messages as a REST list,
   * a summary by revision, a removal is final), so an older part is ignored (`explain` logs it)
   * and a newer one taken, in whatever order pages come; no clock of the client's is read.
   * `lastReason()`: `applied`, or `unchanged` when the store already held all of it. A malformed
   * snapshot throws and changes nothing. Not recorded in a trace.
   */
  merge(snapshot) {
    const s = live(this);
    s.wasm.__snapshot(one(snapshotValue(snapshot), SNAPSHOT, 'snapshot'), false);
    changed(s);
  }

  /** Restored from storage and not yet confirmed by a `server.hello` or a task snapshot. */
  restored() {
    return live(this).wasm.restored();
  }

  /** Where the state held stands in the server's event stream: `{ stream, offset }` or `null`. */
  streamPosition() {
    return live(this).wasm.streamPosition();
  }

  /** The REST state applied was read at `{ stream, offset }` of the server's event stream. */
  applyStreamPosition(position) {
    const s = live(this);
    // Not recorded: a trace holds what decides answers, and the stream position decides none.
    one(position, POSITION, 'position');
    s.wasm.applyStreamPosition();
  }

  // ---- the workspace inbox (SPEC §14) --------------------------------------------------------
  // In the development build only, for now (the production wasm may not grow: docs/package.md).
  // Not recorded in a trace. The store names a page's rows by index; this keeps their copies.

  applyInboxPage(workspaceId, page, at) {
    const s = development(this, 'applyInboxPage');
    const rows = send(tape().arg(workspaceId, LEAF, 'workspaceId').arg(page, INBOX_PAGE, 'page').arg(at, POSITION, 'at'));
    s.wasm.__inbox(0);
    if (s.wasm.lastReason() === 'applied') s.inboxRows = rows;
    changed(s);
  }

  applyInboxSeed(seed) {
    const s = development(this, 'applyInboxSeed');
    one(seed, INBOX_SEED, 'seed');
    s.wasm.__inbox(1);
    changed(s);
  }

  inboxReadFailed(workspaceId, at) {
    const s = development(this, 'inboxReadFailed');
    two(workspaceId, LEAF, 'workspaceId', at, POSITION, 'at');
    s.wasm.__inbox(2);
    changed(s);
  }

  inbox(workspaceId, now) {
    const s = development(this, 'inbox');
    two(workspaceId, LEAF, 'workspaceId', clockText(now === undefined ? Date.now() : now), LEAF, 'now');
    const a = s.wasm.__inbox(3);
    const rows = [];
    for (let i = 7; i < a.length; i++) {
      if (a[i] >= 0) {
        const row = s.inboxRows[a[i]];
        rows.push({ pendingId: row.pending_id, sessionId: row.session_id, taskId: row.task_id, createdAt: row.created_at, row });
      } else {
        rows.push({ pendingId: a[i + 1], sessionId: a[i + 2], taskId: a[i + 3], createdAt: a[i + 4], row: null });
        i += 4;
      }
    }
    const reason = a[0];
    return {
      state: reason === 'inbox_known' ? 'known' : reason === 'inbox_read_failed' ? 'error' : 'unknown',
      reason, reread: a[1], count: rows.length, rows, more: a[2], hiddenCount: a[3], nextSnoozeExpiry: a[4],
      seed: a[5] < 0 ? null : { count: a[5], hasMore: a[6] },
    };
  }

  // ---- selection ----------------------------------------------------------------------------

  beginSelection(taskId, options) {
    const s = live(this);
    two(taskId, LEAF, 'taskId', options, SELECTION_OPTIONS, 'options', s);
    return note(s, 'beginSelection', s.wasm.beginSelection());
  }

  setActiveTask(taskId) {
    const s = live(this);
    one(taskId, LEAF, 'taskId', s);
    s.wasm.setActiveTask();
    note(s, 'setActiveTask');
    changed(s);
  }

  settleSelection(ticket, outcome) {
    const s = STATE.get(this);
    // A load that resolves after the store went away settles inert (SPEC §6: never navigate).
    if (s !== undefined && s.wasm === undefined) return { kind: 'inert' };
    const store = live(this);
    two(ticket, LEAF, 'ticket', outcome, SETTLE_OUTCOME, 'outcome', store);
    const result = note(store, 'settleSelection', store.wasm.settleSelection());
    changed(store);
    return result;
  }

  // ---- the user's actions (SPEC §13) ---------------------------------------------------------

  /**
   * The user answers or skips bundle `pendingId` of a session: `{ attempt, fresh }`. `fresh` is
   * `false` when that bundle's attempt is already in flight (a double click): send nothing, the
   * reply to the first request settles it. Throws `bundle_not_live` (the bundle is not the
   * session's live question) or `live_question_unknown` (not known yet), field `pendingId`.
   */
  respondStart(sessionId, pendingId, kind) {
    const s = live(this);
    send(tape().arg(sessionId, LEAF, 'sessionId').arg(pendingId, LEAF, 'pendingId').arg(kind, LEAF, 'kind'), s);
    const started = s.wasm.respondStart();
    if (typeof started === 'string') {
      throw taskProjectionError(started, 'pendingId', `pendingId: ${REFUSED[started]}`);
    }
    note(s, 'respondStart', started);
    changed(s);
    return started;
  }

  /**
   * How attempt `attempt`'s request ended: `{ status, body }` (the HTTP status and the parsed
   * JSON body, `undefined` when it was not JSON) or `{ error: 'network' | 'timeout' }`. Returns
   * `{ outcome, failure, applied, reason }`: `outcome` `won`, `lost`, `no_longer_active` (the
   * bundle stops needing the user), `refused` or `failed` (answerable again); `applied: false`
   * with `reason` when the reply changed nothing.
   */
  respondReply(attempt, reply) {
    const s = live(this);
    two(attempt, LEAF, 'attempt', reply, RESPOND_REPLY, 'reply', s);
    const result = note(s, 'respondReply', s.wasm.respondReply());
    changed(s);
    return result;
  }

  /**
   * What the user may do in the session now (SPEC §13): `{ respond, cancel, send }` (answer or
   * skip the live question; stop the agent; send a message), `undefined` while its state or live
   * question is not known. A fresh object per call.
   */
  offeredActions(sessionId) {
    const s = live(this);
    one(sessionId, LEAF, 'sessionId', undefined);
    return s.wasm.offeredActions();
  }

  /**
   * Which session to open after the user deleted `deletedSessionId` while `openSessionId` was
   * open (SPEC §13): the open one when another was deleted, else the first remaining session of
   * the task's list (newest first), `null` for none, `undefined` while the list is not known.
   */
  sessionAfterDelete(taskId, openSessionId, deletedSessionId) {
    const s = live(this);
    send(tape().arg(taskId, LEAF, 'taskId').arg(openSessionId, LEAF, 'openSessionId').arg(deletedSessionId, LEAF, 'deletedSessionId'), undefined);
    return s.wasm.sessionAfterDelete();
  }

  /**
   * The permission the session is blocked on: `{ messageId, pendingId, status, answerable }`
   * (`status` `expired` and `answerable: false` when it carries no `request_id`), `null` when
   * none, `undefined` while not known.
   */
  pendingPermission(sessionId) {
    const s = live(this);
    one(sessionId, LEAF, 'sessionId', undefined);
    return s.wasm.pendingPermission();
  }

  /** Where bundle `pendingId`'s respond stands: `{ attempt, phase, outcome }` or `null`. */
  respondState(sessionId, pendingId) {
    const s = live(this);
    two(sessionId, LEAF, 'sessionId', pendingId, LEAF, 'pendingId', undefined);
    return s.wasm.respondState();
  }

  // ---- recording ----------------------------------------------------------------------------

  /**
   * Records every input from now on (docs/trace-format.md): ids and the fields the rules read,
   * never message content, with the answers each input changed, in a ring of `maxBytes`. Needs
   * `import 'task-projection/trace'` first (else `recording_unavailable`, options not read).
   */
  startRecording(options) {
    const s = development(this, 'startRecording');
    // (No `globalThis` in engines older than 2019: no recorder either.)
    const start = typeof globalThis === 'object' ? globalThis[RECORDER] : undefined;
    if (typeof start !== 'function') throw taskProjectionError('recording_unavailable', 'this', "this: startRecording() needs import 'task-projection/trace' first");
    s.rec = start(this, s.wasm, options === undefined ? undefined : readArg(options, RECORDING_OPTIONS, 'options'), s.rec !== undefined, TAG, taskProjectionError);
  }

  /** The trace recorded since `startRecording` (newline-delimited JSON), or `null`. */
  stopRecording() {
    const s = live(this);
    const rec = s.rec;
    s.rec = undefined;
    return rec === undefined ? null : rec.text();
  }

  // ---- notification, lifecycle --------------------------------------------------------------

  subscribe(listener) {
    const s = live(this);
    if (typeof listener !== 'function') throw notAFunction('listener', listener);
    const entry = { listener };
    s.listeners.push(entry);
    if (s.listeners.length === 1) s.wasm.__track(true);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const i = s.listeners.indexOf(entry);
      if (i >= 0) s.listeners.splice(i, 1);
      // Nobody listens: record no changes (an event then allocates nothing for them).
      if (s.listeners.length === 0 && s.wasm !== undefined) s.wasm.__track(false);
    };
  }

  version() {
    return live(this).wasm.version();
  }

  /** Drops all state and listeners; outstanding tickets become inert, other methods throw. */
  dispose() {
    const s = STATE.get(this);
    if (s === undefined || s.wasm === undefined) return;
    s.listeners.length = 0;
    s.rec = undefined;
    s.wasm.dispose();
    s.boundary.reset();
    s.wasm.free();
    s.wasm = undefined;
    s.boundary = undefined;
  }

  digest() {
    return development(this, 'digest').wasm.digest();
  }

  stats() {
    return development(this, 'stats').wasm.stats();
  }

  /** Releases the store's wasm memory (also done by `dispose()`); no-op when already released. */
  free() {
    const s = STATE.get(this);
    if (s === undefined) return;
    if (s.wasm !== undefined) this.dispose();
    s.freed = true;
  }
}

/**
 * Test hooks, on no public object and re-exported by no package entry (tests import this file by
 * path): `decoderOnly(store)` sends every input of `store` through the wasm decoder (to compare
 * the fast path with it); `boundaryNames(store)` is how many strings its boundary holds handles of.
 */
export const __testing = Object.freeze({
  decoderOnly(store) {
    const s = STATE.get(store);
    if (s !== undefined) s.fast = false;
    return store;
  },
  boundaryNames(store) {
    const s = STATE.get(store);
    return s !== undefined && s.boundary !== undefined ? s.boundary.names.size : 0;
  },
  /** The whole state `store` holds as the wasm writes it (its snapshot's JSON text, each summary
   * an index into `summaries`, the caller's own objects), or undefined for another copy's store.
   * Tests compare it where the production build has no `digest()`. */
  state(store) {
    const s = STATE.get(store);
    if (s === undefined || s.wasm === undefined) return undefined;
    one(undefined, DEHYDRATE_OPTIONS, 'options');
    const summaries = [];
    return { text: s.wasm.__dehydrate(summaries), summaries };
  },
});

if (typeof Symbol === 'function' && Symbol.dispose) ProjectionStore.prototype[Symbol.dispose] = ProjectionStore.prototype.free;

// The devtools panel's hook (`task-projection/devtools`, js/devtools-dom.js), under a symbol every
// copy of this file shares (the `.1` is the protocol between the two files), so no public name:
// `store[DEVTOOLS](read)` returns `read(held)`, `held` being what the wasm holds (`__held`:
// `{ engine, tasks, sessions, sessionTasks }`, a session's task at its index or null); `read` asks
// their answers through the public queries, and the `lastReason()` those overwrite is put back
// after it, so that looking changes nothing of the store. A call inside `read` gets the same
// `held`. The production build throws `development_only`.
if (typeof Symbol === 'function' && Symbol.for) {
  ProjectionStore.prototype[Symbol.for('task-projection.devtools.1')] = function devtools(read) {
    const s = development(this, 'devtools');
    if (typeof read !== 'function') throw notAFunction('read', read);
    if (s.held !== undefined) return read(s.held);
    const wasm = s.wasm;
    s.held = wasm.__held(false);
    try {
      return read(s.held);
    } finally {
      s.held = undefined;
      // (Unless `read` disposed of the store.)
      if (s.wasm === wasm) wasm.__held(true);
    }
  };
}

// Session queries by handle when the id is known to the boundary (same answers, same objects, no
// copy of the id into wasm).
['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission']
  .forEach((name) => {
    const query = FAST.query[name];
    Object.defineProperty(ProjectionStore.prototype, name, {
      configurable: true,
      writable: true,
      value(sessionId) {
        const s = live(this);
        const h = s.boundary.known(sessionId);
        if (h !== undefined) return s.wasm.__sessionQuery(query, h);
        one(sessionId, LEAF, 'sessionId');
        return s.wasm[name]();
      },
    });
  });
