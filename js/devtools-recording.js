// The devtools panel's recording (js/devtools-dom.js): `store.startRecording()` (which needs
// `import 'task-projection/trace'`), the trace so far at any time, and the inspector's channel.
// The repository's inspector (www/src/inspect.ts) attaches over that channel (www/src/channel.ts).
//
// The store gives a recording's text only at `stopRecording()`. To hand out the trace so far, the
// recording is stopped and started again at once (no input can come between: one synchronous
// turn), and the segments are joined: a recording's first answers are those that changed since it
// started, so the joined step lines, numbered on, are the lines one recording would have written;
// the header is the first segment's (`fresh`), the counts summed (docs/trace-format.md). No answer
// is computed here: every line is the recorder's.

/** The BroadcastChannel of the repository's inspector (www/src/channel.ts): it posts
 * `{ type: "attach" }`; a recording page answers `{ type: "trace", source, text }`. */
export const CHANNEL = 'task-projection-trace';

/** store.js's recorder slot (js/trace.js fills it). */
const RECORDER = typeof Symbol === 'function' && Symbol.for ? Symbol.for('task-projection.recorder.1') : undefined;

/** Whether `import 'task-projection/trace'` has run in this page (the recorder is installed). */
export const recorderInstalled = () => RECORDER !== undefined && typeof globalThis === 'object' && typeof globalThis[RECORDER] === 'function';

export const MAX_BYTES = 8 << 20;
/** Room kept for the header line (as js/trace.js keeps). */
const HEADER_ROOM = 256;

function header(line) {
  const v = JSON.parse(line);
  const o = v !== null && typeof v === 'object' ? v : {};
  const num = (k) => (typeof o[k] === 'number' ? o[k] : 0);
  return { engine: o.engine, fresh: o.fresh === true, steps: num('steps'), dropped: num('dropped'), droppedBytes: num('droppedBytes') };
}

const utf8 = new TextEncoder();

/** One recording of a store, possibly in several joined segments. Its constructor starts it
 * (and throws the store's error: `recording_unavailable`, `development_only`, already recording). */
export class Recording {
  constructor(store, maxBytes = MAX_BYTES) {
    this.store = store;
    this.maxBytes = maxBytes;
    this.first = null;
    this.lines = [];
    this.bytes = 0;
    this.steps = 0;
    this.dropped = 0;
    this.droppedBytes = 0;
    store.startRecording({ maxBytes });
    this.on = true;
  }

  /** Takes the current segment's lines (and starts the next one when `restart`). */
  take(restart) {
    if (!this.on) return;
    const text = this.store.stopRecording();
    if (restart) this.store.startRecording({ maxBytes: this.maxBytes });
    else this.on = false;
    if (text === null) return;
    const [head = '', ...rest] = text.split('\n');
    const h = header(head);
    if (this.first === null) this.first = h;
    const base = this.steps;
    this.steps += h.steps;
    this.dropped += h.dropped;
    this.droppedBytes += h.droppedBytes;
    for (const line of rest) {
      if (line === '') continue;
      // `{"step":n,…`: numbered on from the segments before.
      const joined = line.replace(/^\{"step":"?(\d+)"?/, (_, n) => `{"step":${base + Number(n)}`);
      const size = utf8.encode(joined).length + 1;
      this.lines.push(joined);
      this.bytes += size;
      while (this.bytes > this.maxBytes - HEADER_ROOM && this.lines.length) {
        const old = utf8.encode(this.lines.shift() ?? '').length + 1;
        this.bytes -= old;
        this.dropped += 1;
        this.droppedBytes += old;
      }
    }
  }

  /** The trace so far (docs/trace-format.md); the recording goes on while it is on. */
  text() {
    this.take(true);
    return this.render();
  }

  /** Ends the recording: the whole trace. */
  stop() {
    this.take(false);
    return this.render();
  }

  render() {
    const f = this.first;
    const head = `{"format":"task-projection-trace","version":1,"engine":${JSON.stringify(f?.engine ?? null)},"maxBytes":${this.maxBytes},`
      + `"fresh":${f?.fresh === true},"steps":${this.steps},"dropped":${this.dropped},"droppedBytes":${this.droppedBytes}}`;
    return [head, ...this.lines, ''].join('\n');
  }
}

/** A file name for a trace saved now. */
export const traceFileName = () => `task-projection-${new Date().toISOString().replace(/[:.]/g, '-')}.ndjson`;

/** Downloads `text` as `name` from `doc` (a Blob link, clicked, then let go). */
export function download(doc, text, name) {
  const view = doc.defaultView ?? globalThis;
  const url = view.URL.createObjectURL(new view.Blob([text], { type: 'application/x-ndjson' }));
  const a = doc.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  doc.body.append(a);
  a.click();
  a.remove();
  view.setTimeout(() => view.URL.revokeObjectURL(url), 10_000);
}
