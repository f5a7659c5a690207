// The read-once boundary. Every value a caller passes is read here, in JS, exactly once, before
// anything crosses into wasm. What the engine reads of it (a schema per argument) is written onto
// the tape: 32-bit words and UTF-8 bytes, written straight into wasm memory as they are read (a
// re-entrant call's are copied there at `send()`), which the call then decodes with the one Rust
// decoder (src/wire/tape.rs has the format). So
//   - no caller code (a getter, a Proxy trap, a throwing `length`) ever runs under a wasm frame,
//     where an exception would unwind past Rust without restoring its stack or its borrows, and
//     no JS value is read from wasm at all;
//   - a getter that changes its value between reads cannot make two parts of the engine see two
//     different values: there is one read;
//   - a caller's exception becomes a TaskProjectionError `unreadable_value` (the caller's own
//     exception is its `cause`), thrown before any state changed;
//   - strings that UTF-8 cannot carry (lone surrogates) are refused here with `invalid_value`, so
//     two distinct ids can never collapse into one on the way in (docs/decisions.md).
// Values of a type the engine does not expect at a position are written as an empty stand-in of
// the same kind (`[]`, `{}`, a function), so the decoder reports the same typed error without
// touching the caller's object. The message fast path of store.js reads messages into plain
// copies instead (`readArg`, `readItems`: the same reads, written out). Plain comparisons only:
// old WebViews run this file too.
import { __tape, __tapeBytes, __memory } from './task_projection.js';
import {
  TAG, PAYLOAD_LIMIT, LARGE_WORDS, LARGE_BYTES, ROOT, MAX_ARGS, SPILL_MARK,
  LEAF, OBJECT, ARRAY, KEPT, NO_KEYS, REVISION, MESSAGE, MESSAGE_EVENT, TURN, SESSION,
} from './wire-shapes.js';

// The schemas of every argument (what the wasm decoders read of it), the tape's constants and the
// store's fast-path codes, generated from their one description in Rust (src/wire/shape.rs).
export * from './wire-shapes.js';

/** A TaskProjectionError, shaped like the ones the wasm side throws. */
export function taskProjectionError(code, field, message, cause) {
  const error = new Error(message);
  error.name = 'TaskProjectionError';
  error.code = code;
  error.field = field;
  if (cause !== undefined) error.cause = cause;
  return error;
}

/** Whether this module's wasm has been seen instantiated (then it stays so). */
let initialized = false;

/**
 * Throws a TaskProjectionError `not_initialized` (field `init`) unless this module's wasm is
 * instantiated: the browser entries' `await init()` (or `initSync`) has finished. The `node`,
 * `edge-light` and fallback entries instantiate at import. Without this check, a call before
 * init fails inside wasm-bindgen's glue with a TypeError about its internals.
 */
