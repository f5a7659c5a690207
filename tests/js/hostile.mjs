// The hostile-input catalogue (issue 11): kinds of bad value, the entry points with a valid base
// call each, and every position a value can take in them (each argument, and each field the
// engine reads, found by walking read.js's schemas). tests/js/hostile.test.mjs runs the product.
import { readCases } from './fixture.mjs';
import { decode } from './runner.mjs';
import * as S from '../../pkg/read.js';
import fs from 'node:fs';

const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;

// ---- kinds of bad value: [name, make] (fresh on each call: some are stateful) -------------------

function deep(depth, key) {
  let v = {};
  for (let i = 0; i < depth; i++) v = { [key]: v, id: `d${i}`, metadata: v };
  return v;
}

const BIG_STRING = 'x'.repeat(10_000_000);
const HUGE_ARRAY = Object.freeze(Array.from({ length: 1_000_000 }, (_, i) => (i % 2 ? null : i)));
const DEEP = deep(100_000, 'next');

export const KINDS = [
  ['undefined', () => undefined],
  ['null', () => null],
  ['true', () => true],
  ['false', () => false],
  ['zero', () => 0],
  ['negative zero', () => -0],
  ['negative', () => -1],
  ['fraction', () => 1.5],
  ['NaN', () => NaN],
  ['Infinity', () => Infinity],
  ['-Infinity', () => -Infinity],
  ['2^53', () => 2 ** 53],
  ['2^64', () => 2 ** 64],
  ['BigInt 0', () => 0n],
  ['BigInt -1', () => -1n],
  ['BigInt 2^64-1', () => 2n ** 64n - 1n],
  ['BigInt 2^64', () => 2n ** 64n],
  ['empty string', () => ''],
  ['short string', () => 'x'],
  ['lone high surrogate', () => 's-\uD800'],
  ['lone low surrogate', () => '\uDC00-s'],
  ['NUL string', () => '\u0000'],
  ['odd timestamp', () => '2026-13-45T99:99:99.9999999999Z'],
  ['not a timestamp', () => 'yesterday'],
  ['negative-year timestamp', () => '-000001-01-01T00:00:00Z'],
  ['Symbol', () => Symbol('s')],
  ['function', () => function f() {}],
  ['empty array', () => []],
  ['array of numbers', () => [1, 2, 3]],
  ['array of duplicate ids', () => Array.from({ length: 50 }, () => ({ id: 'dup', session_id: 'sess-1', started_at: at(1), created_at: at(1) }))],
  ['empty object', () => ({})],
  ['null-prototype object', () => Object.create(null)],
  ['frozen object', () => Object.freeze({ id: 'frozen', epoch: '1', sequence: 1 })],
  ['cyclic object', () => { const o = { id: 'cyc', epoch: '1', sequence: 1 }; o.self = o; o.metadata = o; o.pending_action_revision = o; return o; }],
  ['cyclic array', () => { const a = []; a.push(a, a); return a; }],
  ['throwing getters (Proxy)', () => new Proxy({}, { get() { throw new Error('get trap'); } })],
  ['throwing has/ownKeys (Proxy)', () => new Proxy({}, { has() { throw new Error('has'); }, ownKeys() { throw new Error('ownKeys'); }, getOwnPropertyDescriptor() { throw new Error('gopd'); } })],
  ['revoked Proxy', () => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; }],
  ['revoked array Proxy', () => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy; }],
  ['array with a throwing element', () => { const a = [{}, {}]; Object.defineProperty(a, 1, { get() { throw new Error('index getter'); } }); return a; }],
  ['array Proxy with a throwing length', () => new Proxy([], { get(t, k) { if (k === 'length') throw new Error('length'); return t[k]; } })],
  ['array Proxy with a huge length', () => new Proxy([], { get(t, k) { return k === 'length' ? 2 ** 32 - 1 : t[k]; } })],
  ['array Proxy with a NaN length', () => new Proxy([], { get(t, k) { return k === 'length' ? NaN : t[k]; } })],
  ['object with a throwing id getter', () => ({ get id() { throw new Error('id getter'); }, session_id: 'sess-1' })],
  ['getter that changes between reads', () => { let n = 0; return { get id() { n++; return n === 1 ? 'first' : { changed: n }; }, get epoch() { n++; return n % 2 ? '1' : 2; }, get sequence() { n++; return n % 2 ? 1 : 'x'; } }; }],
  ['__proto__ key', () => JSON.parse('{"__proto__": {"id": "polluted", "epoch": "1"}, "constructor": {"prototype": {"x": 1}}}')],
  ['constructor key', () => ({ constructor: 'x', id: 'c' })],
  ['class instance with a throwing prototype getter', () => new (class { get id() { throw new Error('proto getter'); } })()],
  ['Date', () => new Date(0)],
  ['RegExp', () => /x/],
  ['Map', () => new Map([['id', 'x']])],
  ['Uint8Array', () => new Uint8Array(4)],
  ['Promise', () => Promise.resolve([])],
  ['boxed String', () => new String('sess-1')],
  ['boxed Number', () => new Number(1)],
  ['object with throwing toString/valueOf', () => ({ toString() { throw new Error('toString'); }, valueOf() { throw new Error('valueOf'); } })],
  ['Error object', () => new Error('e')],
  // The heavy ones last: a store that accepted a 10 MB id makes every later digest slower.
  ['10 MB string', () => BIG_STRING],
  ['10^5-digit epoch', () => '9'.repeat(100_000)],
  ['10^6-element array', () => HUGE_ARRAY],
  ['10^5-deep nesting', () => DEEP],
];

