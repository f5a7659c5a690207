// The measurements of tests/js/memory.test.mjs; run as `node --expose-gc memory-run.mjs <part>`
// (part: stores-free | stores-gc | events) and prints one JSON line. Memory is read after a full
// GC: wasm = the instance's linear memory (it never shrinks, so growth is the signal), heap =
// process.memoryUsage().heapUsed.
// stats() is a development feature.
import init, { ProjectionStore } from 'task-projection/development';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const wasm = await init();
const MB = 1024 * 1024;
const tick = () => new Promise((resolve) => setImmediate(resolve));
async function settle() {
  // FinalizationRegistry callbacks run as tasks after the GC that found their targets dead.
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await tick();
  }
}
const sample = () => ({ wasmMB: wasm.memory.buffer.byteLength / MB, heapMB: process.memoryUsage().heapUsed / MB });

const at = (n) => `2026-11-29T12:${String(Math.floor(n / 60) % 60).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}.000000000Z`;
function fill(store, i) {
  const sid = `sess-${i}`;
  store.applySessionList(`task-${i}`, [{ id: sid, task_id: `task-${i}`, state: 'RUNNING', pending_action: null, pending_action_revision: { epoch: '1', sequence: 1 } }]);
  store.applyTurnList(sid, [{ id: `turn-${i}`, session_id: sid, started_at: at(1), completed_at: null }]);
  store.applyMessageEvent('added', {
    message_id: `m-${i}`, session_id: sid, task_id: `task-${i}`, turn_id: `turn-${i}`, type: 'clarification_request',
    metadata: { pending_id: `p-${i}`, question_total: 1, status: 'pending' }, created_at: at(2), updated_at: at(2),
    pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 2 },
  });
  if (store.sessionPendingAction(sid) !== 'clarification') throw new Error('unexpected answer');
}

const part = process.argv[2];
const N = Number(process.argv[3] ?? 100_000);
const checkpoints = [];
await settle();
const start = sample();

if (part === 'stores-free' || part === 'stores-gc') {
  const explicit = part === 'stores-free';
  for (let i = 1; i <= N; i++) {
    let store = new ProjectionStore();
    fill(store, i);
    if (explicit) {
      store.dispose();
      store.free();
    }
    store = null;
    if (i % 1000 === 0) await tick(); // let queued finalizers run, as an app's event loop would
    if (i % (N / 10) === 0) {
      await settle();
      checkpoints.push({ stores: i, ...sample() });
    }
  }
} else if (part === 'events') {
  // One store, one session; a sliding window of WINDOW live messages: each added message deletes
  // the one WINDOW additions older, every 7th addition also updates a live message; every 5th
  // message is a question of a two-question bundle (200 pending ids in turn), and the turn moves
  // every 50 additions through a pool of TURNS (turns are never deleted: the pool keeps the
  // retained state bounded).
  const WINDOW = 1000;
  const TURNS = 40;
  const store = new ProjectionStore();
  const sid = 'sess-1';
  store.applySessionList('task-1', [{ id: sid, task_id: 'task-1', state: 'RUNNING' }]);
  let sequence = 1;
  const message = (n) => ({
    message_id: `msg-${n}`, session_id: sid, task_id: 'task-1', turn_id: `turn-${Math.floor(n / 50) % TURNS}`,
    type: n % 5 === 0 ? 'clarification_request' : 'message',
    metadata: n % 5 === 0 ? { pending_id: `p-${Math.floor(n / 10) % 200}`, question_total: 2, status: 'pending' } : {},
    created_at: at(n % 3600), updated_at: at(n % 3600),
  });
  let events = 0;
  let added = 0;
  const maxRetained = { messages: 0 };
  for (let n = 0; events < N; n++) {
    if (n % 50 === 0) store.applyTurnEvent({ id: `turn-${(n / 50) % TURNS}`, session_id: sid, started_at: at(n % 3600), completed_at: null });
    // Question events carry the session's projection (a new revision each), like the server sends.
    const m = message(n);
    store.applyMessageEvent('added', n % 5 === 0 ? { ...m, pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: ++sequence } } : m);
    events++;
    added++;
    if (n >= WINDOW) {
      store.applyMessageEvent('deleted', { message_id: `msg-${n - WINDOW}`, session_id: sid });
      events++;
    }
    if (n % 7 === 0 && n > 0) {
      const m = message(n - 1);
      m.updated_at = at((n + 1) % 3600);
      m.metadata = { status: 'answered' };
      store.applyMessageEvent('updated', m);
      events++;
    }
    store.sessionPendingAction(sid);
    store.pendingClarification(sid);
    if (added % 1000 === 0) {
      const { messages } = store.stats();
      if (messages > maxRetained.messages) maxRetained.messages = messages;
    }
    if (checkpoints.length < Math.floor(events / (N / 10))) {
      await settle();
      checkpoints.push({ events, retained: store.stats().messages, ...sample() });
    }
  }
  checkpoints.push({ maxRetainedMessages: maxRetained.messages, window: WINDOW });
  store.free();
} else {
  throw new Error(`unknown part ${part}`);
}
await settle();
console.log(JSON.stringify({ part, n: N, start, end: sample(), checkpoints }));
