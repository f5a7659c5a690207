// The measurements, independent of where they run: the Node runner (bench/node.mjs) and the
// Chromium page (bench/browser.mjs) call them with the package module `tp`, a clock `now()` in
// milliseconds and, for memory, the wasm exports. Every function returns plain JSON.
import * as baseline from './baseline.mjs';
import {
  SIZES, eventPass, ingestSnapshot, passIds, passLength, passRevisions, scaleSessions, scaleTurns, sessionHistory,
  statelessEvents,
} from './workload.mjs';

export { SIZES };

/** Median and 90th percentile of a list of numbers. */
export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { median: at(0.5), p90: at(0.9), samples: sorted.length };
}

let sink = 0;
/** Keeps results alive so no engine can drop the work that produced them. */
export const consume = (value) => {
  sink = (sink + (value === null ? 1 : typeof value === 'object' ? 2 : 3)) | 0;
  return sink;
};

/**
 * Runs `pass()` (which returns the milliseconds of its timed part, `units` operations) after a
 * warm-up; one sample is `reps` passes, `reps` chosen so a sample lasts at least `minSampleMs`
 * (the browser clock is coarse). Returns µs per operation: median and p90 over samples.
 */
export function measure(pass, units, { now, warmupMs = 300, budgetMs = 1500, minWarmPasses = 2, minSamples = 7, maxSamples = 300, minSampleMs = 2 }) {
  let warm = 0;
  let warmPasses = 0;
  const w0 = now();
  while (warmPasses < minWarmPasses || now() - w0 < warmupMs) {
    warm += pass();
    warmPasses += 1;
  }
  const reps = Math.max(1, Math.ceil(minSampleMs / Math.max(warm / warmPasses, 1e-3)));
  const samples = [];
  const b0 = now();
  while (samples.length < minSamples || (samples.length < maxSamples && now() - b0 < budgetMs)) {
    let t = 0;
    for (let r = 0; r < reps; r += 1) t += pass();
    samples.push((t * 1000) / (reps * units));
  }
  return { ...summarize(samples), passesPerSample: reps, opsPerPass: units };
}

export const QUERIES = ['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission'];

/**
 * The cost of each store query against the number of turns: one session of `messages` messages
 * in `turns` turns of equal size (`turnCounts`), preloaded. Per query, µs per call:
 * - `repeat`: called again and again with nothing changed (what every render after the first
 *   pays);
 * - `afterEvent`: right after a message event that added an ordinary row to the open turn (so
 *   cached answers are recomputed): (event + query) − (event alone), each measured over the same
 *   pass of events.
 */
export function queryBench(tp, { now, messages = 10000, turnCounts = [50, 5000], budgetMs = 600, warmupMs = 200 } = {}) {
  const rows = {};
  for (const turns of turnCounts) {
    const history = sessionHistory(messages, { turnSize: Math.ceil(messages / turns) });
    const sid = history.session.id;
    const open = history.turns[history.turns.length - 1];
    const store = preloadedStore(tp, history);
    const k = 200;
    let round = 0;
    // k ordinary rows added to the open turn, then deleted (untimed), with fresh ids each pass.
    const events = () => {
      round += 1;
      return Array.from({ length: k }, (_, i) => ({
        message_id: `q-${round}-${i}`, session_id: sid, task_id: history.taskId, turn_id: open.id,
        type: 'agent_message', content: 'x', created_at: `2030-01-01T00:00:00.${String(round % 1e6).padStart(6, '0')}Z`,
      }));
    };
    const timedPass = (query) => () => {
      const payloads = events();
      const t0 = now();
      for (let i = 0; i < k; i += 1) {
        store.applyMessageEvent('added', payloads[i]);
        if (query !== undefined) consume(store[query](sid));
      }
      const t = now() - t0;
      for (const p of payloads) store.applyMessageEvent('deleted', { message_id: p.message_id, session_id: sid });
      return t;
    };
    const options = { now, budgetMs, warmupMs, minSamples: 5 };
    const eventAlone = measure(timedPass(undefined), k, options).median;
    const row = { turns: history.turns.length, messages: history.messages.length, eventAlone };
    for (const query of QUERIES) {
      const repeat = measure(() => {
        const t0 = now();
        for (let i = 0; i < k; i += 1) consume(store[query](sid));
        return now() - t0;
      }, k, options).median;
      const withEvent = measure(timedPass(query), k, options).median;
      row[query] = { repeat, afterEvent: Math.max(0, withEvent - eventAlone) };
    }
    store.free();
    rows[turns] = row;
  }
  return { messages, rows };
}

/**
 * The least any stateless function over the app's arrays must do per event, with no engine at
 * all, over the same events as the stateless functions (µs per event):
 * - `read`: the app's arrays updated, then every field the rules take of each message and turn
 *   read once (no copy, no call);
 * - `text`: `read` plus each message's id and two timestamps written as UTF-8 into a buffer (the
 *   text that must reach wasm memory for the rules to compare; the other fields repeat, and
 *   could cross by handle).
 * A stateless call does at least this per render, where the baseline can skip rows by reference
 * comparisons: when `read` or `text` is above the baseline, no stateless design can meet it.
 */
