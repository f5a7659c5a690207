// Deterministic benchmark workloads, shared by the Node runner, the Chromium page and (through
// the JSON files `bench/gen.mjs` writes) the native criterion bench. No Node or DOM APIs here.
//
// A session of N messages: turns of 20–50 messages, the last one open; about 1 in 20 messages a
// clarification_request (some bundles of 2–3 with pending_id/question_total), some
// permission_requests, every request answered/approved in the preloaded history. Content is a
// few hundred bytes of text, as the backend sends it.
//
// An event *pass* is K WebSocket message events continuing the open turn: ~60% `added` (agent
// output, tool calls, clarification bundles, permission requests), ~40% `updated` (streaming
// updates of an agent message, a request answered/approved), projection keys on request events
// (`pending_action` + `pending_action_revision`, sequence increasing). Every `updated` event
// targets a message added in the same pass, so a pass can be replayed after deleting what it
// added: the session is back at N messages before every pass, and each replay does the same
// work. Only the revision sequence must keep increasing: `passRevisions` renumbers it.

/** mulberry32: a small deterministic PRNG. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (n, width) => n.toString(16).padStart(width, '0').slice(-width);

/** A uuid-shaped id (36 chars), deterministic in (namespace, n). */
export function uuid(namespace, n) {
  const a = Math.imul(n + 1, 2654435761) >>> 0;
  const b = Math.imul(n ^ 0x5bd1e995, 40503) >>> 0;
  return `${hex(namespace, 8)}-${hex(a >>> 16, 4)}-4${hex(a, 3)}-8${hex(b >>> 8, 3)}-${hex(b, 4)}${hex(n, 8)}`;
}

