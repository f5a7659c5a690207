// The differential workload of tests/js/fallback.test.mjs: deterministic random inputs for every
// pure function and random ProjectionStore event sequences (with malformed inputs among them), run
// against one build of the package; every result, thrown error, query answer and store digest is
// serialized to a string. Two builds agree when their lists are equal.
//
// As a script (the child processes, where WebAssembly is missing): runs the workload and the
// scenario files against `task-projection/fallback` and writes JSON to the file named by argv[2]:
//   node [--jitless | --import <delete WebAssembly>] tests/js/fallback-diff.mjs <out.json> <seed> <pure> <sequences>
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { stateOf } from './build.mjs';

function generator(seed) {
  let s = seed >>> 0 || 1;
  const rnd = () => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  const int = (n) => Math.floor(rnd() * n);
  const pick = (a) => a[int(a.length)];
  const chance = (p) => rnd() < p;
  return { rnd, int, pick, chance };
}

const TASKS = ['T1', 'T2'];
const SESSIONS = ['s1', 's2', 's3'];
const STATES = ['RUNNING', 'WAITING_FOR_INPUT', 'IDLE', 'COMPLETED', 'FAILED', 'CREATED', 'weird', undefined, null];
const TYPES = ['clarification_request', 'clarification_request', 'permission_request', 'message', 'tool_call', undefined];
const STATUSES = ['pending', 'pending', 'answered', '', 'approved', 'rejected', undefined, null];
const ACTIONS = ['clarification', 'permission', null, undefined];

function makeGen(g) {
  const { rnd, int, pick, chance } = g;
  const ts = () => (chance(0.05) ? pick([null, 'not a date', '2026-11-29T12:00:00Z']) : `2026-11-29T12:${String(int(6)).padStart(2, '0')}:${String(int(60)).padStart(2, '0')}.${String(int(1e9)).padStart(9, '0')}Z`);
  const epoch = () => (chance(0.04) ? pick(['', '1a', '-3', ' 7']) : chance(0.1) ? `${int(9) + 1}${'0'.repeat(int(25))}${int(10)}` : String(int(4) + 7));
  const sequence = () => (chance(0.05) ? pick([-1, 1.5, '3', 2 ** 53 + 2]) : chance(0.1) ? BigInt(int(1000)) : int(6));
  const revision = () => (chance(0.05) ? pick([null, 'r1', 7, { epoch: 7, sequence: 1 }]) : { epoch: epoch(), sequence: sequence() });
  const action = () => (chance(0.03) ? pick(['unknown_action', 5]) : pick(ACTIONS));
  const flag = () => pick([true, false, 1, 0, 'true', '1', 'yes', null, undefined]);
  const turn = (sid, i) => {
    const t = { id: `t${i}`, session_id: sid, task_id: pick(TASKS), started_at: ts(), created_at: ts(), updated_at: ts(), completed_at: chance(0.5) ? ts() : null };
    if (chance(0.6)) t.metadata = { lifecycle_only: chance(0.2) ? flag() : undefined, prompt_dispatch_pending: chance(0.2) ? flag() : undefined, prompt_dispatch_attempted: chance(0.2) ? flag() : undefined };
    if (chance(0.02)) t.id = pick([7, null]);
    return t;
  };
  const message = (sid, i, ws) => {
    const metadata = {};
    const status = pick(STATUSES);
    if (status !== undefined) metadata.status = status;
    if (chance(0.7)) metadata.pending_id = pick(['p1', 'p2', 'p3']);
    if (chance(0.6)) metadata.question_total = pick([1, 2, 3, 0, 2.5, '2']);
    const m = { session_id: sid, task_id: pick(TASKS), type: pick(TYPES), metadata, created_at: ts(), updated_at: ts(), content: `content ${i} ✓` };
    m[ws ? 'message_id' : 'id'] = `m${i}`;
    if (chance(0.8)) m.turn_id = `t${int(4)}`;
    if (chance(0.04)) m.metadata = pick([null, 'meta', []]);
    if (chance(0.02)) m.created_at = 12345;
    if (chance(0.02)) m[ws ? 'message_id' : 'id'] = 42;
    return m;
  };
  const session = (tid, id) => {
    const s = { id, task_id: tid, state: pick(STATES), started_at: ts(), updated_at: ts(), completed_at: chance(0.2) ? ts() : null, is_primary: flag() };
    if (chance(0.7)) {
      s.pending_action = action();
      s.pending_action_revision = revision();
    }
    if (chance(0.02)) s.state = 3;
    return s;
  };
  const summary = () => (chance(0.1) ? null : { revision: chance(0.05) ? pick([-1, 'x', 1.5]) : int(6), updated_at: ts(), pending_action: action() });
  const task = (id) => {
    const t = { id };
    if (chance(0.7)) t.status_summary = summary();
    if (chance(0.3)) t.status_summary_invalidated = flag();
    if (chance(0.5)) t.task_pending_action = action();
    if (chance(0.5)) t.primary_session_pending_action = action();
    return t;
  };
  const list = (n, f) => Array.from({ length: int(n) }, (_, i) => f(i));
  const scope = () => pick([undefined, {}, { currentTurnId: pick([`t${int(4)}`, null, undefined]), pendingAction: pick(ACTIONS) }, { currentTurnId: `t${int(4)}` }]);
  return { ts, epoch, sequence, revision, action, flag, turn, message, session, summary, task, list, scope, g };
}