function statelessFloor(history, events, { now, options }) {
  const bytes = new Uint8Array(1 << 16);
  const ascii = (text, at) => {
    if (typeof text !== 'string') return at;
    const n = Math.min(text.length, bytes.length - at);
    for (let i = 0; i < n; i++) bytes[at + i] = text.charCodeAt(i);
    return (at + n) & 0x7fff; // wraps: the bytes are not kept, only written
  };
  const floorPass = (withText) => {
    const { messages, put, keep } = transcript(history.messages);
    const turns = history.turns;
    return () => {
      let seen = 0;
      const t0 = now();
      for (const e of events) {
        put(e.payload);
        let at = 0;
        for (let i = 0; i < turns.length; i++) {
          const t = turns[i];
          const m = t.metadata;
          seen += (t.id !== undefined) + (t.started_at !== undefined) + (t.created_at !== undefined) + (t.completed_at !== undefined)
            + (m != null && (m.lifecycle_only !== undefined) + (m.prompt_dispatch_pending !== undefined) + (m.prompt_dispatch_attempted !== undefined));
        }
        for (let i = 0; i < messages.length; i++) {
          const m = messages[i];
          const id = m.id !== undefined ? m.id : m.message_id;
          const c = m.created_at;
          const u = m.updated_at;
          const d = m.metadata;
          seen += (m.type !== undefined) + (m.turn_id !== undefined)
            + (d != null && (d.status !== undefined) + (d.pending_id !== undefined) + (d.question_total !== undefined));
          if (withText) at = ascii(u, ascii(c, ascii(id, at)));
        }
        seen += at;
      }
      const t = now() - t0;
      consume(seen);
      keep(history.messages.length);
      return t;
    };
  };
  return { read: measure(floorPass(false), events.length, options), text: measure(floorPass(true), events.length, options) };
}

/** A store holding the session's history (REST shapes), as after boot. */
/**
 * An app's own copy of a session's transcript, `rows` to start with: `put(payload)` replaces the
 * row with the event's `message_id` or appends it, as an app's state update does per event;
 * `keep(n)` drops every row after the first `n` (back to the start of a pass).
 */
function transcript(rows) {
  const messages = rows.slice();
  const index = new Map(messages.map((m, i) => [m.id, i]));
  const put = (p) => {
    const at = index.get(p.message_id);
    if (at === undefined) {
      index.set(p.message_id, messages.length);
      messages.push(p);
    } else {
      messages[at] = p;
    }
  };
  const keep = (n) => {
    for (let i = n; i < messages.length; i += 1) index.delete(messages[i].message_id ?? messages[i].id);
    messages.length = n;
  };
  return { messages, put, keep };
}

export function preloadedStore(tp, history, pageSize = 0) {
  const store = new tp.ProjectionStore();
  store.applySessionList(history.taskId, [history.session]);
  store.applyTurnList(history.session.id, history.turns);
  if (pageSize > 0) {
    for (let i = 0; i < history.messages.length; i += pageSize) {
      store.applyMessagePage(history.session.id, history.messages.slice(i, i + pageSize));
    }
  } else {
    store.applyMessagePage(history.session.id, history.messages);
  }
  return store;
}

/**
 * One WebSocket message event per operation, for a session of `n` messages:
 * - `store`: `applyMessageEvent(kind, payload)` + `sessionPendingAction(id)` +
 *   `pendingClarification(id)`;
 * - `recording` (with `recordingOn`, which needs `task-projection/trace` imported): the same on a
 *   store with a recording on (1 MiB ring); `vsStore` = its µs / the store's;
 * - `stateless`: the app's arrays updated, then `currentTurnId(turns, state)`,
 *   `sessionPendingAction({session, turns, messages})` and
 *   `pendingClarificationBundle(messages, scope)` over the whole transcript
 *   (`mergePendingProjection` first when the event carries projection keys);
 * - `baseline`: the same loop as `stateless` with the engine replaced by plain JS
 *   (bench/baseline.mjs: what an app would write instead, recomputed per render), over the
 *   whole pass (`eventsPerPass`, as `store`); `baselinePrefix`: the same over the `stateless`
 *   prefix, when that is shorter.
 * `storeVsBaseline` = baseline µs / store µs (how many times faster the store is per event);
 * `statelessVsBaseline` = stateless µs / baseline µs over the same prefix of events (how many
 * times slower the stateless functions are than the plain-JS rescan). Before timing,
 * `baselineCheck` asserts that the baseline's answers equal the engine's after every event
 * (throws on the first difference).
 */