export function assertInitialized() {
  if (initialized) return;
  try {
    __memory();
  } catch (_) {
    throw taskProjectionError(
      'not_initialized',
      'init',
      'init: the task-projection wasm is not initialized yet: `await init()` (the default export of the entry you ' +
        'imported) must finish before the first call (in a React client component, create the store once it has ' +
        'resolved, e.g. in an effect; the node and edge-light entries need no init)',
    );
  }
  initialized = true;
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

const EMPTY_ARRAY = Object.freeze([]);
const EMPTY_OBJECT = Object.freeze({});
const A_FUNCTION = Object.freeze(function standIn() {});

// The path of the value being read (keys and indices), for error messages. Reset per call.
const path = [];
let root = '';
/** The key of the leaf `field` is writing, after `path` (an assignment per leaf instead of a
 * push and a pop). */
let leafKey;

function pathText() {
  let text = root;
  for (let i = 0; i < path.length; i++) {
    const k = path[i];
    text += typeof k === 'number' ? `[${k}]` : `.${k}`;
  }
  if (leafKey !== undefined) text += `.${leafKey}`;
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

/**
 * A plain copy of `v` read by `node`: a message (MESSAGE, MESSAGE_EVENT: written out), an object
 * by its OBJECT schema (each of its keys, in the schema's order), or a leaf.
 */
function read(v, node) {
  if (node === MESSAGE || node === MESSAGE_EVENT) return readMessage(v, node === MESSAGE_EVENT);
  if (node === LEAF || node.t !== OBJECT || typeof v !== 'object' || v === null || Array.isArray(v)) return leaf(v);
  const out = {};
  for (let i = 0; i < node.keys.length; i++) {
    const k = node.keys[i];
    path.push(k);
    out[k] = read(v[k], node.nodes[i]);
    path.pop();
  }
  return out;
}

/**
 * A message (MESSAGE) or message event (MESSAGE_EVENT) read into a plain copy: the hot inputs of
 * store.js's fast path (every WebSocket message event, every REST page row). The same reads in the
 * same order as the tape's walk by the schema (tests/js/boundary.test.mjs checks that the tape of
 * the copy is the tape of the original), without its per-key bookkeeping: the key being read is
 * kept in `key` for error paths.
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

/**
 * A WebSocket frame (docs/server-api.md: `{ type, payload, offset? }`, or its JSON text) read
 * once: its `type` (a string), its `payload` (not read here: the apply call it is routed to reads
 * it) and its `offset` in the server's event stream (`null` when absent or `null`). Throws a
 * TaskProjectionError (`invalid_value` for text that is not JSON, `invalid_type`).
 */
export function readFrame(frame) {
  root = 'frame';
  path.length = 0;
  leafKey = undefined;
  let value = frame;
  let key = 'type';
  try {
    if (typeof value === 'string') {
      try {
        value = JSON.parse(value);
      } catch (error) {
        throw refuse('invalid_value', `not JSON (${quote(describe(error))})`);
      }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw refuse('invalid_type', `expected a frame { type, payload } or its JSON text, got ${typeName(value)}`);
    }
    const type = value.type;
    key = 'payload';
    const payload = value.payload;
    key = 'offset';
    const offset = value.offset;
    if (typeof type !== 'string') {
      path.push('type');
      throw refuse('invalid_type', `expected a string, got ${typeName(type)}`);
    }
    return { type, payload, offset: offset === undefined || offset === null ? null : streamOffset(offset) };
  } catch (error) {
    throw unreadableAt(error, key);
  }
}

/**
 * A frame's `offset`: a Number that is an integer from 0 to 2^53 - 1 (`-0` is 0), else a
 * TaskProjectionError `invalid_type` at `frame.offset` (as the wasm decoder refuses a hello's
 * `payload.offset`: src/wire/events.rs `offset`).
 */
function streamOffset(v) {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v === 0 ? 0 : v;
  path.push('offset');
  throw refuse('invalid_type', `expected a non-negative integer up to 2^53 - 1, got ${typeName(v)}${typeof v === 'number' ? ` (${v})` : ''}`);
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
  leafKey = undefined;
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
 * `value` read once into a plain copy by `node` (MESSAGE, MESSAGE_EVENT or LEAF: the fast path's
 * inputs; an OBJECT schema of leaves and objects: a frame's payload), for the argument named
 * `name` (the root of error paths). Throws a TaskProjectionError; nothing has been passed to
 * wasm yet when it does.
 */
export function readArg(value, node, name) {
  root = name;
  path.length = 0;
  leafKey = undefined;
  try {
    return read(value, node);
  } catch (error) {
    throw unreadable(error);
  }
}

/**
 * The elements of an array argument read once (the caller's own objects) and their plain copies
 * by `node` (MESSAGE or MESSAGE_EVENT); `undefined` when `value` is not an array (a stand-in then
 * goes onto the tape, and the decoder reports the typed error).
 */
export function readItems(value, node, name) {
  root = name;
  path.length = 0;
  leafKey = undefined;
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

// ---- the tape (src/wire/tape.rs: the format) -----------------------------------------------------

// The cell tags, the tape's sizes and the root block's place: `TAG`, `PAYLOAD_LIMIT`,
// `LARGE_WORDS`, `LARGE_BYTES`, `ROOT`, `MAX_ARGS`, `SPILL_MARK` (js/wire-shapes.js).

const F64 = new Float64Array(1);
const F64_WORDS = new Uint32Array(F64.buffer);
const BIG = typeof BigInt === 'function'
  ? { zero: BigInt(0), max: BigInt('18446744073709551615'), mask: BigInt(0xffffffff), shift: BigInt(32) }
  : undefined;
const utf8 = new TextEncoder();

/** A tape's first room: words and bytes. */
const FIRST_WORDS = 1024;
const FIRST_BYTES = 4096;

// Where a tape's words and bytes live. The direct tape (one per module: every call that is not
// made from inside another's walk) is written in place in wasm memory, in room the wasm side
// holds (`__tape(0, …)`): no copy, and nothing allocated in JS per call, so a call of 10⁶
// elements leaves no garbage of its size for the collector. A call made while that walk is under
// way (a caller's getter calling the package) writes into JS arrays, copied onto the spill tape
// (`__tape(1, …)`) right before its call.
//
// Any wasm call may grow the memory, which leaves views of the old one detached (length 0) or, in
// the fallback, pointing at a copy that is no longer the memory. The direct tape's views are
// therefore made again after every read of a caller's value (a getter may have called the
// package) and after every `__tape` (`fresh`, `reserve`).
const region = { wordsAt: 0, bytesAt: 0, words: 0, bytes: 0, memory: undefined, native: true };

function memory() {
  if (region.memory === undefined) {
    region.memory = __memory();
    region.native = typeof WebAssembly === 'object' && region.memory instanceof WebAssembly.Memory;
  }
  return region.memory;
}

/** The direct tape's views, made on the memory as it is now. */
function views(t) {
  const buffer = memory().buffer;
  t.w = new Uint32Array(buffer, region.wordsAt, region.words);
  t.b = new Uint8Array(buffer, region.bytesAt, region.bytes);
}

/** The direct tape's views made again when the memory grew since they were made (cheap: a
 * detached view's length is 0; the fallback's memory is a JS getter). */
function fresh(t) {
  if (t.direct && (region.native ? t.w.length === 0 : t.w.buffer !== region.memory.buffer)) views(t);
}

/** Room for `words` words and `bytes` bytes on `t`, what it holds kept. */
function reserve(t, words, bytes) {
  if (t.direct) {
    // Never less than the room already held (a stale view's length is 0).
    const w = Math.max(words, region.words);
    const b = Math.max(bytes, region.bytes);
    region.wordsAt = __tape(0, w, b);
    region.bytesAt = __tapeBytes(0);
    region.words = w;
    region.bytes = b;
    views(t);
    return;
  }
  if (words > t.w.length) {
    const w = new Uint32Array(words);
    w.set(t.w.subarray(0, t.wn));
    t.w = w;
  }
  if (bytes > t.b.length) {
    const b = new Uint8Array(bytes);
    b.set(t.b.subarray(0, t.bn));
    t.b = b;
  }
}

const NO_WORDS = new Uint32Array(0);
const NO_BYTES = new Uint8Array(0);

class Tape {
  constructor(direct) {
    this.direct = direct;
    this.w = direct ? NO_WORDS : new Uint32Array(256);
    this.b = direct ? NO_BYTES : new Uint8Array(1024);
    this.wn = 0;
    this.bn = 0;
    this.args = 0;
    this.kept = [];
    this.busy = false;
    this.gen = 0;
    // The cell of the last string written, by length mod 64: repeated ids and states are written
    // once per call.
    this.memoText = new Array(64);
    this.memoCell = new Uint32Array(64);
  }

  /** `value` read by `node` as the next argument, named `name` in error paths. */
  arg(value, node, name) {
    root = name;
    path.length = 0;
    leafKey = undefined;
    try {
      const cell = put(this, value, node);
      fresh(this);
      this.push(cell);
    } catch (error) {
      this.release();
      throw unreadable(error);
    }
    return this;
  }

  /**
   * An array argument read by `node` for its elements, which are returned (the caller's own
   * objects, to hand back by index; none when `value` is not an array, which the decoder then
   * reports).
   */
  items(value, node, name) {
    root = name;
    path.length = 0;
    leafKey = undefined;
    try {
      if (typeof value !== 'object' || value === null || !Array.isArray(value)) {
        this.push(leafCell(this, value));
        return EMPTY_ARRAY;
      }
      const n = checkedLength(value);
      fresh(this);
      const items = new Array(n);
      const at = words(this, n + 1);
      this.w[at] = n;
      const w0 = this.wn;
      const b0 = this.bn;
      for (let i = 0; i < n; i++) {
        if (i === SAMPLE && n > 4 * SAMPLE) project(this, n, i, w0, b0);
        path.push(i);
        const item = value[i];
        fresh(this);
        items[i] = item;
        const cell = put(this, item, node);
        path.pop();
        this.w[at + 1 + i] = cell;
      }
      this.push(cellOf(this, at, TAG.array));
      return items;
    } catch (error) {
      this.release();
      throw unreadable(error);
    }
  }

  push(cell) {
    this.w[ROOT + 1 + this.args] = cell;
    this.args += 1;
  }

  /**
   * Puts the tape where the call that follows at once reads it, and returns the kept objects
   * (the caller's own, in the order their cells index them).
   */
  send() {
    fresh(this);
    const w = this.w;
    w[0] = this.wn;
    w[1] = this.bn;
    w[ROOT] = this.args;
    if (!this.direct) spill(this);
    else if (region.words > LARGE_WORDS || region.bytes > LARGE_BYTES) {
      // wasm releases a large tape after the call (its room, which holds the words and bytes
      // written): the next one asks for room again.
      region.words = 0;
      region.bytes = 0;
    }
    const kept = this.kept;
    this.release();
    return kept;
  }

  release() {
    this.busy = false;
    this.kept = [];
  }
}

const spare = new Tape(true);

/** A tape for one call's arguments (a JS one when a caller's getter calls us re-entrantly). */
export function tape() {
  if (!initialized) assertInitialized();
  let t = spare;
  if (t.busy) t = new Tape(false);
  t.busy = true;
  t.gen += 1;
  t.wn = ROOT + 1 + MAX_ARGS;
  t.bn = 0;
  t.args = 0;
  t.memoText.fill(undefined);
  if (t.direct) {
    if (region.words === 0) reserve(t, FIRST_WORDS, FIRST_BYTES);
    else fresh(t);
  }
  return t;
}

/** The spill tape's room in wasm memory. */
const spillRoom = { words: 0, bytes: 0, wordsAt: 0, bytesAt: 0 };

/** A re-entrant call's tape `t` copied onto the spill tape, and the direct tape marked. */
function spill(t) {
  const r = spillRoom;
  const wn = t.wn;
  const bn = t.bn;
  if (wn > r.words || bn > r.bytes || r.words > LARGE_WORDS || r.bytes > LARGE_BYTES) {
    // Double up to the size wasm keeps; beyond it, exactly what this call needs.
    r.words = wn > LARGE_WORDS ? wn : Math.min(Math.max(wn, r.words * 2, FIRST_WORDS), LARGE_WORDS);
    r.bytes = bn > LARGE_BYTES ? bn : Math.min(Math.max(bn, r.bytes * 2, FIRST_BYTES), LARGE_BYTES);
    r.wordsAt = __tape(1, r.words, r.bytes);
    r.bytesAt = __tapeBytes(1);
  }
  const buffer = memory().buffer;
  new Uint32Array(buffer, r.wordsAt, wn).set(t.w.subarray(0, wn));
  if (bn > 0) new Uint8Array(buffer, r.bytesAt, bn).set(t.b.subarray(0, bn));
  new Uint32Array(buffer, region.wordsAt, 1)[0] = SPILL_MARK;
}

/** Room for `n` more words; their index. */
function words(t, n) {
  const at = t.wn;
  const end = at + n;
  if (end > t.w.length) reserve(t, Math.max(end, t.w.length * 2), t.b.length);
  t.wn = end;
  return at;
}

/** Room for `n` more bytes. */
function bytes(t, n) {
  const end = t.bn + n;
  if (end > t.b.length) reserve(t, t.w.length, Math.max(end, t.b.length * 2));
}

/** Elements after which a long array's tape is sized from what they took (one growth instead of
 * a doubling per size: each growth of a large buffer can cost the engine a garbage collection). */
const SAMPLE = 64;

/** Room for the rest of an array of `n` elements, `done` of which took the words and bytes since
 * `w0` and `b0`, with a tenth to spare. */
function project(t, n, done, w0, b0) {
  const scale = (n - done) / done * 1.1;
  const w = t.wn + Math.ceil((t.wn - w0) * scale);
  const b = t.bn + Math.ceil((t.bn - b0) * scale);
  if (w > t.w.length || b > t.b.length) reserve(t, Math.max(w, t.w.length), Math.max(b, t.b.length));
}

function cellOf(t, at, tag) {
  if (at >= PAYLOAD_LIMIT) throw refuse('invalid_value', 'too large to pass in one call');
  return at * 16 + tag;
}

function put(t, v, node) {
  if (node === LEAF) return leafCell(t, v);
  if (node.t === ARRAY) {
    if (typeof v !== 'object' || v === null || !Array.isArray(v)) return leafCell(t, v);
    const n = checkedLength(v);
    fresh(t);
    const at = words(t, n + 1);
    t.w[at] = n;
    const of = node.of;
    const w0 = t.wn;
    const b0 = t.bn;
    for (let i = 0; i < n; i++) {
      if (i === SAMPLE && n > 4 * SAMPLE) project(t, n, i, w0, b0);
      path.push(i);
      const item = v[i];
      fresh(t);
      const cell = put(t, item, of);
      path.pop();
      // `t.w` is read after the element: writing it may have grown the words.
      t.w[at + 1 + i] = cell;
    }
    return cellOf(t, at, TAG.array);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return leafCell(t, v);
  return node.write !== undefined ? node.write(t, v) : object(t, v, node);
}

function object(t, v, node) {
  const keys = node.keys;
  const nodes = node.nodes;
  const n = keys.length;
  const isKept = node.t === KEPT;
  const shape = shapeOf(t, node);
  const first = isKept ? 2 : 1;
  const at = words(t, n + first);
  t.w[at] = shape;
  if (isKept) {
    t.w[at + 1] = t.kept.length;
    t.kept.push(v);
  }
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    path.push(k);
    const value = v[k];
    fresh(t);
    const cell = put(t, value, nodes[i]);
    path.pop();
    t.w[at + first + i] = cell;
  }
  return cellOf(t, at, isKept ? TAG.kept : TAG.object);
}

/** The shape block of `node`'s keys, written once per call. */
function shapeOf(t, node) {
  if (node.shapeTape === t && node.shapeGen === t.gen) return node.shapeAt;
  const keys = node.keys;
  const at = words(t, 1 + 2 * keys.length);
  t.w[at] = keys.length;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    bytes(t, k.length);
    t.w[at + 1 + 2 * i] = t.bn;
    t.w[at + 2 + 2 * i] = k.length;
    for (let j = 0; j < k.length; j++) t.b[t.bn + j] = k.charCodeAt(j); // schema keys are ASCII
    t.bn += k.length;
  }
  node.shapeTape = t;
  node.shapeGen = t.gen;
  node.shapeAt = at;
  return at;
}

// `object(t, v, node)` written out for the large inputs (message, turn and session lists: a
// stateless call reads the whole transcript, and 10⁶ elements at the scale the benchmark
// checks): the same reads in the same order and the same tape as the walk
// by the schema (tests/js/boundary.test.mjs compares them), with named property reads instead of
// the walk's keyed ones. All fields are read first (the key being read kept for error paths), then
// written in the walk's order.

/** A leaf field `key` of the object being written (the key completes an error's path). */
function field(t, v, key) {
  leafKey = key;
  const cell = leafCell(t, v);
  leafKey = undefined;
  return cell;
}

/** An object of three leaf fields by `node` (a turn's metadata) at field `key`, or its stand-in. */
function three(t, node, key, isObject, m, a, b, c) {
  if (!isObject) return field(t, m, key);
  path.push(key);
  const keys = node.keys;
  const shape = shapeOf(t, node);
  const at = words(t, 4);
  t.w[at] = shape;
  let cell = field(t, a, keys[0]);
  t.w[at + 1] = cell;
  cell = field(t, b, keys[1]);
  t.w[at + 2] = cell;
  cell = field(t, c, keys[2]);
  t.w[at + 3] = cell;
  path.pop();
  return cellOf(t, at, TAG.object);
}

const isPlainObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

function writeTurn(t, v) {
  let key = 'id';
  let id, started, created, updated, completed, m, lifecycle, pending, attempted;
  let meta = false;
  try {
    id = v.id;
    key = 'started_at'; started = v.started_at;
    key = 'created_at'; created = v.created_at;
    key = 'updated_at'; updated = v.updated_at;
    key = 'completed_at'; completed = v.completed_at;
    key = 'metadata'; m = v.metadata;
    meta = isPlainObject(m);
    if (meta) {
      key = 'metadata.lifecycle_only'; lifecycle = m.lifecycle_only;
      key = 'metadata.prompt_dispatch_pending'; pending = m.prompt_dispatch_pending;
      key = 'metadata.prompt_dispatch_attempted'; attempted = m.prompt_dispatch_attempted;
    }
  } catch (error) {
    throw unreadableAt(error, key);
  }
  fresh(t);
  const shape = shapeOf(t, TURN);
  const at = words(t, 7);
  t.w[at] = shape;
  // Each cell is written after it is made: making it may grow the words (a new `t.w`).
  let cell = field(t, id, 'id');
  t.w[at + 1] = cell;
  cell = field(t, started, 'started_at');
  t.w[at + 2] = cell;
  cell = field(t, created, 'created_at');
  t.w[at + 3] = cell;
  cell = field(t, updated, 'updated_at');
  t.w[at + 4] = cell;
  cell = field(t, completed, 'completed_at');
  t.w[at + 5] = cell;
  cell = three(t, TURN.of.metadata, 'metadata', meta, m, lifecycle, pending, attempted);
  t.w[at + 6] = cell;
  return cellOf(t, at, TAG.object);
}

/** A message (MESSAGE) or a message event (MESSAGE_EVENT: `event`) by the schema, written out. */
function writeMessage(t, v, event) {
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
    meta = isPlainObject(m);
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
      rev = isPlainObject(r);
      if (rev) {
        key = 'pending_action_revision.epoch'; epoch = r.epoch;
        key = 'pending_action_revision.sequence'; sequence = r.sequence;
      }
    }
  } catch (error) {
    throw unreadableAt(error, key);
  }
  fresh(t);
  const shape = shapeOf(t, event ? MESSAGE_EVENT : MESSAGE);
  const at = words(t, event ? 12 : 8);
  t.w[at] = shape;
  let cell = field(t, id, 'id');
  t.w[at + 1] = cell;
  cell = field(t, messageId, 'message_id');
  t.w[at + 2] = cell;
  cell = field(t, type, 'type');
  t.w[at + 3] = cell;
  cell = field(t, turnId, 'turn_id');
  t.w[at + 4] = cell;
  cell = field(t, created, 'created_at');
  t.w[at + 5] = cell;
  cell = field(t, updated, 'updated_at');
  t.w[at + 6] = cell;
  cell = three(t, MESSAGE.of.metadata, 'metadata', meta, m, status, pendingId, total);
  t.w[at + 7] = cell;
  if (event) {
    cell = field(t, sessionId, 'session_id');
    t.w[at + 8] = cell;
    cell = field(t, taskId, 'task_id');
    t.w[at + 9] = cell;
    cell = field(t, action, 'pending_action');
    t.w[at + 10] = cell;
    cell = rev ? revision(t, epoch, sequence) : field(t, r, 'pending_action_revision');
    t.w[at + 11] = cell;
  }
  return cellOf(t, at, TAG.object);
}

/** A `pending_action_revision` object of two leaf fields, at the field of that name. */
function revision(t, epoch, sequence) {
  path.push('pending_action_revision');
  const shape = shapeOf(t, REVISION);
  const at = words(t, 3);
  t.w[at] = shape;
  let cell = field(t, epoch, 'epoch');
  t.w[at + 1] = cell;
  cell = field(t, sequence, 'sequence');
  t.w[at + 2] = cell;
  path.pop();
  return cellOf(t, at, TAG.object);
}

function writeSession(t, v) {
  let key = 'id';
  let id, task, state, primary, action, r, updated, epoch, sequence;
  let rev = false;
  try {
    id = v.id;
    key = 'task_id'; task = v.task_id;
    key = 'state'; state = v.state;
    key = 'is_primary'; primary = v.is_primary;
    key = 'pending_action'; action = v.pending_action;
    key = 'pending_action_revision'; r = v.pending_action_revision;
    rev = isPlainObject(r);
    if (rev) {
      key = 'pending_action_revision.epoch'; epoch = r.epoch;
      key = 'pending_action_revision.sequence'; sequence = r.sequence;
    }
    key = 'updated_at'; updated = v.updated_at;
  } catch (error) {
    throw unreadableAt(error, key);
  }
  fresh(t);
  const shape = shapeOf(t, SESSION);
  const at = words(t, 8);
  t.w[at] = shape;
  let cell = field(t, id, 'id');
  t.w[at + 1] = cell;
  cell = field(t, task, 'task_id');
  t.w[at + 2] = cell;
  cell = field(t, state, 'state');
  t.w[at + 3] = cell;
  cell = field(t, primary, 'is_primary');
  t.w[at + 4] = cell;
  cell = field(t, action, 'pending_action');
  t.w[at + 5] = cell;
  cell = rev ? revision(t, epoch, sequence) : field(t, r, 'pending_action_revision');
  t.w[at + 6] = cell;
  cell = field(t, updated, 'updated_at');
  t.w[at + 7] = cell;
  return cellOf(t, at, TAG.object);
}

function leafCell(t, v) {
  switch (typeof v) {
    case 'string':
      return textCell(t, v);
    case 'number':
      // An integer in the payload (not -0); any other Number by its bits.
      if (v >= 0 && v < PAYLOAD_LIMIT && v === Math.floor(v) && (v !== 0 || 1 / v > 0)) return v * 16 + TAG.int;
      return pair(t, TAG.number, v);
    case 'boolean':
      return v ? TAG.true : TAG.false;
    case 'undefined':
      return TAG.undefined;
    case 'bigint':
      if (v >= BIG.zero && v <= BIG.max) {
        const at = words(t, 2);
        t.w[at] = Number(v & BIG.mask);
        t.w[at + 1] = Number(v >> BIG.shift);
        return cellOf(t, at, TAG.big);
      }
      return TAG.other;
    case 'object': {
      if (v === null) return TAG.null;
      // A stand-in of the same kind: the caller's object is not read.
      if (Array.isArray(v)) {
        const at = words(t, 1);
        t.w[at] = 0;
        return cellOf(t, at, TAG.array);
      }
      const at = words(t, 1);
      t.w[at] = shapeOf(t, NO_KEYS);
      return cellOf(t, at, TAG.object);
    }
    default:
      return TAG.other; // a function, a symbol
  }
}

function pair(t, tag, n) {
  F64[0] = n;
  const at = words(t, 2);
  t.w[at] = F64_WORDS[0];
  t.w[at + 1] = F64_WORDS[1];
  return cellOf(t, at, tag);
}

/**
 * `text` as UTF-8 into `bytes` from `start`, which has room for 3 bytes per UTF-16 unit; its
 * length in bytes. ASCII is copied here, the rest by TextEncoder (store.js's fast path too).
 */
export function utf8Into(bytes, start, text) {
  const n = text.length;
  let i = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) break;
    bytes[start + i] = c;
  }
  if (i === n) return n;
  return i + utf8.encodeInto(i === 0 ? text : text.slice(i), bytes.subarray(start + i)).written;
}