// ---- entry points ---------------------------------------------------------------------------------

/** The first fixture call of `name` that does not throw: its args (decoded). */
function firstArgs(cases, name) {
  const c = cases.find((x) => x.call === name && !x.error);
  return c ? decode(c.args) : undefined;
}

const T = 'task-1';
const session = (id, state, action, seq) => ({
  id, task_id: T, state, started_at: at(0), updated_at: at(seq), is_primary: id === 'sess-1',
  pending_action: action, pending_action_revision: { epoch: '1', sequence: seq },
});
const turn = (id, s) => ({ id, session_id: 'sess-1', task_id: T, started_at: at(s), created_at: at(s), updated_at: at(s), completed_at: null, metadata: {} });
const message = (id, s) => ({
  id, session_id: 'sess-1', task_id: T, turn_id: 'turn-1', type: 'clarification_request',
  metadata: { pending_id: 'p-1', question_total: 1, status: 'pending' }, created_at: at(s), updated_at: at(s),
  pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 10 + s },
});
const summary = { revision: 3, pending_action: 'clarification', updated_at: at(2) };
const taskInput = { id: T, status_summary: summary, status_summary_invalidated: false, task_pending_action: 'clarification' };

/** A snapshot (`dehydrate()`) holding every kind of row: `ProjectionStore.hydrate`'s base call. */
const SNAPSHOT = {"format":"task-projection/snapshot","version":1,"epoch":"5","stream":"st-1","offset":10,"tasks":[{"id":"task-1","known":true,"summary":{"revision":3,"pending_action":"clarification","updated_at":"2026-11-29T12:00:02.000000000Z"},"legacy":null,"sessions":["sess-1","sess-2"]}],"sessions":[{"id":"sess-1","task":"task-1","listed":true,"state":"WAITING_FOR_INPUT","state_at":"2026-11-29T12:00:05Z","primary":true,"primary_at":"2026-11-29T12:00:05Z","action":"clarification","revision":{"epoch":"1","sequence":40},"turns":[["turn-1",false,"2026-11-29T12:00:01Z","2026-11-29T12:00:01Z","2026-11-29T12:00:01Z",0]],"early":[],"messages":[["m-1",0,1,0,"p-1",1,"2026-11-29T12:00:01Z",true]],"deleted":[["m-9","1",40]],"paged":true},{"id":"sess-2","task":"task-1","listed":true,"state":"RUNNING","state_at":"2026-11-29T12:00:04Z","primary":false,"primary_at":"2026-11-29T12:00:04Z","action":null,"revision":{"epoch":"1","sequence":4},"turns":null,"early":[["turn-7",false,"2026-11-29T12:00:07Z","2026-11-29T12:00:07Z",null,1]],"messages":[],"deleted":[],"paged":false}],"removed":{"tasks":["task-gone"],"sessions":[]},"rejected":[["session.updated","older_revision_rejected","task-1","sess-1",null,"1",2,"1",40]]};

