// Traces (docs/trace-format.md) through the built package. The recorder is JS (js/trace.js),
// the native one (src/trace.rs) the reference: over every store scenario both must write the same
// lines (but the time), each side's traces replay on the other with the recorded answers, and a
// store behaves the same while it records. Also: a recording replays in Node (replayTrace) and
// natively (task-projection-replay --json) identically; no message content is recorded; bad
// options are typed errors that change nothing; the ring holds maxBytes in UTF-8 bytes. The
// recorder is opt-in (`import 'task-projection/trace'`): before that import `startRecording()` is
// a typed error that changes nothing (fresh processes), after it every entry's store records.
// TRACE_FIXTURE_UPDATE=1 rewrites the committed Node trace (tests/fixtures/traces/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// Recording is a development feature: the development build, whatever the conditions; the
// production builds refuse it (`development_only`).
import { ProjectionStore } from 'task-projection/development';
import { ProjectionStore as ProductionStore } from 'task-projection';
import { ProjectionStore as FallbackStore } from 'task-projection/fallback';
import { replayTrace } from 'task-projection/trace';
import { stateOf } from './build.mjs';
// The test hooks of the development build's store.js.
const { __testing } = await import(new URL('../../pkg/development/store.js', import.meta.url));
import { decode } from './runner.mjs';
import { loadStoreCases, runStoreCase } from './store-runner.mjs';

const root = new URL('../../', import.meta.url).pathname;
const at = (s) => `2026-11-29T12:00:${String(s).padStart(2, '0')}.000000000Z`;
const session = (id, state, action, seq) => ({
  id, task_id: 'task-1', state, is_primary: id === 'sess-1', started_at: at(0), updated_at: at(seq),
  pending_action: action, pending_action_revision: { epoch: '1', sequence: seq }, title: 'SECRET-TITLE',
});
const message = (id, type, seq, extra = {}) => ({
  id, session_id: 'sess-1', task_id: 'task-1', turn_id: 'turn-1', type, content: 'SECRET-CONTENT',
  metadata: { pending_id: 'p-1', question_total: 2, status: 'pending', questions: ['SECRET-Q'] },
  created_at: at(seq), updated_at: at(seq), pending_action: 'clarification',
  pending_action_revision: { epoch: '1', sequence: seq }, ...extra,
});

/** Drives a store through every kind of input (fast-path messages included). */
function drive(store) {
  store.applySessionList('task-1', [session('sess-1', 'WAITING_FOR_INPUT', 'clarification', 5), session('sess-2', 'RUNNING', null, 4)]);
  store.applyTurnList('sess-1', [{ id: 'turn-1', session_id: 'sess-1', started_at: at(1), created_at: at(1), completed_at: null }]);
  store.applyMessagePage('sess-1', [message('m-1', 'clarification_request', 6)]);
  store.applyMessageEvent('added', message('m-2', 'clarification_request', 7));
  store.applyMessageEvents('updated', [message('m-2', 'clarification_request', 8, { metadata: { pending_id: 'p-1', question_total: 2, status: 'answered' } })]);
  store.applyTurnEvent({ id: 'turn-2', session_id: 'sess-1', task_id: 'task-1', started_at: at(9), created_at: at(9), completed_at: null });
  store.applySessionEvent({ ...session('sess-2', 'WAITING_FOR_INPUT', 'permission', 10) });
  const token = store.beginTaskFetch();
  store.applyTaskSnapshot(token, [{ id: 'task-1', status_summary: { revision: 2, pending_action: 'permission', text: 'SECRET-SUMMARY' }, task_pending_action: 'permission' }]);
  store.applyStatusSummaryEvent({ task_id: 'task-1', status_summary: { revision: 3, pending_action: 'clarification', text: 'SECRET-SUMMARY' } });
  store.applyTaskUpdated({ id: 'task-2', task_pending_action: null });
  const { ticket } = store.beginSelection('task-1', { preferredSessionId: 'sess-2' });
  store.setActiveTask('task-1');
  store.settleSelection(ticket, { sessions: [session('sess-1', 'WAITING_FOR_INPUT', 'clarification', 11)] });
  store.applyFrame({ type: 'server.hello', payload: { epoch: '3', started_at: at(0) } });
  store.removeTask('task-2');
}