export function eventBench(tp, n, {
  now, budgetMs = 1500, statelessBudgetMs = 1500, baselineBudgetMs = statelessBudgetMs, warmupMs = 300, baselineCheckEvents = 10,
  recordingOn = false,
} = {}) {
  const history = sessionHistory(n);
  const k = passLength(n);
  const pass = eventPass(history, k);
  const sid = history.session.id;
  let sequence = 2000;
  const agreement = n <= 5000 ? crossCheck(tp, history, pass) : undefined;
  // Against the stateless functions: every event up to 5,000 messages, a prefix at 50,000 (each
  // stateless call there rescans the whole transcript, ~0.3 s); against the store: every event.
  const baselineAgreement = baselineCheck(tp, history, pass, { statelessLimit: n <= 5000 ? Infinity : baselineCheckEvents });

  // The pass's added rows, deleted after each replay (untimed; ids change per replay).
  const deletes = () => pass.added.map((id) => ({ message_id: id, session_id: sid }));
  let actions = 0;
  let bundles = 0;
  const storePass = (store) => () => {
    sequence = passRevisions(pass, sequence);
    passIds(pass);
    const events = pass.events;
    const t0 = now();
    for (let i = 0; i < events.length; i += 1) {
      const e = events[i];
      store.applyMessageEvent(e.kind, e.payload);
      const action = store.sessionPendingAction(sid);
      const bundle = store.pendingClarification(sid);
      if (action !== null) actions += 1;
      if (bundle !== null) bundles += 1;
    }
    const t = now() - t0;
    for (const d of deletes()) store.applyMessageEvent('deleted', d);
    return t;
  };
  const store = preloadedStore(tp, history);
  const storeResult = measure(storePass(store), k, { now, budgetMs, warmupMs });
  // `stats()` and recording are the development build's (the production build throws
  // development_only): both only where `stats()` answers.
  let stats;
  try {
    stats = store.stats();
  } catch {
    stats = undefined;
  }
  const development = stats !== undefined;
  store.free();
  // The same pass with a recording on (the runner imports `task-projection/trace`): the cost of
  // the flight recorder per event, a 1 MiB ring wrapping many times.
  let recording;
  if (recordingOn && development && typeof tp.ProjectionStore.prototype.startRecording === 'function') {
    const recorded = preloadedStore(tp, history);
    recorded.startRecording({ maxBytes: 1 << 20 });
    const result = measure(storePass(recorded), k, { now, budgetMs, warmupMs });
    const header = JSON.parse(recorded.stopRecording().split('\n', 1)[0]);
    recorded.free();
    recording = { ...result, steps: header.steps, dropped: header.dropped, vsStore: result.median / storeResult.median };
  }

  // Stateless and baseline: the app's own state (the session object, the transcript array)
  // updated per event, then the three answers recomputed over the whole transcript, by the pure
  // functions or by plain JS (bench/baseline.mjs). Each pass has its own copy of the state.
  const turns = history.turns;
  const stateless = {
    merge: (session, p) => Object.assign(session, tp.mergePendingProjection(session, p)),
    currentTurnId: (list, state) => tp.currentTurnId(list, state),
    sessionPendingAction: tp.sessionPendingAction,
    pendingClarificationBundle: tp.pendingClarificationBundle,
  };
  const plain = {
    merge: baseline.mergePendingProjection,
    currentTurnId: baseline.currentTurnId,
    sessionPendingAction: baseline.sessionPendingAction,
    pendingClarificationBundle: baseline.pendingClarificationBundle,
  };
  const rescanPass = (events, engine) => {
    const session = { ...history.session };
    const { messages, put, keep } = transcript(history.messages);
    return () => {
      sequence = passRevisions(pass, sequence);
      const t0 = now();
      for (let i = 0; i < events.length; i += 1) {
        const p = events[i].payload;
        put(p);
        if (p.pending_action !== undefined || p.pending_action_revision !== undefined) engine.merge(session, p);
        const currentTurnId = engine.currentTurnId(turns, session.state, messages);
        const action = engine.sessionPendingAction({ session, turns, messages });
        const bundle = engine.pendingClarificationBundle(messages, { currentTurnId, pendingAction: session.pending_action });
        if (action !== null) actions += 1;
        if (bundle.length > 0) bundles += 1;
      }
      const t = now() - t0;
      keep(n);
      return t;
    };
  };
  // At large sizes a stateless pass is the first `ks` events of the same pass (each event costs
  // a full scan); the baseline is cheap enough for the whole pass at every size.
  const ks = statelessEvents(n);
  const prefix = pass.events.slice(0, ks);
  const statelessResult = measure(rescanPass(prefix, stateless), ks, {
    now, budgetMs: statelessBudgetMs, warmupMs: Math.min(warmupMs, 200), minWarmPasses: 1, minSamples: 5, minSampleMs: 0,
  });
  const baselineOptions = { now, budgetMs: baselineBudgetMs, warmupMs: Math.min(warmupMs, 200), minWarmPasses: 1, minSamples: 5 };
  const baselineResult = measure(rescanPass(pass.events, plain), k, baselineOptions);
  const baselinePrefix = ks < k ? measure(rescanPass(prefix, plain), ks, baselineOptions) : undefined;
  const floor = statelessFloor(history, prefix, { now, options: baselineOptions });
  consume(actions + bundles);
  return {
    n,
    eventsPerPass: k,
    store: storeResult,
    ...(recording && { recording }),
    stateless: { ...statelessResult, eventsPerPass: ks },
    baseline: { ...baselineResult, eventsPerPass: k },
    ...(baselinePrefix && { baselinePrefix: { ...baselinePrefix, eventsPerPass: ks } }),
    floor,
    floorVsBaseline: {
      read: floor.read.median / (baselinePrefix ?? baselineResult).median,
      text: floor.text.median / (baselinePrefix ?? baselineResult).median,
    },
    ratio: statelessResult.median / storeResult.median,
    storeVsBaseline: baselineResult.median / storeResult.median,
    statelessVsBaseline: statelessResult.median / (baselinePrefix ?? baselineResult).median,
    storeStats: stats,
    agreement,
    baselineAgreement,
  };
}

/**
 * Untimed: applies one pass both ways and counts the events after which the store's answers
 * equal the stateless ones (the bundle's message ids; the action, where the stateless app takes
 * the session's projection when it has one, else `sessionPendingAction`).
 */
