// The demo's recording (`/?record`): its own bundle (dist/record.js), imported by main.ts only when
// the page is opened with `?record`, so the normal demo loads neither it nor the package's recorder
// (`task-projection/trace`, /pkg/trace.js). It starts `store.startRecording()` before the page's
// first input (the trace is then `fresh`: docs/trace-format.md), adds "Save trace" and "Inspect" to
// the header, and answers the inspector (/inspect/) on a BroadcastChannel: the trace so far, again
// after each change while an inspector listens.
//
// The package gives a recording's text only at `stopRecording()`. To hand out the trace so far, the
// recording is stopped and started again at once (no input can come between: one synchronous
// turn), and the segments are joined: a recording's first answers are those that changed since it
// started (its answers start from the store's at start), so the joined step lines, numbered on, are
// the lines one recording would have written; the header is the first segment's (`fresh`), the
// counts summed. No answer is computed here: every line is the recorder's.
import 'task-projection/trace';
import type { ProjectionStore } from 'task-projection';
import { CHANNEL, type TraceMessage } from './channel';
import { h } from './dom';

const MAX_BYTES = 8 << 20;
/** Room kept for the header line (as js/trace.js keeps). */
const HEADER_ROOM = 256;

interface Header { engine: unknown; fresh: boolean; steps: number; dropped: number; droppedBytes: number }

function header(line: string): Header {
  const v: unknown = JSON.parse(line);
  if (typeof v !== 'object' || v === null) throw new Error('not a trace header');
  const o = v as Record<string, unknown>;
  const num = (k: string) => (typeof o[k] === 'number' ? (o[k] as number) : 0);
  return { engine: o['engine'], fresh: o['fresh'] === true, steps: num('steps'), dropped: num('dropped'), droppedBytes: num('droppedBytes') };
}

const utf8 = new TextEncoder();

/** One recording of the demo's store, possibly in several joined segments. */
export class Recording {
  private first: Header | null = null;
  private readonly lines: string[] = [];
  private bytes = 0;
  private steps = 0;
  private dropped = 0;
  private droppedBytes = 0;
  private on = true;

  constructor(private readonly store: ProjectionStore, private readonly maxBytes = MAX_BYTES) {
    store.startRecording({ maxBytes });
  }

  /** Takes the current segment's lines and starts the next segment. */
  private take(restart: boolean): void {
    if (!this.on) return;
    const text = this.store.stopRecording();
    if (restart) this.store.startRecording({ maxBytes: this.maxBytes });
    else this.on = false;
    if (text === null) return;
    const [head = '', ...rest] = text.split('\n');
    const h = header(head);
    this.first ??= h;
    const base = this.steps;
    this.steps += h.steps;
    this.dropped += h.dropped;
    this.droppedBytes += h.droppedBytes;
    for (const line of rest) {
      if (line === '') continue;
      // `{"step":n,…`: numbered on from the segments before.
      const joined = line.replace(/^\{"step":"?(\d+)"?/, (_, n: string) => `{"step":${base + Number(n)}`);
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

  /** The trace so far (docs/trace-format.md); the recording goes on. */
  text(): string {
    this.take(true);
    return this.render();
  }

  /** Ends the recording: the whole trace. */
  stop(): string {
    this.take(false);
    return this.render();
  }

  private render(): string {
    const f = this.first;
    const head = `{"format":"task-projection-trace","version":1,"engine":${JSON.stringify(f?.engine ?? null)},"maxBytes":${this.maxBytes},`
      + `"fresh":${f?.fresh === true},"steps":${this.steps},"dropped":${this.dropped},"droppedBytes":${this.droppedBytes}}`;
    return [head, ...this.lines, ''].join('\n');
  }
}

/** Starts recording `store` (before its first input), adds the header's controls and answers the
 * inspector. */
export function record(store: ProjectionStore): Recording {
  const recording = new Recording(store);
  const source = `demo-${Math.random().toString(36).slice(2, 8)}`;
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null;
  let attached = false;
  let queued: ReturnType<typeof setTimeout> | undefined;
  const send = () => {
    queued = undefined;
    channel?.postMessage({ type: 'trace', source, text: recording.text() } satisfies TraceMessage);
  };
  if (channel) {
    channel.onmessage = (ev: MessageEvent<TraceMessage>) => {
      if (ev.data?.type !== 'attach') return;
      attached = true;
      send();
    };
    store.subscribe(() => {
      if (attached && queued === undefined) queued = setTimeout(send, 200);
    });
  }

  const save = h('button', {
    type: 'button', class: 'toggle', 'data-testid': 'save-trace', title: 'Download the trace recorded so far (no message text)',
    onclick: () => {
      const url = URL.createObjectURL(new Blob([recording.text()], { type: 'application/x-ndjson' }));
      const a = h('a', { href: url, download: `task-projection-${new Date().toISOString().replace(/[:.]/g, '-')}.ndjson` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  }, 'Save trace');
  const inspect = h('a', {
    class: 'toggle inspect-link', href: '/inspect/#live', target: '_blank', 'data-testid': 'inspect-link',
    title: 'Open the inspector on this page’s store (a new tab)',
  }, 'Inspect');
  const badge = h('span', { class: 'recording', 'data-testid': 'recording', title: 'The store’s inputs are recorded (docs/trace-format.md)' }, 'Recording');
  document.head.append(h('link', { rel: 'stylesheet', href: './record.css' }));
  document.getElementById('details-toggle')?.before(badge, save, inspect);
  return recording;
}
