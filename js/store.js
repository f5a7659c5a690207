// The package's `ProjectionStore`: the wasm class, plus a fast path for the hot inputs (WebSocket
// message events and REST message pages). It reads the few fields the rules need in JS (cheap)
// and passes them to wasm as primitives in one call per message, instead of wasm reading each
// field across the boundary. Only messages whose fields all have their ordinary types take it;
// anything else (including every malformed payload) goes to the wasm decoder, which reports the
// typed error. The wasm side maps the fields with the decoder's own function
// (`MessageFields::into_message`); tests/js/store.fastpath.test.mjs checks both paths agree.
import { ProjectionStore as WasmProjectionStore, __memory } from './task_projection.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isText = (v) => v === undefined || v === null || typeof v === 'string';

/**
 * The fields of a message as the wasm side takes them, or `undefined` when the message has an
 * unusual shape (the wasm decoder then handles it).
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
  if (!isText(p.turn_id) || !isText(p.type) || !isText(status) || !isText(pendingId)) return undefined;
  if (!isText(p.created_at) || !isText(p.updated_at)) return undefined;
  return [id, p.turn_id, p.type, status, pendingId, typeof total === 'number' ? total : undefined, p.created_at, p.updated_at];
}

/** The arguments of `Boundary.apply` for an event payload, or `undefined`. */
function eventArgs(k, payload) {
  const f = messageFields(payload);
  if (f === undefined || typeof payload.session_id !== 'string' || !isText(payload.task_id)) return undefined;
  const a = payload.pending_action;
  const action = a === undefined ? 0 : a === null ? 1 : a === 'clarification' ? 2 : a === 'permission' ? 3 : -1;
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

// Plain comparisons (no Object.hasOwn): old WebViews run this file too.
const kindCode = (kind) => (kind === 'added' ? 0 : kind === 'updated' ? 1 : kind === 'deleted' ? 2 : -1);

/** Interned strings beyond this many are all forgotten (both sides) before the next call. */
const MAX_NAMES = 1 << 16;

/**
 * The boundary state of one store: the handles of the strings that repeat from event to event
 * (session, task, turn and pending ids, types, statuses, epochs), which cross into wasm once
 * each, and the scratch buffer where the text that does not repeat (message id, timestamps) is
 * written in place, with no allocation per string.
 */
class Boundary {
  constructor(store) {
    this.store = store;
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
      h = this.store.__intern(text);
      this.names.set(text, h);
    }
    return h;
  }

  /**
   * Makes room for `n` UTF-8 bytes from the start of the buffer and refreshes the view (the
   * wasm memory may have grown since the last call, which detaches the old view).
   */
  reserve(n) {
    if (n > this.capacity) {
      this.capacity = Math.max(n, this.capacity * 2, 256);
      this.ptr = this.store.__scratch(this.capacity);
    }
    const buffer = this.memory.buffer;
    if (this.bytes.buffer !== buffer || this.bytes.byteOffset !== this.ptr) {
      this.bytes = new Uint8Array(buffer, this.ptr, this.capacity);
    }
  }

  /** Writes `text` (or nothing) at `at` and returns its byte length, -1 when absent. */
  write(text) {
    if (text === undefined || text === null) return -1;
    const n = text.length;
    const bytes = this.bytes;
    const start = this.at;
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7f) break;
      bytes[start + i] = c;
    }
    if (i < n) {
      const { written } = encoder.encodeInto(text.slice(i), bytes.subarray(start + i));
      i += written;
    }
    this.at = start + i;
    return i;
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
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for the worst case, reserved once.
    const id = f[0];
    const created = f[6];
    const updated = f[7];
    this.reserve(3 * (id.length + (created == null ? 0 : created.length) + (updated == null ? 0 : updated.length)));
    this.at = 0;
    const idLen = this.write(id);
    const createdLen = this.write(created);
    const updatedLen = this.write(updated);
    return this.store.__applyMessage(k, session, task, idLen, turn, type, status, pending, f[5],
      createdLen, updatedLen, action, era, sequence);
  }

  /** Forgets every handle, on both sides. */
  reset() {
    this.names.clear();
    this.memoText.fill(undefined);
    this.memoHandle.fill(0);
    this.store.__internReset();
  }

  /** The handle of a session id already seen, or `undefined`. */
  known(id) {
    return typeof id === 'string' ? this.names.get(id) : undefined;
  }
}

const encoder = new TextEncoder();

export class ProjectionStore extends WasmProjectionStore {
  constructor(options) {
    super(options);
    this.__boundary = new Boundary(this);
  }

  applyMessageEvent(kind, payload) {
    const k = kindCode(kind);
    const args = k >= 0 ? eventArgs(k, payload) : undefined;
    if (args !== undefined) {
      return this.__boundary.apply(args[0], args[1], args[2], args[3], args[4], args[5], args[6]);
    }
    return super.applyMessageEvent(kind, payload);
  }

  applyMessageEvents(kind, payloads) {
    // All or nothing, like the wasm path: every event must take the fast path, else the wasm
    // decoder takes the batch (and rejects it whole when one is malformed).
    const k = kindCode(kind);
    if (k >= 0 && Array.isArray(payloads) && payloads.length > 0) {
      const batch = [];
      for (let i = 0; i < payloads.length; i++) {
        const args = eventArgs(k, payloads[i]);
        if (args === undefined) return super.applyMessageEvents(kind, payloads);
        batch.push(args);
      }
      const boundary = this.__boundary;
      for (let i = 0; i < batch.length; i++) {
        const a = batch[i];
        boundary.apply(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
      }
      return undefined;
    }
    return super.applyMessageEvents(kind, payloads);
  }

  applyMessagePage(sessionId, messages) {
    // All or nothing: every row must take the fast path, else the wasm decoder takes the page
    // (and rejects it whole when a row is malformed).
    if (typeof sessionId === 'string' && Array.isArray(messages)) {
      const rows = [];
      for (let i = 0; i < messages.length; i++) {
        const f = messageFields(messages[i]);
        if (f === undefined) return super.applyMessagePage(sessionId, messages);
        rows.push(f);
      }
      if (rows.length === 0) return super.applyMessagePage(sessionId, messages);
      const boundary = this.__boundary;
      for (let i = 0; i < rows.length; i++) {
        boundary.apply(i === 0 ? 4 : 3, sessionId, undefined, rows[i], 0, undefined, 0);
      }
      return undefined;
    }
    return super.applyMessagePage(sessionId, messages);
  }

  subscribe(listener) {
    if (typeof listener !== 'function') return super.subscribe(listener);
    // A listener that throws must not starve the others, nor vanish: its error is reported
    // (reportError where the platform has it: the console and `error` listeners in browsers;
    // else rethrown from its own microtask, an uncaught exception) after the others ran.
    return super.subscribe((changes) => {
      try {
        listener(changes);
      } catch (error) {
        if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
        else queueMicrotask(() => { throw error; });
      }
    });
  }

  dispose() {
    super.dispose();
    this.__boundary.reset();
  }
}

// Session queries by handle when the id is known to the boundary (same answers, same objects, no
// copy of the id into wasm); the index is the query number `__sessionQuery` takes.
['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission']
  .forEach((name, query) => {
    const byId = WasmProjectionStore.prototype[name];
    Object.defineProperty(ProjectionStore.prototype, name, {
      configurable: true,
      writable: true,
      value(sessionId) {
        const h = this.__boundary.known(sessionId);
        return h !== undefined ? this.__sessionQuery(query, h) : byId.call(this, sessionId);
      },
    });
  });