function record() {
  const store = new ProjectionStore();
  store.startRecording({ maxBytes: 1 << 20 });
  drive(store);
  const trace = store.stopRecording();
  store.free();
  return trace;
}

test('a recording replays in Node with the recorded answers, and records no content', () => {
  const trace = record();
  assert.equal(trace.split('\n').filter(Boolean).length, 1 + 16, 'a header and one line per input');
  assert.ok(!trace.includes('SECRET'), trace);
  const replay = replayTrace(trace);
  assert.equal(replay.complete, true);
  assert.equal(replay.steps.length, 16);
  assert.ok(replay.same, JSON.stringify(replay.steps.filter((s) => !s.same), null, 1));
  assert.ok(replay.steps.filter((s) => Object.keys(s.answers).length > 0).length >= 8);
  // A tampered answer is a difference.
  const tampered = trace.replace('"pendingAction":"clarification"', '"pendingAction":null');
  assert.notEqual(tampered, trace);
  assert.equal(replayTrace(tampered).same, false);
});

test('Node and the native replay give identical answers', () => {
  const trace = record();
  execFileSync('cargo', ['build', '--quiet', '--bin', 'task-projection-replay'], { cwd: root, stdio: 'inherit' });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trace-')), 'trace.ndjson');
  fs.writeFileSync(file, trace);
  const native = execFileSync(path.join(root, 'target/debug/task-projection-replay'), ['--check', '--json', file], { encoding: 'utf8' })
    .split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const node = replayTrace(trace).steps;
  assert.equal(native.length, node.length);
  native.forEach((n, i) => {
    assert.equal(n.call, node[i].call);
    assert.deepEqual(n.answers, node[i].answers, `step ${n.step} (${n.call})`);
    assert.equal(n.reason, node[i].reason, `step ${n.step} (${n.call})`);
    assert.equal(n.same, true);
  });
});

test('bad options are typed errors that change nothing; the ring holds maxBytes', () => {
  const store = new ProjectionStore();
  drive(store);
  const digest = stateOf(store);
  for (const [options, code] of [[{ maxBytes: 0 }, 'invalid_value'], [{ maxBytes: 1.5 }, 'invalid_value'],
    [{ maxBytes: 2 ** 40 }, 'invalid_value'], [{ maxBytes: '4096' }, 'invalid_type'], [7, 'invalid_type']]) {
    assert.throws(() => store.startRecording(options), (e) => e.code === code && e.field.startsWith('options'), JSON.stringify(options));
  }
  assert.equal(stateOf(store), digest, 'a refused startRecording changes nothing');
  assert.equal(store.stopRecording(), null, 'no recording was started');
  store.startRecording({ maxBytes: 1024 });
  assert.throws(() => store.startRecording(), (e) => e.code === 'invalid_value' && e.field === 'this');
  for (let i = 0; i < 20; i++) drive(store);
  const trace = store.stopRecording();
  assert.ok(Buffer.byteLength(trace) <= 1024, `${Buffer.byteLength(trace)} bytes`);
  const header = JSON.parse(trace.split('\n')[0]);
  assert.equal(header.fresh, false);
  assert.ok(header.dropped > 0);
  assert.equal(replayTrace(trace).complete, false);
  assert.throws(() => replayTrace('{"format":"x"}\n'), (e) => e.code === 'invalid_value' && /line 1/.test(e.message));
  assert.throws(() => replayTrace(`${trace.split('\n')[0]}\n{bad`), (e) => e.code === 'invalid_value' && /line 2/.test(e.message));
  store.free();
});

// ---- opt-in: task-projection/trace -----------------------------------------------------------

/** `source` run as an ES module in a fresh Node process from tests/js (where `task-projection`
 * resolves to pkg/); its stdout as JSON. */