/** Stand-ins for a fetch token and a selection ticket, made real per call (compared by identity). */
export const TOKEN = Object.freeze({ token: 'beginTaskFetch()' });
export const TICKET = Object.freeze({ ticket: 'beginSelection()' });
/** An inbox page of the reference server's shape (SPEC §14). */
const INBOX_PAGE = Object.freeze({
  bundles: [{ pending_id: 'p-1', task_id: 'task-1', session_id: 'sess-1', session_state: 'WAITING_FOR_INPUT', task_title: 'Task', created_at: at(1), context: '', messages: [] }],
  count: 1, hidden_count: 0, next_snooze_expiry: null, stream: 'st-1', offset: 5,
});

/** A stand-in for a respond's attempt (`respondStart('sess-1', 'p-1').attempt`), made real per call. */
export const ATTEMPT = Object.freeze({ attempt: 'respondStart()' });

/** A reply of the reference server (server/src/http/actions.rs): `respondReply`'s base call. */
const REPLY = {
  status: 200,
  body: {
    outcome: 'success', success: true, claimed: true, status: 'answered',
    response: { pending_id: 'p-1', answers: [], rejected: false },
    session: { id: 'sess-1', task_id: 'task-1', pending_action: null, pending_action_revision: { epoch: '1', sequence: 50 } },
    status_summary: { revision: 4, updated_at: at(9) },
  },
};

/** A trace of one input (docs/trace-format.md), `replayTrace`'s base call. */
const TRACE = [
  { format: 'task-projection-trace', version: 1, engine: '0.1.0', maxBytes: 4096, fresh: true, steps: 1, dropped: 0, droppedBytes: 0 },
  { step: 1, us: 0, call: 'applySessionList', args: [T, [session('sess-1', 'RUNNING', null, 1)]], reason: 'applied', answers: {} },
].map((line) => JSON.stringify(line)).join('\n');

/** The schema of a frame `{ type, payload, offset }` whose payload is read by `payload` (applyFrame). */
const frame = (payload) => ({
  t: 1, keys: ['type', 'payload', 'offset'], of: { type: S.LEAF, payload, offset: S.LEAF }, nodes: [S.LEAF, payload, S.LEAF],
});

/** `[name, args, schemas, kind]`: kind "fn" (stateless) or "store" (a ProjectionStore method); a
 * name's first word is the method (`applyFrame server.hello`: one entry per frame shape). */