export function crossCheck(tp, history, pass) {
  passRevisions(pass, 1_000_000);
  const sid = history.session.id;
  const store = preloadedStore(tp, history);
  const session = { ...history.session };
  const { messages, put } = transcript(history.messages);
  let same = 0;
  let withBundle = 0;
  const differences = [];
  for (const [i, { kind, payload }] of pass.events.entries()) {
    store.applyMessageEvent(kind, payload);
    put(payload);
    if (payload.pending_action !== undefined || payload.pending_action_revision !== undefined) {
      Object.assign(session, tp.mergePendingProjection(session, payload));
    }
    const currentTurnId = tp.currentTurnId(history.turns, session.state);
    const derived = tp.sessionPendingAction({ session, turns: history.turns, messages });
    const action = session.pending_action !== undefined ? session.pending_action : derived;
    const bundle = tp
      .pendingClarificationBundle(messages, { currentTurnId, pendingAction: session.pending_action })
      .map((m) => m.message_id ?? m.id);
    const stored = store.pendingClarification(sid);
    const storeIds = stored ? [...stored.message_ids] : [];
    const storeAction = store.sessionPendingAction(sid);
    if (bundle.length > 0) withBundle += 1;
    if (storeAction === action && storeIds.join() === bundle.join()) same += 1;
    else if (differences.length < 3) differences.push({ event: i, storeAction, action, storeIds, bundle });
  }
  store.free();
  return { events: pass.events.length, same, withBundle, differences };
}