function fresh(source) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: new URL('.', import.meta.url).pathname, encoding: 'utf8' });
  assert.equal(r.status, 0, `child process failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

test("before import 'task-projection/trace', startRecording is recording_unavailable and changes nothing", () => {
  const out = fresh(`
    import { ProjectionStore } from 'task-projection/development';
    import { ProjectionStore as ProductionStore } from 'task-projection';
    import { ProjectionStore as FallbackStore } from 'task-projection/fallback';
    const session = { id: 'sess-1', task_id: 'task-1', state: 'WAITING_FOR_INPUT', updated_at: '2026-11-29T12:00:01Z',
      pending_action: 'clarification', pending_action_revision: { epoch: '1', sequence: 1 } };
    const turns = [{ id: 'turn-1', started_at: '2026-11-29T12:00:00Z' }];
    const out = {};
    const stores = {};
    const state = (store) => JSON.stringify(store.dehydrate());
    for (const [name, Store] of [['development', ProjectionStore], ['production', ProductionStore], ['fallback', FallbackStore]]) {
      const store = new Store();
      stores[name] = store;
      store.applySessionList('task-1', [session]);
      // (No query: a query sets a reason of its own; dehydrate runs none.)
      const snap = () => [store.lastReason(), state(store), store.version()];
      const before = snap();
      let reads = 0;
      const options = { get maxBytes() { reads += 1; return 4096; } };
      const errors = [options, undefined, 7].map((o) => {
        try { store.startRecording(o); return null; } catch (e) { return { name: e.name, code: e.code, field: e.field, message: e.message }; }
      });
      const after = snap();
      // Inputs after the refused calls are not recorded, and end where a twin's end.
      store.applyTurnList('sess-1', turns);
      const twin = new Store();
      twin.applySessionList('task-1', [session]);
      twin.applyTurnList('sess-1', turns);
      out[name] = { errors, reads, before, after, stopped: store.stopRecording(), asTwin: state(store) === state(twin) };
    }
    // Installed later, the recorder serves the development store made before; the production
    // builds still refuse, options unread.
    await import('task-projection/trace');
    for (const name of ['development', 'production', 'fallback']) {
      let reads = 0;
      try {
        stores[name].startRecording({ get maxBytes() { reads += 1; return 4096; } });
        stores[name].setActiveTask('task-1');
        out[name].lines = stores[name].stopRecording().trim().split('\\n').map((l) => JSON.parse(l).call ?? 'header');
      } catch (e) {
        out[name].later = { code: e.code, field: e.field, reads };
      }
    }
    console.log(JSON.stringify(out));
  `);
  for (const name of ['development', 'production', 'fallback']) {
    const o = out[name];
    const code = name === 'development' ? 'recording_unavailable' : 'development_only';
    assert.equal(o.errors.length, 3);
    for (const e of o.errors) {
      assert.deepEqual([e?.name, e?.code, e?.field], ['TaskProjectionError', code, 'this'], name);
      assert.match(e.message, name === 'development' ? /import 'task-projection\/trace'/ : /"development" export condition/, name);
    }
    assert.equal(o.reads, 0, `${name}: the options are not read`);
    assert.deepEqual(o.after, o.before, `${name}: reason, state and version unchanged`);
    assert.equal(o.before[0], 'applied');
    assert.equal(o.stopped, null, `${name}: no recording was started`);
    assert.ok(o.asTwin, `${name}: the store ends as one never asked to record`);
    if (name === 'development') assert.deepEqual(o.lines, ['header', 'setActiveTask'], `${name}: records once the recorder is imported`);
    else assert.deepEqual(o.later, { code: 'development_only', field: 'this', reads: 0 }, `${name}: still refuses once the recorder is imported`);
  }
});

test("replayTrace needs only 'task-projection/trace' in Node (its node condition instantiates the wasm)", () => {
  const file = new URL('../fixtures/traces/task-removal-is-final.ndjson', import.meta.url).pathname;
  const out = fresh(`
    import fs from 'node:fs';
    import { replayTrace } from 'task-projection/trace';
    const r = replayTrace(fs.readFileSync(${JSON.stringify(file)}, 'utf8'));
    console.log(JSON.stringify({ complete: r.complete, same: r.same, steps: r.steps.length }));
  `);
  assert.deepEqual({ complete: out.complete, same: out.same }, { complete: true, same: true });
  assert.ok(out.steps > 5, `${out.steps} steps`);
});

test('production stores (default and fallback) driven as a recording was give the development store\'s answers', () => {
  for (const Store of [ProductionStore, FallbackStore]) {
    const store = new Store();
    drive(store);
    const development = new ProjectionStore();
    drive(development);
    for (const q of ['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission']) {
      for (const id of ['sess-1', 'sess-2']) assert.deepEqual(store[q](id), development[q](id), `${q}(${id})`);
    }
    for (const q of ['taskPendingAction', 'pendingOwner']) assert.deepEqual(store[q]('task-1'), development[q]('task-1'), `${q}(task-1)`);
    store.free();
    development.free();
  }
});

// ---- the JS recorder against the native one, over every store scenario ------------------------

const cases = loadStoreCases(JSON.parse(fs.readFileSync(new URL('../fixtures/store_scenarios.json', import.meta.url), 'utf8')));
const INPUTS = new Set([
  'applySessionList', 'applyTurnList', 'applyMessagePage', 'applyMessageEvent', 'applyMessageEvents', 'applyTurnEvent',
  'applySessionEvent', 'applyStatusSummaryEvent', 'applyTaskUpdated', 'removeTask', 'applyTaskSnapshot', 'beginTaskFetch',
  'beginSelection', 'settleSelection', 'setActiveTask',
]);

/** `{"$saved": name}` replaced by the saved value. */
function resolve(v, saved) {
  if (Array.isArray(v)) return v.map((x) => resolve(x, saved));
  if (v !== null && typeof v === 'object') {
    if (Object.keys(v).length === 1 && typeof v.$saved === 'string') return saved.get(v.$saved);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x, saved)]));
  }
  return v;
}

/**
 * Records case `c`'s inputs in Node as tests/trace_replay.rs `record_case_with` does natively: a
 * trace from a fresh store at the start and after each `renew`; `dispose` ends one, and what
 * follows it until `renew` is not recorded. `make` makes the store.
 */
function recordCase(c, make = () => new ProjectionStore()) {
  const traces = [];
  let store = make();
  store.startRecording({ maxBytes: 1 << 24 });
  let disposed = false;
  const saved = new Map();
  for (const [n, s] of c.steps.entries()) {
    if (s.call === 'dispose' || s.call === 'renew') {
      if (!disposed) traces.push(store.stopRecording());
      store.free();
      disposed = s.call === 'dispose';
      store = make();
      store.startRecording({ maxBytes: 1 << 24 });
      continue;
    }
    if (disposed || !INPUTS.has(s.call)) continue;
    let result;
    try {
      result = store[s.call](...decode(resolve(s.args ?? [], saved)));
    } catch (error) {
      assert.ok(s.error, `${c.name}: step ${n} (${s.call}) threw ${error.message}`);
      continue;
    }
    if (s.save !== undefined) saved.set(s.save, s.call === 'beginSelection' ? result.ticket : result);
  }
  if (!disposed) traces.push(store.stopRecording());
  store.free();
  return traces;
}

/** A trace's lines with the time left out and each selection's ticket named by its order. */
function comparable(trace) {
  const tickets = new Map();
  return trace.split('\n').filter(Boolean).map((text) => {
    const line = JSON.parse(text);
    delete line.us;
    if (typeof line.ticket === 'string') {
      tickets.set(line.ticket, `ticket-${tickets.size + 1}`);
      line.ticket = tickets.get(line.ticket);
    }
    if (line.call === 'settleSelection' && tickets.has(line.args[0])) line.args[0] = tickets.get(line.args[0]);
    return JSON.stringify(line);
  });
}

let nativeTraces;
/** The native traces of every case (tests/trace_replay.rs, run for this). */
function native() {
  if (nativeTraces === undefined) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trace-cross-')), 'native.json');
    execFileSync('cargo', ['test', '--quiet', '--test', 'trace_replay', '--', '--ignored', '--exact',
      'native_traces_of_every_store_scenario_for_the_js_cross_check'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, TRACE_CROSS_OUT: file } });
    nativeTraces = JSON.parse(fs.readFileSync(file, 'utf8'));
  }
  return nativeTraces;
}

test('over every store scenario the JS recorder writes the native recorder\'s lines (the time aside)', () => {
  const nat = native();
  let lines = 0;
  let answered = 0;
  for (const c of cases) {
    const node = recordCase(c);
    assert.equal(node.length, nat[c.name].length, `${c.name}: traces`);
    node.forEach((trace, i) => {
      const [a, b] = [comparable(trace), comparable(nat[c.name][i])];
      // Line by line, for a readable failure.
      a.forEach((line, k) => assert.equal(line, b[k], `${c.name}: trace ${i}, line ${k + 1}`));
      assert.equal(a.length, b.length, `${c.name}: trace ${i}: lines`);
      lines += a.length - 1;
      answered += a.filter((l) => l.includes('"answers":{"')).length;
    });
  }
  assert.ok(lines > 300 && answered > lines / 2, `${lines} lines, ${answered} with answers`);
});

test('the fast path and the wasm decoder record the same lines', () => {
  for (const c of cases) {
    const fast = recordCase(c).map(comparable);
    const decoder = recordCase(c, () => __testing.decoderOnly(new ProjectionStore())).map(comparable);
    assert.deepEqual(decoder, fast, c.name);
  }
});

test('each side\'s traces replay on the other with the recorded answers', () => {
  execFileSync('cargo', ['build', '--quiet', '--bin', 'task-projection-replay'], { cwd: root, stdio: 'inherit' });
  const bin = path.join(root, 'target/debug/task-projection-replay');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trace-node-'));
  const nat = native();
  let n = 0;
  for (const c of cases) {
    for (const [i, trace] of recordCase(c).entries()) {
      const file = path.join(dir, `${n++}.ndjson`);
      fs.writeFileSync(file, trace);
      const out = spawnSync(bin, ['--check', file], { encoding: 'utf8' });
      assert.equal(out.status, 0, `${c.name}: trace ${i}: ${out.stderr}`);
    }
    for (const [i, trace] of nat[c.name].entries()) {
      const replay = replayTrace(trace);
      assert.ok(replay.complete && replay.same, `${c.name}: native trace ${i}: ${JSON.stringify(replay.steps.filter((s) => !s.same)[0])}`);
    }
  }
});

test('a store behaves the same while it records (every store scenario, answers and reasons)', () => {
  class Recording extends ProjectionStore {
    constructor() {
      super();
      this.startRecording();
    }
  }
  for (const c of cases) runStoreCase(Recording, c, assert);
  // And applyFrame's reason (read after the recorder's queries).
  const store = new Recording();
  const plain = new ProjectionStore();
  for (const s of [store, plain]) drive(s);
  const frame = { type: 'session.message.added', payload: message('m-9', 'clarification_request', 3) };
  assert.deepEqual(store.applyFrame(frame), plain.applyFrame(frame));
  assert.equal(store.lastReason(), plain.lastReason());
  store.free();
  plain.free();
});

// ---- the committed Node trace (tests/trace_replay.rs replays it with --check) -----------------

const FIXTURE_CASE = 'convergence: a task removal is final (late summary, task.updated, session list, snapshot and session inputs of a removed task are dropped)';
const fixtureUrl = new URL('../fixtures/traces/task-removal-is-final.ndjson', import.meta.url);

test('the committed Node trace is what Node records today', () => {
  const c = cases.find((x) => x.name === FIXTURE_CASE);
  assert.ok(c, `no store scenario named ${FIXTURE_CASE}`);
  const [trace] = recordCase(c);
  if (process.env.TRACE_FIXTURE_UPDATE === '1') {
    fs.mkdirSync(new URL('.', fixtureUrl), { recursive: true });
    fs.writeFileSync(fixtureUrl, trace);
  }
  assert.deepEqual(comparable(trace), comparable(fs.readFileSync(fixtureUrl, 'utf8')),
    'tests/fixtures/traces/task-removal-is-final.ndjson differs (TRACE_FIXTURE_UPDATE=1 rewrites it)');
});