export function entries() {
  const cases = readCases();
  const fn = (name, schemas) => [name, firstArgs(cases, name), schemas, 'fn'];
  return [
    fn('currentTurnId', [S.TURNS, S.LEAF]),
    fn('visibleTurnHistory', [S.TURNS]),
    fn('findPendingClarification', [S.MESSAGES, S.SCOPE]),
    fn('pendingClarificationBundle', [S.MESSAGES, S.SCOPE]),
    fn('visibleTranscriptMessages', [S.MESSAGES, S.SCOPE]),
    fn('hasPendingPermission', [S.MESSAGES]),
    fn('sessionPendingAction', [S.SESSION_INPUT]),
    fn('taskPendingAction', [S.SESSIONS]),
    fn('effectiveTaskPendingAction', [S.TASK]),
    fn('compareRevisions', [S.REVISION, S.REVISION]),
    fn('canReplaceRevision', [S.REVISION, S.REVISION]),
    fn('mergePendingProjection', [S.PROJECTION, S.PROJECTION]),
    fn('resolveTaskSessionId', [S.RESOLVE_INPUT]),
    fn('selectionOutcome', [S.SELECTION_INPUT]),
    fn('isNewerStatusSummary', [S.SUMMARY, S.SUMMARY]),
    fn('mergeFetchedStatusSummary', [S.FETCHED_INPUT]),
    fn('normalizeStartPolicy', [S.LEAF]),
    fn('normalizeEndPolicy', [S.LEAF]),
    ['boundedLoad', [Promise.resolve([]), 10], [S.LEAF, S.LEAF], 'async'],
    ['applySessionList', [T, [session('sess-1', 'WAITING_FOR_INPUT', 'clarification', 5), session('sess-2', 'RUNNING', null, 4)]], [S.LEAF, S.SESSIONS], 'store'],
    ['applyTurnList', ['sess-1', [turn('turn-1', 1), turn('turn-0', 0)]], [S.LEAF, S.TURNS], 'store'],
    ['applyMessagePage', ['sess-1', [message('m-1', 1), message('m-2', 2)]], [S.LEAF, S.MESSAGES], 'store'],
    ['applyMessageEvent', ['added', message('m-3', 3)], [S.LEAF, S.MESSAGE_EVENT], 'store'],
    ['applyMessageEvents', ['updated', [message('m-1', 4), message('m-4', 5)]], [S.LEAF, S.MESSAGE_EVENTS], 'store'],
    ['applyTurnEvent', [turn('turn-2', 6)], [S.TURN_EVENT], 'store'],
    ['applySessionEvent', [{ ...session('sess-1', 'WAITING_FOR_INPUT', 'clarification', 20), session_id: 'sess-1' }], [S.SESSION_EVENT], 'store'],
    ['applyStatusSummaryEvent', [{ task_id: T, workspace_id: 'ws', status_summary: summary }], [S.SUMMARY_EVENT], 'store'],
    ['applyTaskUpdated', [taskInput], [S.TASK_INPUT], 'store'],
    ['removeTask', ['task-gone'], [S.LEAF], 'store'],
    ['applyFrame session.message.added', [{ type: 'session.message.added', payload: message('m-5', 7) }], [frame(S.MESSAGE_EVENT)], 'store'],
    ['applyFrame session.created', [{ type: 'session.created', payload: session('sess-3', 'RUNNING', null, 6) }], [frame(S.SESSION_EVENT)], 'store'],
    ['applyFrame task.deleted', [{ type: 'task.deleted', payload: { task_id: 'task-gone' } }], [frame(S.TASK_DELETED)], 'store'],
    ['applyFrame session.deleted', [{ type: 'session.deleted', payload: { session_id: 'sess-2', task_id: T } }], [frame(S.SESSION_DELETED)], 'store'],
    ['applyFrame server.hello', [{ type: 'server.hello', payload: { epoch: '1', started_at: at(0) } }], [frame(S.HELLO)], 'store'],
    ['applyTaskSnapshot', [TOKEN, [taskInput]], [S.LEAF, S.TASK_INPUTS], 'store'],
    ['beginTaskFetch', [], [], 'store'],
    ['sessionPendingAction', ['sess-1'], [S.LEAF], 'store'],
    ['currentTurnId', ['sess-1'], [S.LEAF], 'store'],
    ['pendingClarification', ['sess-1'], [S.LEAF], 'store'],
    ['hiddenMessageIds', ['sess-1'], [S.LEAF], 'store'],
    ['hasPendingPermission', ['sess-1'], [S.LEAF], 'store'],
    ['taskPendingAction', [T], [S.LEAF], 'store'],
    ['taskStatusSummary', [T], [S.LEAF], 'store'],
    ['pendingOwner', [T, 'sess-2'], [S.LEAF, S.LEAF], 'store'],
    ['explain', ['sess-1'], [S.LEAF], 'store'],
    ['explainOwner', [T, 'sess-2'], [S.LEAF, S.LEAF], 'store'],
    ['beginSelection', [T, { preferredSessionId: 'sess-2' }], [S.LEAF, S.SELECTION_OPTIONS], 'store'],
    ['setActiveTask', [T], [S.LEAF], 'store'],
    ['settleSelection', [TICKET, { sessions: [session('sess-1', 'WAITING_FOR_INPUT', 'clarification', 30)] }], [S.LEAF, S.SETTLE_OUTCOME], 'store'],
    ['respondStart', ['sess-1', 'p-1'], [S.LEAF, S.LEAF], 'store'],
    ['respondReply', [ATTEMPT, REPLY], [S.LEAF, S.RESPOND_REPLY], 'store'],
    ['respondReply network', [ATTEMPT, { error: 'network' }], [S.LEAF, S.RESPOND_REPLY], 'store'],
    ['respondState', ['sess-1', 'p-1'], [S.LEAF, S.LEAF], 'store'],
    ['respondStart permission', ['sess-1', 'p-1', 'permission'], [S.LEAF, S.LEAF, S.LEAF], 'store'],
    ['pendingPermission', ['sess-1'], [S.LEAF], 'store'],
    ['offeredActions', ['sess-1'], [S.LEAF], 'store'],
    ['sessionAfterDelete', [T, 'sess-1', 'sess-2'], [S.LEAF, S.LEAF, S.LEAF], 'store'],
    ['removeSession', ['sess-2'], [S.LEAF], 'store'],
    ['startRecording', [{ maxBytes: 4096 }], [S.RECORDING_OPTIONS], 'store'],
    ['stopRecording', [], [], 'store'],
    ['replayTrace', [TRACE], [S.LEAF], 'fn'],
    ['subscribe', [() => {}], [S.LEAF], 'store'],
    ['lastReason', [], [], 'store'],
    ['version', [], [], 'store'],
    ['digest', [], [], 'store'],
    ['stats', [], [], 'store'],
    ['hydrate', [SNAPSHOT, { restored: true }], [S.SNAPSHOT, S.HYDRATE_OPTIONS], 'fn'],
    ['dehydrate', [{ tasks: [T], sessions: ['sess-2'] }], [S.DEHYDRATE_OPTIONS], 'store'],
    ['merge', [SNAPSHOT], [S.SNAPSHOT], 'store'],
    ['applyStreamPosition', [{ stream: 'st-1', offset: 12 }], [S.POSITION], 'store'],
    ['streamPosition', [], [], 'store'],
    ['restored', [], [], 'store'],
    ['applyInboxPage', ['ws-1', INBOX_PAGE, { stream: 'st-1', offset: 3 }], [S.LEAF, S.INBOX_PAGE, S.POSITION], 'store'],
    ['applyInboxSeed', [{ workspaceId: 'ws-1', count: 2, hasMore: false, nextSnoozeExpiry: null }], [S.INBOX_SEED], 'store'],
    ['inboxReadFailed', ['ws-1', { stream: 'st-1', offset: 9 }], [S.LEAF, S.POSITION], 'store'],
    ['inbox', ['ws-1', at(9)], [S.LEAF, S.LEAF], 'store'],
  ];
}