const BASE_MS = Date.UTC(2026, 10, 1, 8, 0, 0);
/** An RFC 3339 timestamp with microseconds, `step` × 1.37 s after the base. */
export function timestamp(step, micros = 0) {
  const ms = BASE_MS + step * 1370;
  const iso = new Date(ms).toISOString(); // 2026-11-01T08:00:00.000Z
  return `${iso.slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}

const WORDS = (
  'the agent ran the build and the tests passed except one flaky case in the storage layer ' +
  'which it retried twice before reporting a timeout against the local database so it opened ' +
  'the migration file checked the index definitions and proposed a smaller batch size for the ' +
  'import job while keeping the transaction boundaries unchanged then it summarized the diff ' +
  'and asked whether the release branch should also receive the fix'
).split(' ');

/** Text of about `bytes` bytes. */
export function content(random, bytes) {
  let out = '';
  while (out.length < bytes) out += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return out.trimEnd();
}

const ORDINARY = ['agent_message', 'agent_message', 'agent_message', 'tool_call', 'tool_result', 'user_message'];

function ordinaryMessage(random, { id, sessionId, taskId, turnId, step }) {
  const type = ORDINARY[Math.floor(random() * ORDINARY.length)];
  const metadata = type === 'tool_call' ? { tool: 'bash', call_id: `call_${step}` } : {};
  return {
    id,
    session_id: sessionId,
    task_id: taskId,
    turn_id: turnId,
    author_type: type === 'user_message' ? 'user' : 'agent',
    type,
    content: content(random, 150 + Math.floor(random() * 300)),
    metadata,
    created_at: timestamp(step),
    updated_at: timestamp(step, 1),
  };
}

function requestMessage(random, kind, { id, sessionId, taskId, turnId, step, status, pendingId, index, total }) {
  const metadata =
    kind === 'clarification_request'
      ? { pending_id: pendingId, question_id: `q-${step}`, question_index: index, question_total: total, status }
      : { status, tool: 'bash', command: 'npm run migrate' };
  return {
    id,
    session_id: sessionId,
    task_id: taskId,
    turn_id: turnId,
    author_type: 'agent',
    type: kind,
    content: content(random, 120 + Math.floor(random() * 200)),
    metadata,
    created_at: timestamp(step),
    updated_at: timestamp(step, 1),
  };
}

/**
 * The preloaded history of one session with `n` messages: `{ taskId, session, turns, messages }`
 * (REST shapes, `id` keys). `ns` keeps ids of different sessions apart; turns hold 20–50
 * messages, or `turnSize` each.
 */
export function sessionHistory(n, { ns = 1, seed = 42, state = 'RUNNING', sequence = 1000, turnSize } = {}) {
  const random = rng(seed);
  const taskId = uuid(0x7a000000 + ns, 0);
  const sessionId = uuid(0x5e000000 + ns, 0);
  const turns = [];
  const messages = [];
  let turnIndex = 0;
  let step = 0;
  while (messages.length < n) {
    const size = Math.min(turnSize ?? 20 + Math.floor(random() * 31), n - messages.length);
    const turnId = uuid(0x70000000 + ns, turnIndex);
    const startStep = step;
    for (let i = 0; i < size; i += 1) {
      const id = uuid(0x30000000 + ns, messages.length);
      const base = { id, sessionId, taskId, turnId, step };
      const r = random();
      if (r < 0.025 && i + 3 <= size) {
        // A clarification bundle of 1–3 questions, answered.
        const total = 1 + Math.floor(random() * 3);
        const pendingId = `pending-${ns}-${step}`;
        for (let q = 0; q < total; q += 1) {
          const qid = q === 0 ? id : uuid(0x30000000 + ns, messages.length);
          messages.push(
            requestMessage(random, 'clarification_request', {
              ...base, id: qid, step, status: 'answered', pendingId, index: q, total,
            }),
          );
          step += 1;
        }
        i += total - 1;
        continue;
      }
      if (r < 0.045) messages.push(requestMessage(random, 'permission_request', { ...base, status: 'approved' }));
      else messages.push(ordinaryMessage(random, base));
      step += 1;
    }
    const last = messages.length >= n;
    turns.push({
      id: turnId,
      session_id: sessionId,
      task_id: taskId,
      started_at: timestamp(startStep),
      completed_at: last ? null : timestamp(step),
      created_at: timestamp(startStep),
      updated_at: timestamp(last ? startStep : step),
      metadata: {},
    });
    turnIndex += 1;
  }
  const session = {
    id: sessionId,
    task_id: taskId,
    state,
    is_primary: true,
    started_at: timestamp(0),
    updated_at: timestamp(step),
    pending_action: null,
    pending_action_revision: { epoch: '1', sequence },
  };
  return { taskId, session, turns, messages, nextStep: step };
}

/**
 * One pass of `k` message events continuing the open (last) turn of `history`:
 * `{ events: [{ kind, payload }], added: [messageId], revisioned: [eventIndex] }`.
 * Payloads are WebSocket shapes (`message_id`, `session_id`, projection keys on request events).
 */
export function eventPass(history, k, { seed = 7 } = {}) {
  const random = rng(seed);
  const { taskId, session, turns } = history;
  const sessionId = session.id;
  const turnId = turns[turns.length - 1].id;
  const events = [];
  const added = [];
  const revisioned = [];
  let step = history.nextStep;
  let counter = 0;
  let streaming = null; // an agent message being streamed (updated)
  let open = null; // { kind, messages: [payload], age }
  const projection = (payload, action) => {
    payload.pending_action = action;
    payload.pending_action_revision = { epoch: '1', sequence: 0 };
    revisioned.push(events.length);
    return payload;
  };
  const wsShape = (message) => {
    const { id, ...rest } = message;
    return { message_id: id, ...rest };
  };
  const nextId = () => uuid(0x90000000 + (seed & 0xffff), counter++);
  while (events.length < k) {
    const r = random();
    if (open && open.age >= 3) {
      // The user answers / approves: the request rows are updated, the projection cleared.
      for (let i = 0; i < open.messages.length && events.length < k; i += 1) {
        const m = open.messages[i];
        const payload = {
          ...m,
          metadata: { ...m.metadata, status: open.kind === 'clarification_request' ? 'answered' : 'approved' },
          updated_at: timestamp(step, 2),
        };
        if (i === open.messages.length - 1) projection(payload, null);
        events.push({ kind: 'updated', payload });
      }
      step += 1;
      open = null;
      continue;
    }
    if (open) open.age += 1;
    if (!open && r < 0.03) {
      const total = 1 + Math.floor(random() * 3);
      const pendingId = `pending-live-${step}`;
      const messages = [];
      for (let q = 0; q < total && events.length < k; q += 1) {
        const payload = wsShape(
          requestMessage(random, 'clarification_request', {
            id: nextId(), sessionId, taskId, turnId, step, status: 'pending', pendingId, index: q, total,
          }),
        );
        if (q === total - 1) projection(payload, 'clarification');
        events.push({ kind: 'added', payload });
        added.push(payload.message_id);
        messages.push(payload);
        step += 1;
      }
      open = { kind: 'clarification_request', messages, age: 0 };
      continue;
    }
    if (!open && r < 0.05) {
      const payload = projection(
        wsShape(requestMessage(random, 'permission_request', { id: nextId(), sessionId, taskId, turnId, step, status: 'pending' })),
        'permission',
      );
      events.push({ kind: 'added', payload });
      added.push(payload.message_id);
      open = { kind: 'permission_request', messages: [payload], age: 0 };
      step += 1;
      continue;
    }
    if (streaming && r < 0.45) {
      // A streaming update of the agent message: longer content, newer updated_at.
      streaming = { ...streaming, content: `${streaming.content} ${content(random, 40)}`, updated_at: timestamp(step, 3) };
      events.push({ kind: 'updated', payload: streaming });
      step += 1;
      continue;
    }
    const payload = wsShape(ordinaryMessage(random, { id: nextId(), sessionId, taskId, turnId, step }));
    events.push({ kind: 'added', payload });
    added.push(payload.message_id);
    if (payload.type === 'agent_message') streaming = payload;
    step += 1;
  }
  return { events, added, revisioned };
}

/**
 * Renumbers the revision of every revisioned event of a pass from `sequence` on (fresh revision
 * objects), returning the next free sequence. Untimed, before each replay.
 */
export function passRevisions(pass, sequence) {
  let next = sequence;
  for (const i of pass.revisioned) {
    pass.events[i].payload.pending_action_revision = { epoch: '1', sequence: next };
    next += 1;
  }
  return next;
}

/**
 * Gives a pass fresh message ids (a replay-numbered first id segment; `pass.added` follows).
 * Untimed, before each replay of a pass into a store that deleted the previous replay's rows:
 * the store keeps a deleted id deleted for every input not newer than the delete
 * (docs/convergence.md), so re-adding the same ids would measure ignored adds, not inserts.
 */
export function passIds(pass) {
  pass.replay = (pass.replay ?? 0) + 1;
  const prefix = hex((0xa0000000 + pass.replay) >>> 0, 8);
  for (const e of pass.events) e.payload.message_id = prefix + e.payload.message_id.slice(8);
  for (let i = 0; i < pass.added.length; i += 1) pass.added[i] = prefix + pass.added[i].slice(8);
}

/**
 * The boot snapshot: `{ tasks, sessions: {taskId: [session]}, turns: {sessionId: [turn]},
 * messages: {sessionId: [message]} }`, about `targetMB` MB of JSON text.
 */
export function bootSnapshot({ targetMB = 28.4, seed = 99 } = {}) {
  const random = rng(seed);
  // ~650 bytes per message; ~48 messages per session, 2–3 sessions per task.
  const messagesWanted = Math.round((targetMB * 1e6) / 650);
  const tasks = [];
  const sessions = {};
  const turns = {};
  const messages = {};
  let total = 0;
  let ns = 1000;
  for (let t = 0; total < messagesWanted; t += 1) {
    const taskId = uuid(0x7b000000, t);
    const count = 2 + Math.floor(random() * 2);
    const list = [];
    let pending = null;
    for (let s = 0; s < count && total < messagesWanted; s += 1) {
      ns += 1;
      const n = Math.min(10 + Math.floor(random() * 77), messagesWanted - total);
      const h = sessionHistory(n, { ns, seed: ns, state: s === 0 ? 'RUNNING' : 'COMPLETED', sequence: 10 + s });
      const session = { ...h.session, task_id: taskId, is_primary: s === 0 };
      if (s === 0 && random() < 0.2) {
        session.pending_action = random() < 0.7 ? 'clarification' : 'permission';
        pending = session.pending_action;
      }
      list.push(session);
      turns[session.id] = h.turns.map((turn) => ({ ...turn, task_id: taskId }));
      messages[session.id] = h.messages.map((m) => ({ ...m, task_id: taskId }));
      total += n;
    }
    sessions[taskId] = list;
    tasks.push({
      id: taskId,
      title: content(random, 40),
      description: content(random, 200),
      status: pending ? 'waiting_for_input' : 'running',
      created_at: timestamp(t),
      updated_at: timestamp(t + 100),
      status_summary: {
        revision: 1 + Math.floor(random() * 50),
        updated_at: timestamp(t + 100),
        state: pending ? 'waiting_for_input' : 'running',
        headline: content(random, 60),
        ...(pending && { pending_action: pending }),
      },
      status_summary_invalidated: false,
      task_pending_action: pending,
      primary_session_pending_action: pending,
    });
  }
  return { tasks, sessions, turns, messages, messageCount: total };
}

/** Feeds a parsed boot snapshot to a store through its REST methods. */
export function ingestSnapshot(store, snapshot) {
  const token = store.beginTaskFetch();
  store.applyTaskSnapshot(token, snapshot.tasks);
  for (const task of snapshot.tasks) {
    const list = snapshot.sessions[task.id];
    store.applySessionList(task.id, list);
    for (const session of list) {
      store.applyTurnList(session.id, snapshot.turns[session.id]);
      store.applyMessagePage(session.id, snapshot.messages[session.id]);
    }
  }
}

/** Sizes of the event benchmark and the events per pass at each size. */
export const SIZES = [100, 1000, 5000, 50000];
export const passLength = (n) => Math.min(100, Math.max(20, Math.floor(n / 5)));
/** Events per stateless pass: each costs a full rescan, so fewer at large sizes. */
export const statelessEvents = (n) => Math.min(passLength(n), n >= 50000 ? 1 : n >= 5000 ? 5 : 20);

// Scale inputs (issue 11: no cliff at 10⁶ elements). The native bench (benches/store.rs,
// `scale_*`) builds the same objects by the same formulas.

/** The timestamp of element `i`: `i` ms after 2026-11-01T00:00:00Z, with microseconds. */
export function scaleTimestamp(i) {
  const seconds = Math.floor(i / 1000);
  const two = (x) => String(x).padStart(2, '0');
  const micros = String((i % 1000) * 1000).padStart(6, '0');
  return `2026-11-01T${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}.${micros}Z`;
}

/** A multiplier coprime with `n`: position `k` of `scaleTurns(n)` holds turn `k * step mod n`. */
export function scaleStep(n) {
  const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
  let step = 7919;
  while (n > 1 && gcd(step, n) !== 1) step += 2;
  return step;
}

/**
 * `n` turns of one session in no particular order: every 10th lifecycle-only, every 100th an
 * unpublished reservation (not in the visible history), the last one open.
 */
export function scaleTurns(n) {
  const step = scaleStep(n);
  const turns = new Array(n);
  for (let k = 0; k < n; k += 1) {
    const i = (k * step) % Math.max(n, 1); // exact: k * step < 2^53 for any n a bench uses
    const metadata = i % 100 === 99 ? { prompt_dispatch_pending: true } : i % 10 === 9 ? { lifecycle_only: true } : {};
    turns[k] = {
      id: `turn-${String(i).padStart(7, '0')}`,
      session_id: 'sess-scale',
      started_at: scaleTimestamp(i),
      created_at: scaleTimestamp(i),
      completed_at: i + 1 < n ? scaleTimestamp(i + 1) : null,
      updated_at: scaleTimestamp(i + 1),
      metadata,
    };
  }
  return turns;
}

/**
 * Sessions `from`..`to` (exclusive) of task `task-scale`, newest first: every 5th waiting on a
 * clarification, session 0 primary, revisions and clocks increasing with the index.
 */
export function scaleSessions(from, to) {
  const sessions = [];
  for (let i = to - 1; i >= from; i -= 1) {
    const waiting = i % 5 === 0;
    sessions.push({
      id: `sess-${String(i).padStart(7, '0')}`,
      task_id: 'task-scale',
      state: waiting ? 'WAITING_FOR_INPUT' : 'IDLE',
      is_primary: i === 0,
      pending_action: waiting ? 'clarification' : null,
      pending_action_revision: { epoch: '1', sequence: i + 1 },
      updated_at: scaleTimestamp(i),
    });
  }
  return sessions;
}
