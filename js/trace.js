// `task-projection/trace`: the flight recorder of `store.startRecording()` (docs/trace-format.md)
// and `replayTrace`. Importing this module installs the recorder for every store of the page (the
// slot `RECORDER` that each copy of store.js reads); an app that never imports it carries none of
// it (`startRecording()` then throws `recording_unavailable`). In JS so that the wasm carries
// none of it either: store.js hands it each input the store accepted (its arguments as the tape
// holds them, or the fast path's copies: what the store received, read once), and it writes the
// step line with the answers that input changed, asked through the store's public queries over
// the ids the wasm holds (`__held`, its one export for this). It imports nothing of a store's
// module (what it needs of read.js comes with each recording), so it serves the stores of every
// entry. src/trace.rs is the same format natively; tests/js/trace.test.mjs requires both to write
// the same lines on every store scenario.
export { replayTrace } from './replay.js';

/** store.js's `RECORDER`. */
const RECORDER = Symbol.for('task-projection.recorder.1');

const MIN = 1024;
const MAX = 1 << 28;
/** Room kept in `maxBytes` for the header line. */
const HEADER_ROOM = 256;
/** Calls without a reason of their own (no `reason` key). */
const NO_REASON = new Set(['beginTaskFetch', 'beginSelection', 'setActiveTask', 'respondStart', 'respondReply']);

/** A plain value's JS type for a message (read.js `typeName`, but for copies: no Proxy). */
const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** `startRecording`'s `{ maxBytes? }` (`copy`: read once by store.js, or undefined) → the bound in
 * bytes (src/trace.rs `options`); `taskProjectionError` is the store's read.js's. */
function recordingBytes(copy, taskProjectionError) {
  if (copy === undefined) return 1 << 20;
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw taskProjectionError('invalid_type', 'options', `options: expected an object, got ${typeName(copy)}`);
  }
  const n = copy.maxBytes;
  if (n === undefined) return 1 << 20;
  if (typeof n !== 'number') {
    throw taskProjectionError('invalid_type', 'options.maxBytes', `options.maxBytes: expected an integer number of bytes, got ${typeName(n)}`);
  }
  if (!(Number.isInteger(n) && n >= MIN && n <= MAX)) {
    throw taskProjectionError('invalid_value', 'options.maxBytes', `options.maxBytes: expected an integer from ${MIN} to ${MAX}`);
  }
  return n;
}

// ---- the tape as plain values ---------------------------------------------------------------

const now = typeof performance === 'object' && performance !== null && typeof performance.now === 'function'
  ? () => performance.now()
  : () => Date.now();

const F64 = new Float64Array(1);
const F64_WORDS = new Uint32Array(F64.buffer);
const utf8 = new TextDecoder();

function cellValue(t, cell, TAG) {
  const tag = cell & 15;
  const at = cell >>> 4;
  const w = t.w;
  switch (tag) {
    case TAG.null: return null;
    case TAG.false: return false;
    case TAG.true: return true;
    case TAG.int: return at;
    case TAG.number:
      F64_WORDS[0] = w[at];
      F64_WORDS[1] = w[at + 1];
      return F64[0];
    case TAG.big: return BigInt(w[at]) + (BigInt(w[at + 1]) << BigInt(32));
    case TAG.string: return utf8.decode(t.b.subarray(w[at], w[at] + w[at + 1]));
    case TAG.array: {
      const out = [];
      for (let i = 0; i < w[at]; i++) out.push(cellValue(t, w[at + 1 + i], TAG));
      return out;
    }
    case TAG.object:
    case TAG.kept: {
      const shape = w[at];
      const first = tag === TAG.kept ? 2 : 1;
      const out = {};
      for (let i = 0; i < w[shape]; i++) {
        const key = utf8.decode(t.b.subarray(w[shape + 1 + 2 * i], w[shape + 1 + 2 * i] + w[shape + 2 + 2 * i]));
        out[key] = cellValue(t, w[at + first + i], TAG);
      }
      return out;
    }
    default: return undefined; // undefined, a function or a symbol
  }
}

/** The arguments on tape `t` (written, not yet sent): what the store is about to receive. */
function tapeArgs(t, TAG) {
  const out = [];
  // The root block: words 2 (the count) and 3… (the cells), read.js `ROOT`.
  for (let i = 0; i < t.args; i++) out.push(cellValue(t, t.w[3 + i], TAG));
  return out;
}

// ---- JSON as src/trace.rs writes it ---------------------------------------------------------