const show = (value) => (value === undefined ? 'undefined' : JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
const revisionText = (r) => (r === undefined || r === null ? String(r) : `${r.epoch}/${r.sequence}`);
const idsOf = (rows) => rows.map((m) => m.message_id ?? m.id);

/**
 * Untimed, and throws on the first difference: the plain-JS baseline (bench/baseline.mjs) gives
 * the engine's answers.
 * - Edge cases first (outside what the event pass exercises): the history's turns plus a newer
 *   lifecycle-only turn, a newer completed turn, a newer unpublished reservation, an attempted
 *   one, nanosecond and flag variants, no turns, turns not loaded; each under every kind of
 *   session state (input-capable, not, terminal, unknown): `currentTurnId`, and with a pending
 *   question added to the open turn's rows, `sessionPendingAction` and
 *   `pendingClarificationBundle` (projection known / unknown), against the stateless functions;
 *   discovery over transcripts of bundles (partial, complete, answered siblings, superseded, no
 *   `pending_id`, permissions, other turns, turnless, legacy) under every scope of the SPEC §3
 *   table; projection merges of old/new/equal/malformed/legacy revisions.
 * - Then one pass, event by event, the baseline on its own session object (merged by
 *   `baseline.mergePendingProjection`) and the engine on another (`tp.mergePendingProjection`),
 *   both reading the same transcript arrays; after every event: the merged projection
 *   (`pending_action`, revision), then against the store (`currentTurnId`,
 *   `sessionPendingAction`: the projection when known, else the baseline's action from the
 *   rows; `pendingClarification`: `pending_id` and `message_ids` in order) and, for the first
 *   `statelessLimit` events, against the stateless functions (`currentTurnId`,
 *   `sessionPendingAction`, `pendingClarificationBundle`: the rows' ids in order).
 */
export function baselineCheck(tp, history, pass, { statelessLimit = Infinity } = {}) {
  const n = history.messages.length;
  const sid = history.session.id;
  const fail = (where, what, mine, engine, api) => {
    throw new Error(`baseline disagrees with the engine at n=${n}, ${where}: ${what}: ` +
      `baseline ${show(mine)}, engine (${api}) ${show(engine)}`);
  };
  const same = (where, what, mine, engine, api) => {
    if (mine !== engine) fail(where, what, mine, engine, api);
  };

  // Edge cases.
  const { turns } = history;
  const open = turns[turns.length - 1];
  const later = '2099-01-01T00:00:00Z';
  const newer = (id, fields) => ({ ...open, id, started_at: later, created_at: later, completed_at: null, metadata: {}, ...fields });
  const closed = turns.map((t) => ({ ...t, completed_at: t.completed_at ?? t.updated_at }));
  const variants = {
    history: turns,
    lifecycleNewest: [...turns, newer('turn-lifecycle', { metadata: { lifecycle_only: true } })],
    lifecycleFlagText: [...turns, newer('turn-lifecycle-text', { metadata: { lifecycle_only: '1' } })],
    lifecycleNotSet: [...turns, newer('turn-lifecycle-yes', { metadata: { lifecycle_only: 'yes' } })],
    completedNewer: [...turns, newer('turn-completed', { completed_at: '2099-01-01T00:00:01Z' })],
    reservation: [...turns, newer('turn-reserved', { metadata: { prompt_dispatch_pending: true } })],
    reservationAttempted: [...turns, newer('turn-attempted', { metadata: { prompt_dispatch_pending: 'true', prompt_dispatch_attempted: 1 } })],
    allCompleted: closed,
    nanoseconds: [
      ...closed,
      newer('turn-ns-b', { started_at: '2099-01-01T00:00:00.000000001Z' }),
      newer('turn-ns-a', { started_at: '2099-01-01T00:00:00.1Z' }),
      newer('turn-ns-c', { started_at: '2099-01-01T00:00:00.100000000Z' }),
    ],
    tieOnCreated: [...turns, newer('turn-tie-b', { created_at: '2099-01-01T00:00:02Z' }), newer('turn-tie-a', { created_at: '2099-01-01T00:00:02Z' })],
    none: [],
    notLoaded: undefined,
  };
  const states = ['RUNNING', 'WAITING_FOR_INPUT', 'IDLE', 'CREATED', 'COMPLETED', 'FAILED', 'CANCELLED', '', null, undefined];
  // Rows added to the open turn's rows (the edge cases are about turns and discovery; the
  // open turn's rows alone keep the stateless calls cheap at every size).
  const openRows = history.messages.filter((m) => m.turn_id === open.id);
  const last = openRows[openRows.length - 1];
  let extra = 0;
  const row = (type, metadata, fields = {}) => {
    extra += 1;
    return { ...last, id: `edge-${extra}`, type, metadata, created_at: `2099-01-01T00:00:${String(extra).padStart(2, '0')}Z`, ...fields };
  };
  const ask = (pendingId, total, status = 'pending', fields = {}) =>
    row('clarification_request', { ...(pendingId !== undefined && { pending_id: pendingId }), question_total: total, status }, fields);
  const strip = ({ turn_id: _, ...rest }) => rest;
  const questionSets = {
    single: [ask('edge-a', 1)],
    partial: [ask('edge-b', 2)],
    complete: [ask('edge-c', 2), ask('edge-c', 2)],
    answeredSibling: [ask('edge-d', 2, 'answered'), ask('edge-d', 2)],
    emptyAndNullStatus: [ask('edge-e', 2, ''), ask('edge-e', 2, null)],
    supersededBundle: [ask('edge-f', 1), ask('edge-g', 1)],
    newerBundleAnswered: [ask('edge-h', 1), ask('edge-i', 1, 'answered')],
    noPendingId: [ask(undefined, 1)],
    noPendingIdPartial: [ask(undefined, 3)],
    emptyPendingId: [ask('', 2)],
    permission: [row('permission_request', { status: 'pending' })],
    permissionThenApproved: [row('permission_request', { status: 'pending' }), row('permission_request', { status: 'approved' })],
    permissionSameCreatedAt: [
      row('permission_request', { status: 'approved' }, { created_at: '2099-01-01T00:00:00Z' }),
      row('permission_request', { status: 'pending' }, { created_at: '2099-01-01T00:00:00.000Z' }),
    ],
    questionInOtherTurn: [ask('edge-j', 1, 'pending', { turn_id: turns[0].id })],
    turnless: [ask('edge-k', 1, 'pending', { turn_id: undefined })],
  };
  const transcripts = Object.fromEntries(Object.entries(questionSets).map(([name, rows]) => [name, [...openRows, ...rows]]));
  transcripts.legacyNoTurns = [...openRows, ask('edge-l', 1), ask('edge-m', 1, 'answered')].map(strip);
  let edgeCases = 0;
  const checkDiscovery = (where, variant, state, messages) => {
    const turn = tp.currentTurnId(variant, state);
    const session = { ...history.session, state };
    same(where, 'sessionPendingAction', baseline.sessionPendingAction({ session, turns: variant, messages }),
      tp.sessionPendingAction({ session, turns: variant, messages }), 'tp.sessionPendingAction');
    const scopes = [
      { currentTurnId: turn, pendingAction: 'clarification' }, { currentTurnId: turn }, { currentTurnId: turn, pendingAction: null },
      { currentTurnId: turn, pendingAction: 'permission' }, { pendingAction: 'clarification' }, {}, undefined,
    ];
    for (const scope of scopes) {
      same(`${where}, scope ${show(scope)}`, 'bundle ids', idsOf(baseline.pendingClarificationBundle(messages, scope)).join(),
        idsOf(tp.pendingClarificationBundle(messages, scope)).join(), 'tp.pendingClarificationBundle');
    }
    edgeCases += 1 + scopes.length;
  };
  for (const [name, variant] of Object.entries(variants)) {
    for (const state of states) {
      const where = `edge case ${name}, state ${show(state)}`;
      same(where, 'currentTurnId', baseline.currentTurnId(variant, state, history.messages), tp.currentTurnId(variant, state), 'tp.currentTurnId');
      edgeCases += 1;
      checkDiscovery(`${where}, a question in the open turn`, variant, state, transcripts.single);
    }
  }
  for (const [name, messages] of Object.entries(transcripts)) {
    for (const state of ['RUNNING', 'COMPLETED', undefined]) checkDiscovery(`edge case ${name}, state ${show(state)}`, turns, state, messages);
  }

  // Projection merges (SPEC §5): older, equal, newer, long and zero-padded epochs, malformed
  // sides, omitted and null values, legacy sides without revisions.
  const rev = (epoch, sequence) => ({ epoch, sequence });
  const merges = [
    [rev('1', 5), 'clarification', rev('1', 4), null], [rev('1', 5), 'clarification', rev('1', 5), null],
    [rev('1', 5), 'clarification', rev('1', 6), null], [rev('9', 5), null, rev('10', 1), 'permission'],
    [rev('10', 1), null, rev('9', 99), 'permission'], [rev('010', 1), null, rev('9', 2), 'permission'],
    [rev('18446744073709551616', 1), null, rev('18446744073709551615', 7), 'permission'],
    [rev('x', 1), null, rev('1', 0), 'permission'], [rev('1', 1), null, rev('1x', 9), 'permission'],
    [rev('', 1), 'clarification', rev('', 2), 'permission'], [rev('1', 1), 'permission', rev('2', 0), undefined],
    [undefined, 'clarification', rev('1', 0), undefined], [undefined, 'clarification', undefined, 'permission'],
    [null, 'clarification', null, null], [undefined, 'clarification', undefined, undefined], [rev('1', 3), 'permission', null, null],
  ];
  for (const [held, heldAction, incoming, incomingAction] of merges) {
    const make = () => ({ pending_action: heldAction, pending_action_revision: held });
    const payload = { pending_action: incomingAction, pending_action_revision: incoming };
    const tpSide = make();
    Object.assign(tpSide, tp.mergePendingProjection(tpSide, payload));
    const jsSide = baseline.mergePendingProjection(make(), payload);
    const where = `edge case merge ${show(make())} <- ${show(payload)}`;
    same(where, 'merged pending_action', jsSide.pending_action, tpSide.pending_action, 'tp.mergePendingProjection');
    same(where, 'merged pending_action_revision', revisionText(jsSide.pending_action_revision),
      revisionText(tpSide.pending_action_revision), 'tp.mergePendingProjection');
    edgeCases += 2;
  }

  // The event pass.
  passRevisions(pass, 3_000_000);
  const store = preloadedStore(tp, history);
  const tpSession = { ...history.session };
  const jsSession = { ...history.session };
  const { messages, put } = transcript(history.messages);
  let statelessChecked = 0;
  let withBundle = 0;
  const actions = { clarification: 0, permission: 0, none: 0 };
  try {
    for (const [i, { kind, payload }] of pass.events.entries()) {
      const where = `event ${i} (${kind} ${payload.type} ${payload.message_id})`;
      store.applyMessageEvent(kind, payload);
      put(payload);
      if (payload.pending_action !== undefined || payload.pending_action_revision !== undefined) {
        Object.assign(tpSession, tp.mergePendingProjection(tpSession, payload));
        baseline.mergePendingProjection(jsSession, payload);
      }
      same(where, 'merged pending_action', jsSession.pending_action, tpSession.pending_action, 'tp.mergePendingProjection');
      same(where, 'merged pending_action_revision', revisionText(jsSession.pending_action_revision),
        revisionText(tpSession.pending_action_revision), 'tp.mergePendingProjection');

      const turn = baseline.currentTurnId(history.turns, jsSession.state, messages);
      const action = baseline.sessionPendingAction({ session: jsSession, turns: history.turns, messages });
      const bundle = baseline.pendingClarificationBundle(messages, { currentTurnId: turn, pendingAction: jsSession.pending_action });
      const ids = idsOf(bundle).join();
      if (bundle.length > 0) withBundle += 1;
      actions[action ?? 'none'] += 1;

      same(where, 'currentTurnId', turn, store.currentTurnId(sid), 'store.currentTurnId');
      const shown = jsSession.pending_action !== undefined ? jsSession.pending_action : action;
      same(where, 'pending action (projection, else from the rows)', shown, store.sessionPendingAction(sid), 'store.sessionPendingAction');
      const stored = store.pendingClarification(sid);
      same(where, 'bundle ids', ids, stored ? [...stored.message_ids].join() : '', 'store.pendingClarification');
      const pendingId = bundle.length > 0 ? bundle[0].metadata?.pending_id ?? null : null;
      same(where, 'bundle pending_id', pendingId, stored ? stored.pending_id : null, 'store.pendingClarification');

      if (i < statelessLimit) {
        const tpTurn = tp.currentTurnId(history.turns, tpSession.state);
        same(where, 'currentTurnId', turn, tpTurn, 'tp.currentTurnId');
        same(where, 'sessionPendingAction', action, tp.sessionPendingAction({ session: tpSession, turns: history.turns, messages }), 'tp.sessionPendingAction');
        const tpIds = idsOf(tp.pendingClarificationBundle(messages, { currentTurnId: tpTurn, pendingAction: tpSession.pending_action })).join();
        same(where, 'bundle ids', ids, tpIds, 'tp.pendingClarificationBundle');
        statelessChecked += 1;
      }
    }
  } finally {
    store.free();
  }
  return { events: pass.events.length, storeChecked: pass.events.length, statelessChecked, withBundle, actions, edgeCases };
}

/**
 * Input paths for one message event at `n` messages (Node): the object path split into its
 * parts, and the JS-side cost a JSON-string or primitive-field path would pay at least.
 */
export function inputPathsBench(tp, n, { now, budgetMs = 800 } = {}) {
  const history = sessionHistory(n);
  const k = passLength(n);
  const pass = eventPass(history, k);
  const sid = history.session.id;
  const store = preloadedStore(tp, history);
  // The pass's added rows, deleted after each replay (untimed; ids change per replay).
  const deletes = () => pass.added.map((id) => ({ message_id: id, session_id: sid }));
  let sequence = 5000;
  const events = pass.events;
  const reset = () => {
    for (const d of deletes()) store.applyMessageEvent('deleted', d);
  };
  const timed = (body) => () => {
    sequence = passRevisions(pass, sequence);
    passIds(pass);
    const t0 = now();
    for (let i = 0; i < events.length; i += 1) body(events[i]);
    const t = now() - t0;
    reset();
    return t;
  };
  const opts = { now, budgetMs };
  const rows = {};
  rows.event = measure(timed((e) => {
    store.applyMessageEvent(e.kind, e.payload);
    consume(store.sessionPendingAction(sid));
    consume(store.pendingClarification(sid));
  }), k, opts);
  rows.applyOnly = measure(timed((e) => store.applyMessageEvent(e.kind, e.payload)), k, opts);
  rows.applyPlusAction = measure(timed((e) => {
    store.applyMessageEvent(e.kind, e.payload);
    consume(store.sessionPendingAction(sid));
  }), k, opts);
  rows.batchApply = measure(() => {
    sequence = passRevisions(pass, sequence);
    passIds(pass);
    const added = events.filter((e) => e.kind === 'added').map((e) => e.payload);
    const updated = events.filter((e) => e.kind === 'updated').map((e) => e.payload);
    const t0 = now();
    store.applyMessageEvents('added', added);
    store.applyMessageEvents('updated', updated);
    const t = now() - t0;
    reset();
    return t;
  }, k, opts);
  // Unchanged session: the cached query results (no event in between).
  store.applyMessageEvent(events[0].kind, events[0].payload);
  const loop = (body) => () => {
    const t0 = now();
    for (let i = 0; i < events.length; i += 1) body(events[i]);
    return now() - t0;
  };
  rows.sessionPendingActionCached = measure(loop(() => consume(store.sessionPendingAction(sid))), k, opts);
  rows.pendingClarificationCached = measure(loop(() => consume(store.pendingClarification(sid))), k, opts);
  rows.versionCall = measure(loop(() => consume(store.version())), k, opts);
  rows.jsonStringify = measure(loop((e) => consume(JSON.stringify(e.payload).length)), k, opts);
  rows.fieldReads = measure(loop((e) => {
    const p = e.payload;
    const m = p.metadata;
    const r = p.pending_action_revision;
    consume([p.message_id, p.session_id, p.task_id, p.turn_id, p.type, p.created_at, p.updated_at,
      m?.status, m?.pending_id, m?.question_total, p.pending_action, r?.epoch, r?.sequence].length);
  }), k, opts);
  store.free();
  return { n, rows };
}

/**
 * The change notification a subscribed app pays per event: each WebSocket event arrives in its
 * own task, so every event is followed by a microtask checkpoint that runs the store's flush
 * (`{tasks, sessions}` to the listener). Measured as (event + `await`) minus `await` alone, with
 * one no-op listener subscribed; µs per event.
 */
export async function subscriberBench(tp, n, { now, passes = 60 } = {}) {
  const history = sessionHistory(n);
  const k = passLength(n);
  const pass = eventPass(history, k);
  const sid = history.session.id;
  const store = preloadedStore(tp, history);
  // The pass's added rows, deleted after each replay (untimed; ids change per replay).
  const deletes = () => pass.added.map((id) => ({ message_id: id, session_id: sid }));
  let notified = 0;
  const unsubscribe = store.subscribe(() => {
    notified += 1;
  });
  let sequence = 9000;
  const withStore = [];
  const baseline = [];
  for (let p = 0; p < passes; p += 1) {
    sequence = passRevisions(pass, sequence);
    passIds(pass);
    let t0 = now();
    for (const e of pass.events) {
      store.applyMessageEvent(e.kind, e.payload);
      consume(store.sessionPendingAction(sid));
      consume(store.pendingClarification(sid));
      await null;
    }
    withStore.push(((now() - t0) * 1000) / k);
    for (const d of deletes()) store.applyMessageEvent('deleted', d);
    await null;
    t0 = now();
    for (let i = 0; i < k; i += 1) await null;
    baseline.push(((now() - t0) * 1000) / k);
  }
  unsubscribe();
  store.free();
  const warm = Math.floor(passes / 5);
  const a = summarize(withStore.slice(warm));
  const b = summarize(baseline.slice(warm));
  return {
    n,
    eventWithFlush: { median: a.median - b.median, p90: a.p90 - b.median, samples: a.samples },
    awaitOnly: b,
    notifiedPerEvent: notified / (passes * k),
  };
}

/**
 * Boot ingest of a JSON snapshot text: `JSON.parse` alone, and `JSON.parse` + feeding a fresh
 * store (`applyTaskSnapshot`, `applySessionList`, `applyTurnList`, `applyMessagePage`),
 * alternating, `runs` times each, so a change of machine load hits both alike; a full GC before
 * each timed part when the engine exposes `gc()` (the runners enable it), so neither pays for
 * the other's garbage. MB = 10^6 bytes of JSON text (the generator writes ASCII). Median and
 * best run of each.
 */
export function ingestBench(tp, text, { now, runs = 5 } = {}) {
  const mb = text.length / 1e6;
  const parse = [];
  const feed = [];
  const floor = [];
  const total = [];
  const ratios = [];
  let messages = 0;
  consume(JSON.parse(text)); // warm-up
  const gc = globalThis.gc ?? (() => {});
  for (let r = 0; r < runs; r += 1) {
    gc();
    const p0 = now();
    consume(JSON.parse(text));
    const parseMs = now() - p0;
    gc();
    const store = new tp.ProjectionStore();
    const t0 = now();
    const parsed = JSON.parse(text);
    const t1 = now();
    ingestSnapshot(store, parsed);
    const t2 = now();
    parse.push(parseMs);
    feed.push(t2 - t1);
    total.push(t2 - t0);
    ratios.push(parseMs / (t2 - t0));
    messages = store.stats().messages;
    store.free();
    const f0 = now();
    consume(ingestFloor(parsed));
    floor.push(now() - f0);
  }
  const rate = (ms) => mb / (ms / 1000);
  const med = (xs) => summarize(xs).median;
  const best = (xs) => Math.min(...xs);
  return {
    mb,
    messages,
    runs,
    parseMs: med(parse),
    feedMs: med(feed),
    parseAndFeedMs: med(total),
    parseMBps: rate(med(parse)),
    feedMBps: rate(med(feed)),
    parseAndFeedMBps: rate(med(total)),
    bestParseMBps: rate(best(parse)),
    bestFeedMBps: rate(best(feed)),
    bestParseAndFeedMBps: rate(best(total)),
    feedVsParse: rate(med(feed)) / rate(med(parse)),
    endToEndVsParse: med(ratios),
    floorMBps: rate(med(floor)),
    bestFloorMBps: rate(best(floor)),
  };
}

/**
 * The least a feed from parsed objects does, with no engine: every message's fields the store
 * takes read once, the strings that repeat looked up in a Map (as store.js passes them, by
 * handle), the id and timestamps written as UTF-8 (sessions and turns not even counted). The
 * feed cannot be faster than this; `ingestBench` times it over the same parsed snapshot.
 */
function ingestFloor(snapshot) {
  const bytes = new Uint8Array(1 << 12);
  const names = new Map();
  let seen = 0;
  const name = (x) => {
    if (typeof x !== 'string') return 0;
    let h = names.get(x);
    if (h === undefined) {
      h = names.size + 1;
      names.set(x, h);
    }
    return h;
  };
  const utf8 = (t, at) => {
    if (typeof t !== 'string') return at;
    for (let j = 0; j < t.length; j++) bytes[(at + j) & 0xfff] = t.charCodeAt(j);
    return at + t.length;
  };
  for (const page of Object.values(snapshot.messages)) {
    for (let i = 0; i < page.length; i++) {
      const v = page[i];
      const m = v.metadata;
      const meta = typeof m === 'object' && m !== null;
      seen += name(v.type) + name(v.turn_id) + (meta ? name(m.status) + name(m.pending_id) + (m.question_total === undefined ? 0 : 1) : 0);
      seen += utf8(v.updated_at, utf8(v.created_at, utf8(v.id !== undefined ? v.id : v.message_id, 0)));
    }
  }
  return seen;
}

/**
 * wasm memory per retained message, in a fresh instance: one session of `n` messages fed in
 * REST pages of 100 (`mode: "session"`), or the boot snapshot (`mode: "boot"`).
 */
export function memoryBench(tp, memory, { mode = 'session', n = 50000, snapshot } = {}) {
  const before = memory.buffer.byteLength;
  let store;
  if (mode === 'boot') {
    store = new tp.ProjectionStore();
    ingestSnapshot(store, snapshot);
  } else {
    store = preloadedStore(tp, sessionHistory(n), 100);
  }
  const after = memory.buffer.byteLength;
  const stats = store.stats();
  const result = {
    mode,
    messages: stats.messages,
    memoryBefore: before,
    memoryAfter: after,
    growthBytes: after - before,
    growthPerMessage: (after - before) / stats.messages,
    messageBytes: stats.messageBytes,
    messageBytesPerMessage: stats.messageBytes / stats.messages,
  };
  store.free();
  return result;
}

/**
 * The scale check (issue 11): one call over `n` = 10⁶ elements, `runs` times, fresh inputs each
 * run, a full GC before each timed call when the engine exposes `gc()`:
 * - `visibleTurnHistory`: `visibleTurnHistory(turns)`, `n` turns in no particular order
 *   (`scaleTurns`);
 * - `applySessionList`: `new ProjectionStore().applySessionList(taskId, sessions)`, `n`
 *   sessions into a fresh store (`scaleSessions`);
 * - `applySessionListMerge`: an older list (the oldest half) onto a store holding all `n`
 *   (filled untimed), so every session the list lacks is merged back into place.
 * The inputs are built as a REST response arrives (`JSON.parse` of the list): flat strings and
 * objects of one shape each, as `response.json()` gives them. (Objects built by template
 * literals hold their strings as ropes, which V8 flattens at the first read: a one-time cost of
 * the benchmark's own construction, 1–2 s at 10⁶ turns, that an app does not have.)
 * Milliseconds per call: median and best run.
 */
/** `value` as `JSON.parse` of its JSON gives it (a REST response's body). */
const asReceived = (value) => JSON.parse(JSON.stringify(value));

export function scaleBench(tp, n, { now, runs = 3 } = {}) {
  const gc = globalThis.gc ?? (() => {});
  const stats = (ms) => ({ median: summarize(ms).median, best: Math.min(...ms), runs: ms.length, all: ms });
  const task = 'task-scale';
  const visible = [];
  const fresh = [];
  const merge = [];
  let shown = 0;
  let owner;
  {
    const turns = asReceived(scaleTurns(n));
    for (let r = 0; r < runs; r += 1) {
      gc();
      const t0 = now();
      const history = tp.visibleTurnHistory(turns);
      visible.push(now() - t0);
      shown = history.length;
    }
  }
  const all = asReceived(scaleSessions(0, n));
  const older = asReceived(scaleSessions(0, Math.floor(n / 2)));
  for (let r = 0; r < runs; r += 1) {
    gc();
    const store = new tp.ProjectionStore();
    const t0 = now();
    store.applySessionList(task, all);
    fresh.push(now() - t0);
    store.free();
    gc();
    const held = new tp.ProjectionStore();
    held.applySessionList(task, all);
    gc();
    const t1 = now();
    held.applySessionList(task, older);
    merge.push(now() - t1);
    owner = held.sessionPendingAction('sess-0000000');
    held.free();
  }
  return {
    n,
    shown,
    owner,
    visibleTurnHistory: stats(visible),
    applySessionList: stats(fresh),
    applySessionListMerge: stats(merge),
  };
}
