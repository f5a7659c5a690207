// Loaded with `node --import` before each Node block of the consumer README
// (tests/js/readme.test.mjs): the server the examples talk to, and the record of what they print.
//   - `fetch` answers the reference server's REST routes and its POST respond (the answer taken)
//     from ./readme-backend.mjs;
//   - `WebSocket` (Node 20 has none) opens at once and sends ./readme-backend.mjs's FRAMES, one
//     every FRAME_GAP_MS, until it is closed;
//   - every console.log call's arguments are recorded and written, v8-serialized, to the file
//     named by README_RECORD when the process exits (the test compares them with the block's
//     `// → value` comments);
//   - with README_DOM set (a block that imports task-projection/devtools), a browser's `window`
//     and `document` (happy-dom), closed when the block is done.
import fs from 'node:fs';
import util from 'node:util';
import v8 from 'node:v8';
import { FRAMES, FRAME_GAP_MS, respondPendingId, respondReply, restBody } from './readme-backend.mjs';

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

globalThis.fetch = async (input, init) => {
  const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
  const pendingId = respondPendingId(url);
  if (pendingId !== undefined && init?.method === 'POST') {
    let sent;
    try {
      sent = JSON.parse(String(init.body));
    } catch {
      return json({ error: { code: 'bad_request', message: 'the body is not JSON' } }, 400);
    }
    const reply = respondReply(pendingId, sent);
    return json(reply.body, reply.status);
  }
  const body = restBody(url);
  return body === undefined ? json({ error: { code: 'not_found', message: url } }, 404) : json(body);
};

globalThis.WebSocket = class FakeWebSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;

  constructor(url) {
    this.url = String(url);
    this.readyState = 0;
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    this.timers = [];
    if (!new URL(this.url).pathname.endsWith('/api/v1/ws')) {
      this.later(0, () => this.finish(1006));
      return;
    }
    this.later(0, () => {
      this.readyState = 1;
      this.onopen?.({ type: 'open' });
      FRAMES.forEach((frame, i) => this.later(i * FRAME_GAP_MS, () => this.onmessage?.({ type: 'message', data: JSON.stringify(frame) })));
    });
  }

  later(ms, f) {
    this.timers.push(setTimeout(() => this.readyState < 2 && f(), ms));
  }

  send() {}

  close(code = 1000) {
    if (this.readyState >= 2) return;
    for (const t of this.timers) clearTimeout(t);
    this.readyState = 2;
    setTimeout(() => this.finish(code), 0);
  }

  finish(code) {
    this.readyState = 3;
    this.onclose?.({ type: 'close', code });
  }
};

const records = [];
const log = console.log.bind(console);
console.log = (...args) => {
  records.push(args.map((value) => {
    try {
      v8.serialize(value);
      return { value };
    } catch {
      return { unserializable: util.inspect(value) };
    }
  }));
  log(...args);
};
process.on('exit', () => {
  if (process.env.README_RECORD) fs.writeFileSync(process.env.README_RECORD, v8.serialize(records));
});

if (process.env.README_DOM) {
  const { Window } = await import('happy-dom');
  const window = new Window({ url: 'http://localhost/', width: 1280, height: 800 });
  Object.assign(globalThis, { window, document: window.document });
  process.on('beforeExit', () => window.happyDOM.close());
}