/** One random pure-function call: [name, args]. */
function pureCall(G) {
  const { pick, int, chance } = G.g;
  const sid = pick(SESSIONS);
  const turns = () => G.list(5, (i) => G.turn(sid, i));
  const messages = () => G.list(9, (i) => G.message(sid, i, chance(0.3)));
  const sessions = () => G.list(4, (i) => G.session('T1', `s${i}`));
  switch (int(18)) {
    case 0: return ['currentTurnId', chance(0.1) ? [pick([undefined, null, 'x'])] : [turns(), pick(STATES)]];
    case 1: return ['visibleTurnHistory', [turns()]];
    case 2: return ['findPendingClarification', [messages(), G.scope()]];
    case 3: return ['pendingClarificationBundle', [messages(), G.scope()]];
    case 4: return ['visibleTranscriptMessages', [messages(), G.scope()]];
    case 5: return ['hasPendingPermission', [messages()]];
    case 6: return ['sessionPendingAction', [{ session: G.session('T1', sid), turns: chance(0.8) ? turns() : undefined, messages: messages() }]];
    case 7: return ['taskPendingAction', [sessions()]];
    case 8: return ['effectiveTaskPendingAction', [G.task('T1')]];
    case 9: return ['compareRevisions', [G.revision(), G.revision()]];
    case 10: return ['canReplaceRevision', [chance(0.2) ? undefined : G.revision(), G.revision()]];
    case 11: return ['mergePendingProjection', [{ pending_action: G.action(), pending_action_revision: G.revision() }, chance(0.2) ? {} : { pending_action: G.action(), pending_action_revision: G.revision() }]];
    case 12: return ['resolveTaskSessionId', [{ task: G.task('T1'), sessions: sessions(), preferredSessionId: pick([undefined, null, 's1', 's2', 'zz']) }]];
    case 13: return ['selectionOutcome', [{ taskAtStart: G.task('T1'), taskNow: chance(0.8) ? G.task('T1') : null, sessions: chance(0.8) ? sessions() : undefined, loadFailed: chance(0.2), aborted: chance(0.1), superseded: chance(0.1), activeTaskChanged: chance(0.1), preferredSessionId: pick([undefined, 's1', 's0']) }]];
    case 14: return ['isNewerStatusSummary', [G.summary(), G.summary()]];
    case 15: return ['mergeFetchedStatusSummary', [{ held: G.summary(), taskPresentAtFetchStart: chance(0.5), fetchStartRevision: pick([undefined, null, int(5)]), response: G.task('T1') }]];
    case 16: return ['normalizeStartPolicy', [pick([' new ', 'reuse', 'NEW', '', null, undefined, 3, 'other'])]];
    default: return ['normalizeEndPolicy', [pick([' park ', 'complete', 'PARK', '', null, undefined, 3, 'other'])]];
  }
}

/** One random store operation: [method, args] (a selection's ticket is filled in at run time). */
function storeOp(G, tokens) {
  const { pick, int, chance } = G.g;
  const sid = pick(SESSIONS);
  const tid = pick(TASKS);
  switch (int(14)) {
    case 0: return ['applySessionList', [tid, G.list(4, (i) => G.session(tid, `s${i + 1}`))]];
    case 1: return ['applyTurnList', [sid, G.list(5, (i) => G.turn(sid, i))]];
    case 2: return ['applyMessagePage', [sid, G.list(8, (i) => G.message(sid, i, false))]];
    case 3:
    case 4:
    case 5: {
      const m = G.message(sid, int(10), true);
      if (chance(0.6)) {
        m.pending_action = G.action();
        m.pending_action_revision = G.revision();
      }
      return ['applyMessageEvent', [chance(0.03) ? pick(['bogus', 7]) : pick(['added', 'added', 'updated', 'deleted']), m]];
    }
    case 6: return ['applyMessageEvents', [pick(['added', 'updated', 'deleted']), G.list(4, () => G.message(sid, int(10), true))]];
    case 7: return ['applyTurnEvent', [G.turn(sid, int(4))]];
    case 8: return ['applySessionEvent', [{ ...G.session(tid, sid), ...(chance(0.5) ? { session_id: sid } : {}) }]];
    case 9: return ['applyStatusSummaryEvent', [{ task_id: tid, status_summary: G.summary() }]];
    case 10: return ['applyTaskUpdated', [G.task(tid)]];
    case 11: return chance(0.3) ? ['removeTask', [tid]] : ['setActiveTask', [pick([tid, null])]];
    case 12: {
      if (tokens.length === 0 || chance(0.5)) return ['beginTaskFetch', []];
      return ['applyTaskSnapshot', [pick(tokens), G.list(3, (i) => G.task(`T${i + 1}`))]];
    }
    default:
      return chance(0.5)
        ? ['beginSelection', [tid, { preferredSessionId: pick([undefined, null, sid]) }]]
        : ['settleSelection', ['$ticket', pick([{ sessions: G.list(3, (i) => G.session(tid, `s${i + 1}`)) }, { error: 'boom' }, { error: 'timeout', timedOut: true }])]];
  }
}