/** A store with task-1's two sessions, turns and a pending question (the base state). */
export function seeded(ProjectionStore) {
  const store = new ProjectionStore();
  store.applySessionList(T, [session('sess-1', 'WAITING_FOR_INPUT', 'clarification', 5), session('sess-2', 'RUNNING', null, 4)]);
  store.applyTurnList('sess-1', [turn('turn-1', 1)]);
  store.applyMessagePage('sess-1', [message('m-1', 1)]);
  store.applyStatusSummaryEvent({ task_id: T, status_summary: summary });
  return store;
}

// ---- positions ----------------------------------------------------------------------------------

/**
 * Every position of one argument by its schema: `[]` (the argument itself) and the path of each
 * field the engine reads (into an array: its element 0), and of a field it does not read in a
 * status summary it holds (`extra`).
 */
function positionsOf(node, prefix, out) {
  out.push(prefix);
  if (node === S.LEAF || node === undefined) return out;
  if (node.t === 2) return positionsOf(node.of, prefix.concat([0]), out);
  // A summary the store holds: a field the engine does not read is held too.
  if (node.t === S.KEPT) out.push(prefix.concat(['extra']));
  for (const k of node.keys) positionsOf(node.of[k], prefix.concat([k]), out);
  return out;
}

/** A copy of `value` (plain data) with the value at `path` replaced by `bad`. */
export function replaced(value, path, bad) {
  if (path.length === 0) return bad;
  const [head, ...rest] = path;
  let copy;
  if (Array.isArray(value)) copy = value.length > 0 ? value.slice() : [{}];
  else if (value !== null && typeof value === 'object' && !(value instanceof Promise)) copy = { ...value };
  else copy = typeof head === 'number' ? [{}] : {};
  copy[head] = replaced(copy[head], rest, bad);
  return copy;
}

/** `[argIndex, path]` for every position of an entry. */
export function positions(schemas) {
  const out = [];
  schemas.forEach((node, i) => {
    for (const path of positionsOf(node, [], [])) out.push([i, path]);
  });
  return out;
}

export const pathText = (i, path) => `arg${i}${path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}`;

export const acceptancesUrl = new URL('../fixtures/hostile_acceptances.json', import.meta.url);
export const readAcceptances = () => (fs.existsSync(acceptancesUrl) ? JSON.parse(fs.readFileSync(acceptancesUrl, 'utf8')) : null);