/** A number: integers exactly below 2^64, else up to 17 fractional digits; `null` beyond. */
function number(n) {
  const a = Math.abs(n);
  if (!Number.isFinite(n) || a >= 18446744073709551616) return 'null';
  const int = Math.trunc(a);
  let out = (n < 0 ? '-' : '') + BigInt(int).toString();
  let frac = a - int;
  if (frac === 0) return out;
  out += '.';
  for (let i = 0; i < 17 && frac !== 0; i++) {
    frac *= 10;
    const digit = Math.trunc(frac);
    frac -= digit;
    out += digit;
  }
  return out;
}

/** A plain value (a tape's or a copy's) as JSON: `error` keys as `true`, absent keys left out. */
function json(v) {
  switch (typeof v) {
    case 'string': return JSON.stringify(v);
    case 'number': return number(v);
    case 'boolean': return String(v);
    case 'bigint': return v.toString();
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) return `[${v.map(json).join(',')}]`;
      let out = '';
      for (const k of Object.keys(v)) {
        if (v[k] === undefined) continue;
        out += `${out === '' ? '' : ','}${JSON.stringify(k)}:${k === 'error' ? 'true' : json(v[k])}`;
      }
      return `{${out}}`;
    }
    default: return 'null';
  }
}

/** Code point order (Rust sorts the ids' UTF-8 bytes): UTF-16 order but for surrogates. */
function byCodePoint(a, b) {
  for (let i = 0; i < a.length && i < b.length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

function utf8Length(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c < 0x800 || (c >= 0xd800 && c < 0xe000) ? 1 : 2;
  }
  return n;
}

const field = (key, value) => `,${JSON.stringify(key)}:${value}`;
/** `"key":value,` for a known answer, nothing for an unknown one (`undefined`). */
const known = (key, answer, value) => (answer === undefined ? '' : `${JSON.stringify(key)}:${value},`);
const text = (s) => (s === null || s === undefined ? 'null' : JSON.stringify(s));

/** A session's answers as the trace writes them (src/trace.rs `session_answers`). */
function sessionAnswers(store, id) {
  // An answer not known yet (`undefined`) leaves its key out.
  const action = store.sessionPendingAction(id);
  let out = `${known('pendingAction', action, text(action))}"pendingActionWhy":${text(store.lastReason())}`;
  const turn = store.currentTurnId(id);
  if (turn !== undefined) out += field('currentTurn', text(turn));
  out += field('currentTurnWhy', text(store.lastReason()));
  const c = store.pendingClarification(id);
  if (c !== undefined) out += field('clarification', c === null ? 'null' : `{"pending_id":${text(c.pending_id)},"message_ids":[${c.message_ids.map(text).join(',')}]}`);
  out += field('clarificationWhy', text(store.lastReason()));
  const blocked = store.hasPendingPermission(id);
  if (blocked !== undefined) out += field('permission', String(blocked));
  return `{${out}${field('permissionWhy', text(store.lastReason()))}}`;
}

/** A task's answers (src/trace.rs `task_answers`): the summary's revision from `explainOwner`,
 * so the caller's summary object is not read again. */
function taskAnswers(store, id) {
  const action = store.taskPendingAction(id);
  let out = `${known('pendingAction', action, text(action))}"pendingActionWhy":${text(store.lastReason())}`;
  const owner = store.pendingOwner(id);
  if (owner !== undefined) out += field('pendingOwner', text(owner || null));
  out += field('pendingOwnerWhy', text(store.lastReason()));
  const summary = store.taskStatusSummary(id);
  const why = store.lastReason();
  if (summary !== undefined) out += field('summary', summary !== null ? `{"revision":${json(store.explainOwner(id).summary_revision)}}` : 'null');
  return `{${out}${field('summaryWhy', text(why))}}`;
}

/** The ids of `ids` and `last` whose answers changed, as `"id":answers` entries; `last` updated. */
function changed(store, ids, last, answers) {
  const all = Array.from(new Set(ids.concat(Array.from(last.keys())))).sort(byCodePoint);
  const out = [];
  for (const id of all) {
    const now = answers(store, id);
    if (last.get(id) !== now) {
      last.set(id, now);
      out.push(`${JSON.stringify(id)}:${now}`);
    }
  }
  return out;
}

/** One recording of one store (src/trace.rs `Recorder`). */
class Recorder {
  constructor(store, wasm, maxBytes, TAG) {
    this.store = store;
    this.wasm = wasm;
    this.TAG = TAG;
    this.max = maxBytes;
    this.lines = [];
    this.sizes = [];
    this.first = 0;
    this.bytes = 0;
    this.dropped = 0;
    this.droppedBytes = 0;
    this.steps = 0;
    this.us = 0;
    this.version = -1;
    this.sessions = new Map();
    this.tasks = new Map();
    // The arguments of the input being applied (store.js sets them before it crosses).
    this.args = undefined;
    const held = this.answers();
    this.engine = held.engine;
    this.fresh = held.sessions.length === 0 && held.tasks.length === 0;
  }

  /** The input about to cross is the arguments on tape `t`. */
  tape(t) {
    this.args = tapeArgs(t, this.TAG);
  }

  /** What the wasm holds (`__held()`) with `changed`: the entries of the sessions and tasks
   * whose answers changed; `undefined` when the store's version did not move (no answer did). */
  answers() {
    const version = this.store.version();
    if (version === this.version) return undefined;
    const wasm = this.wasm;
    const held = wasm.__held(false);
    this.version = version;
    try {
      held.changed = [changed(this.store, held.sessions, this.sessions, sessionAnswers), changed(this.store, held.tasks, this.tasks, taskAnswers)];
    } finally {
      // The queries overwrote `lastReason()`: the input's is put back.
      wasm.__held(true);
    }
    return held;
  }

  /** The input `call` was accepted with `this.args` (and `result`): its line. */
  step(call, result) {
    const args = call === 'applyFrame' ? [{ type: 'server.hello', payload: this.args[0] }] : this.args;
    this.args = undefined;
    this.steps += 1;
    const us = Math.trunc(now() * 1000);
    if (us > this.us) this.us = us;
    let line = `{"step":${this.steps},"us":${this.us},"call":"${call}","args":${json(args)}`;
    if (call === 'beginTaskFetch') line += field('token', number(result));
    if (call === 'beginSelection') line += `${field('ticket', text(result.ticket))}${field('reload', result.reload)}`;
    if (call === 'settleSelection') {
      line += `,"navigation":{"kind":${text(result.kind)}${result.kind === 'session' ? field('sessionId', text(result.sessionId)) : ''}}`;
    }
    if (!NO_REASON.has(call)) line += field('reason', text(this.wasm.lastReason()));
    const [sessions, tasks] = (this.answers() || { changed: [[], []] }).changed;
    line += ',"answers":{';
    if (sessions.length > 0) line += `"sessions":{${sessions.join(',')}}`;
    if (tasks.length > 0) line += `${sessions.length > 0 ? ',' : ''}"tasks":{${tasks.join(',')}}`;
    this.push(`${line}}}`);
  }

  /** Keeps `line`, dropping the oldest beyond the bound (UTF-8 bytes, a newline each). */
  push(line) {
    const size = utf8Length(line) + 1;
    this.lines.push(line);
    this.sizes.push(size);
    this.bytes += size;
    while (this.bytes > this.max - HEADER_ROOM && this.first < this.lines.length) {
      const old = this.sizes[this.first];
      this.lines[this.first] = undefined;
      this.first += 1;
      this.bytes -= old;
      this.dropped += 1;
      this.droppedBytes += old;
    }
    if (this.first > 1024 && this.first * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.first);
      this.sizes = this.sizes.slice(this.first);
      this.first = 0;
    }
  }

  /** The trace: the header, then the lines kept, each ending in a newline. */
  text() {
    const header = `{"format":"task-projection-trace","version":1,"engine":${text(this.engine)},"maxBytes":${this.max},`
      + `"fresh":${this.fresh},"steps":${this.steps},"dropped":${this.dropped},"droppedBytes":${this.droppedBytes}}`;
    return [header].concat(this.lines.slice(this.first), ['']).join('\n');
  }
}

/**
 * What `startRecording` calls (store.js): a recording of `store` (its wasm object `wasm`) bounded by
 * the options `copy`; throws a TaskProjectionError (`taskProjectionError`, and the tape's tags
 * `TAG`: the store's read.js's) for bad options, then `invalid_value` (`this`) when the store is
 * `recording` already.
 */
function start(store, wasm, copy, recording, TAG, taskProjectionError) {
  const maxBytes = recordingBytes(copy, taskProjectionError);
  if (recording) throw taskProjectionError('invalid_value', 'this', 'this: already recording (stopRecording() first)');
  return new Recorder(store, wasm, maxBytes, TAG);
}

// The one side effect of importing this module.
if (typeof globalThis === 'object' && globalThis !== null) globalThis[RECORDER] = start;