/** A canonical string for any result (undefined, bigint, errors, nested objects). */
export function serialize(v) {
  return JSON.stringify(v, (_k, x) => {
    if (x === undefined) return { $undefined: true };
    if (typeof x === 'bigint') return { $bigint: String(x) };
    if (x instanceof Error) return { $error: x.name, code: x.code, field: x.field, message: x.message };
    return x;
  });
}

function call(fn, self, args) {
  try {
    return serialize({ ok: fn.apply(self, args) });
  } catch (e) {
    return serialize({ threw: e instanceof Error ? e : String(e) });
  }
}

/**
 * Runs the workload against `api` (a module namespace of the package): `pure` random pure calls
 * and `sequences` random store sequences of 6-20 operations, each followed by every query.
 * Returns { out: string[], ms, storeOps, pureCalls }.
 */
export function runWorkload(api, { seed = 20261129, pure = 2000, sequences = 200 } = {}) {
  const G = makeGen(generator(seed));
  const out = [];
  const t0 = performance.now();
  for (let i = 0; i < pure; i++) {
    const [name, args] = pureCall(G);
    out.push(`${name} ${call(api[name], undefined, args)}`);
  }
  let storeOps = 0;
  for (let n = 0; n < sequences; n++) {
    const store = new api.ProjectionStore();
    const tokens = [];
    let ticket = 'none';
    for (let i = 0, steps = 6 + G.g.int(15); i < steps; i++) {
      const [method, args] = storeOp(G, tokens);
      if (args[0] === '$ticket') args[0] = ticket;
      let result;
      try {
        result = { ok: store[method](...args) };
        if (method === 'beginTaskFetch') tokens.push(result.ok);
        if (method === 'beginSelection') {
          ticket = result.ok.ticket;
          result = { ok: { reload: result.ok.reload, ticket: typeof result.ok.ticket } };
        }
      } catch (e) {
        result = { threw: e instanceof Error ? e : String(e) };
      }
      storeOps++;
      const answers = { version: store.version(), reason: store.lastReason(), digest: stateOf(store, { byValue: true }) };
      for (const s of SESSIONS) {
        answers[s] = [store.sessionPendingAction(s), store.currentTurnId(s), store.pendingClarification(s), store.hiddenMessageIds(s), store.hasPendingPermission(s)];
      }
      for (const t of TASKS) answers[t] = [store.taskPendingAction(t), store.taskStatusSummary(t), store.pendingOwner(t), store.pendingOwner(t, 's2')];
      out.push(`${n}.${i} ${method} ${serialize(result)} ${serialize(answers)}`);
    }
    store.dispose();
    store.free();
  }
  return { out, ms: performance.now() - t0, storeOps, pureCalls: pure };
}

// ---- child process mode -----------------------------------------------------------------------
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [outFile, seed, pure, sequences] = process.argv.slice(2);
  const webAssembly = typeof WebAssembly;
  // The store's module and the rules' module, each in its pure-JS build.
  const api = { ...(await import('task-projection/fallback')), ...(await import('task-projection/rules/fallback')) };
  const { loadCases, runAll } = await import('./runner.mjs');
  const { loadStoreCases, runAllStoreCases } = await import('./store-runner.mjs');
  const scenarios = runAll(api, loadCases(JSON.parse(readFileSync(new URL('../fixtures/scenarios.json', import.meta.url), 'utf8'))));
  const storeScenarios = runAllStoreCases(api.ProjectionStore, loadStoreCases(JSON.parse(readFileSync(new URL('../fixtures/store_scenarios.json', import.meta.url), 'utf8'))));
  const workload = runWorkload(api, { seed: Number(seed), pure: Number(pure), sequences: Number(sequences) });
  writeFileSync(outFile, JSON.stringify({ webAssembly, scenarios, storeScenarios, workload }));
}