/** A string's cell: its UTF-8 in the bytes. */
function textCell(t, v) {
  const slot = v.length & 63;
  if (t.memoText[slot] === v) return t.memoCell[slot];
  bytes(t, 3 * v.length);
  const start = t.bn;
  const length = utf8Into(t.b, start, v);
  // Only text beyond ASCII is longer in UTF-8, and only it can hold a lone surrogate.
  if (length !== v.length && !wellFormed(v)) throw refuse('invalid_value', 'not well-formed UTF-16 (a lone surrogate), which cannot be kept exactly');
  t.bn = start + length;
  const at = words(t, 2);
  t.w[at] = start;
  t.w[at + 1] = length;
  const cell = cellOf(t, at, TAG.string);
  t.memoText[slot] = v;
  t.memoCell[slot] = cell;
  return cell;
}

// ---- the schemas (js/wire-shapes.js, generated from src/wire/shape.rs) written out -----------

TURN.write = writeTurn;
SESSION.write = writeSession;
MESSAGE.write = (t, v) => writeMessage(t, v, false);
MESSAGE_EVENT.write = (t, v) => writeMessage(t, v, true);

/**
 * Test hooks (tests import this file by path; no package entry re-exports it): `tapeOf(value,
 * node, name)` is the tape one argument makes, as `{ words, bytes }` copies, without sending it.
 */
export const __testing = Object.freeze({
  tapeOf(value, node, name) {
    const t = tape().arg(value, node, name);
    const out = { words: Array.from(t.w.subarray(0, t.wn)), bytes: Array.from(t.b.subarray(0, t.bn)) };
    t.release();
    return out;
  },
});
