// Convergence of the built package's ProjectionStore on server-like histories: its final answers
// must not depend on delivery order or repetition (SPEC §5, §7).
//
// For each seed, tests/js/history.mjs simulates a backend and returns the inputs it emitted. The
// in-order store gets them in emission order; the shuffled store gets a random permutation in
// which every input is repeated 1–3 times (a task snapshot's beginTaskFetch stays before its
// applyTaskSnapshot; a duplicate snapshot is a new begin/apply pair with its own token). After
// every input of the shuffled delivery the step invariants hold on every session; at the end both
// stores give the same answers for every session and task of the history. Every history runs
// twice: through the package's fast path, and through the wasm decoder (the wasm class's own
// applyMessageEvent / applyMessagePage).
//
// Step invariants, after every shuffled input, on every session of the history:
//   - hiddenMessageIds(s) deep-equals pendingClarification(s)?.message_ids ?? [] (both undefined
//     while not known, SPEC §11);
//   - a non-null pendingClarification(s) implies sessionPendingAction(s) === 'clarification' and
//     currentTurnId(s) a string or undefined;
//   - when the newest state delivered so far (by the session's updated_at, from session events and
//     lists) is known and not input-capable, currentTurnId(s) === null;
//   - a message whose delete was delivered never appears in hiddenMessageIds(s) again.
// (The in-order delivery is held to them too, as a check of the invariants themselves.)
// Final answers compared: sessionPendingAction, currentTurnId, pendingClarification,
// hiddenMessageIds, hasPendingPermission per session; taskPendingAction, taskStatusSummary,
// pendingOwner per task.
//
// A failure is shrunk (inputs dropped greedily from both deliveries, then duplicate copies, while
// the same check still fails; never to a subset SPEC §5 itself makes order dependent, see
// sanctionedLoss) and printed as ONE case of tests/fixtures/store_scenarios.json
// (docs/store-fixture-format.md): the shuffled delivery's calls, then queries whose `expect` is the
// in-order store's answer. A shrunk case that already fails another check covers it (printed as
// "also failed by"). A separate test checks that the generated histories are server-like.
//
// Environment:
//   CONVERGENCE_HISTORIES=n     histories per path (default 300)
//   CONVERGENCE_SEED=n          first seed (default 1; seeds n .. n+count-1)
//   CONVERGENCE_CASES=n         distinct failing checks shrunk and printed per path (default 4)
//   CONVERGENCE_LAST_REMOVAL=1  deliver every removeTask last instead of anywhere in the shuffle
//                               (a task removal is final, docs/convergence.md: by default a late
//                               input of a removed task must change nothing).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { ProjectionStore } from 'task-projection';
// A test hook of the package's store.js (by path: no package entry exports it).
import { BUILD_DIR } from './build.mjs';
// The test hooks of the store.js that `task-projection` resolved to (production or development).
const { __testing } = await import(new URL('store.js', BUILD_DIR));
import { generateHistory, historyEntities, isInputCapable, makeRng } from './history.mjs';
import { stateOf } from './build.mjs';
import { mutateDeep, soundness } from './sound.mjs';

const envInt = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
};
const COUNT = envInt('CONVERGENCE_HISTORIES', 300);
const FIRST_SEED = envInt('CONVERGENCE_SEED', 1);
const MAX_CASES = envInt('CONVERGENCE_CASES', 4);
const LAST_REMOVAL = process.env.CONVERGENCE_LAST_REMOVAL === '1';
/** Evaluations one shrink may spend. */
const SHRINK_BUDGET = 1000;

// ---- delivery paths ------------------------------------------------------------------------------

const PATHS = {
  'fast path': (store, call, args) => store[call](...args),
  'wasm decoder': (store, call, args) => __testing.decoderOnly(store)[call](...args),
};

// ---- units, deliveries -------------------------------------------------------------------------

/**
 * The history as units: one input each, except a task snapshot (its begin/apply pair). A unit's
 * `origin` is its index.
 */
function unitsOf(inputs) {
  const units = [];
  for (let i = 0; i < inputs.length; i++) {
    const step = inputs[i];
    if (step.call === 'beginTaskFetch' || step.call === 'respondStart') {
      // A snapshot's begin and apply; a respond's start and reply (SPEC §13).
      const apply = inputs[i + 1];
      const closing = step.call === 'beginTaskFetch' ? 'applyTaskSnapshot' : 'respondReply';
      if (apply?.call !== closing || apply.args[0]?.$saved !== step.save) {
        throw new Error(`history input ${i}: ${step.call} not followed by its ${closing}`);
      }
      units.push({ origin: units.length, steps: [step, apply] });
      i++;
    } else {
      units.push({ origin: units.length, steps: [step] });
    }
  }
  return units;
}

/** One delivered input: `step` with its unit `origin` and `copy` number. */
const item = (origin, copy, step) => ({ origin, copy, step });

/** A unit's steps as copy `copy` (a snapshot copy gets its own token). */
function copySteps(unit, copy) {
  if (unit.steps.length === 1) return unit.steps.map((s) => item(unit.origin, copy, s));
  const [begin, apply] = unit.steps;
  const token = copy === 0 ? begin.save : `${begin.save}.${copy}`;
  return [
    item(unit.origin, copy, { ...begin, save: token }),
    item(unit.origin, copy, { ...apply, args: [{ $saved: token }, apply.args[1]] }),
  ];
}

const inOrderDelivery = (units) => units.flatMap((u) => copySteps(u, 0));

/** Every unit 1–3 times, in a random permutation (see the module docs). */
function shuffledDelivery(units, rng) {
  const items = [];
  for (const u of units) {
    const copies = rng.range(1, 3);
    for (let c = 0; c < copies; c++) items.push(...copySteps(u, c));
  }
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return paired(items);
}

/**
 * Every unit 1–3 times, each copy moved at most `window` places from where its unit was emitted
 * (a late frame, an early REST read): the delivery a page on a live socket sees, where most of
 * what a question needs has arrived when the user clicks, and the inputs produced just before
 * the server handled the answer still arrive after its reply.
 */
function nearbyDelivery(units, rng, window) {
  const keyed = [];
  units.forEach((u, i) => {
    const copies = rng.range(1, 3);
    for (let c = 0; c < copies; c++) {
      const key = i + rng.int(2 * window + 1) - window;
      for (const it of copySteps(u, c)) keyed.push({ key, order: keyed.length, it });
    }
  });
  keyed.sort((a, b) => a.key - b.key || a.order - b.order);
  return paired(keyed.map((k) => k.it));
}

/** `items` with each snapshot's begin before its apply, a respond's start before its reply. */
function paired(items) {
  // A snapshot's begin before its apply: swap the two when the shuffle reversed them.
  const begins = new Map();
  items.forEach((it, i) => {
    if (it.step.call === 'beginTaskFetch' || it.step.call === 'respondStart') begins.set(it.step.save, i);
  });
  items.forEach((it, i) => {
    if (it.step.call !== 'applyTaskSnapshot' && it.step.call !== 'respondReply') return;
    const b = begins.get(it.step.args[0].$saved);
    if (b > i) [items[b], items[i]] = [items[i], items[b]];
  });
  if (!LAST_REMOVAL) return items;
  return [...items.filter((it) => it.step.call !== 'removeTask'), ...items.filter((it) => it.step.call === 'removeTask')];
}

// ---- running a delivery ----------------------------------------------------------------------------

/** Fresh argument objects per delivery (a real one is a fresh JSON parse), tokens resolved. */
function resolveArgs(args, saved) {
  const fresh = JSON.parse(JSON.stringify(args));
  const walk = (v) => {
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (keys.length === 1 && typeof v.$saved === 'string') {
        if (!saved.has(v.$saved)) throw new Error(`no saved value ${v.$saved}`);
        return saved.get(v.$saved);
      }
      for (const k of keys) v[k] = walk(v[k]);
    }
    return v;
  };
  return walk(fresh);
}

const SESSION_QUERIES = ['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission'];
const TASK_QUERIES = ['taskPendingAction', 'taskStatusSummary', 'pendingOwner'];

/** The final answers: `[[call, id, value], ...]`. */
function answers(store, entities) {
  const out = [];
  for (const s of entities.sessions) for (const q of SESSION_QUERIES) out.push([q, s, store[q](s)]);
  for (const t of entities.tasks) for (const q of TASK_QUERIES) out.push([q, t, store[q](t)]);
  return out;
}

/** What the step invariants remember of the inputs delivered so far. */
class Delivered {
  constructor(entities) {
    this.entities = entities;
    this.deleted = new Map(); // session → ids whose delete was delivered
    this.newest = new Map(); // session → { updated_at, state } of the newest state delivered
    this.removed = new Set(); // tasks whose removeTask was delivered (removal is final)
  }

  /** A session of a task whose removal was delivered: the store knows nothing of it any more. */
  gone(sessionId) {
    return this.removed.has(this.entities.taskOf.get(sessionId));
  }

  note(sessionId, updatedAt, state) {
    if (typeof updatedAt !== 'string' || typeof state !== 'string' || this.gone(sessionId)) return;
    const held = this.newest.get(sessionId);
    // The generator's timestamps share one fixed-width form: text order is time order.
    if (held === undefined || updatedAt >= held.updated_at) this.newest.set(sessionId, { updated_at: updatedAt, state });
  }

  observe(call, args) {
    if (call === 'applyMessageEvent' && args[0] === 'deleted') {
      const p = args[1];
      if (!this.deleted.has(p.session_id)) this.deleted.set(p.session_id, new Set());
      this.deleted.get(p.session_id).add(p.message_id);
    } else if (call === 'applySessionEvent') {
      this.note(args[0].id, args[0].updated_at, args[0].state);
    } else if (call === 'applySessionList') {
      for (const s of args[1]) this.note(s.id, s.updated_at, s.state);
    } else if (call === 'removeTask') {
      // The store forgets the task's sessions, and drops their later inputs: so do the invariants.
      this.removed.add(args[0]);
      for (const [s, t] of this.entities.taskOf) {
        if (t === args[0]) {
          this.deleted.delete(s);
          this.newest.delete(s);
        }
      }
    }
  }

  /** Calls `fail(check, message)` for every step invariant that does not hold. */
  check(store, fail) {
    for (const s of this.entities.sessions) {
      if (this.gone(s)) continue;
      const bundle = store.pendingClarification(s);
      const hidden = store.hiddenMessageIds(s);
      // Known together (SPEC §11): undefined with undefined.
      const want = bundle === undefined ? undefined : bundle?.message_ids ?? [];
      if (!isDeepStrictEqual(hidden, want)) {
        fail('step: hiddenMessageIds = pendingClarification.message_ids', `${s}: hiddenMessageIds ${JSON.stringify(hidden)}, bundle ${JSON.stringify(bundle)}`);
      }
      if (bundle !== null && bundle !== undefined) {
        const action = store.sessionPendingAction(s);
        if (action !== 'clarification') {
          fail('step: a bundle implies sessionPendingAction clarification', `${s}: bundle ${JSON.stringify(bundle)} but sessionPendingAction ${JSON.stringify(action)}`);
        }
        const turn = store.currentTurnId(s);
        if (!(typeof turn === 'string' || turn === undefined)) {
          fail('step: a bundle implies a current turn (or unknown)', `${s}: bundle ${JSON.stringify(bundle)} but currentTurnId ${JSON.stringify(turn)}`);
        }
      }
      const newest = this.newest.get(s);
      if (newest !== undefined && !isInputCapable(newest.state)) {
        const turn = store.currentTurnId(s);
        if (turn !== null) {
          fail('step: newest state not input-capable implies currentTurnId null', `${s}: newest delivered state ${newest.state} (updated_at ${newest.updated_at}) but currentTurnId ${show(turn)}`);
        }
      }
      const gone = this.deleted.get(s);
      if (gone !== undefined) {
        for (const id of hidden ?? []) {
          if (gone.has(id)) fail('step: a deleted message is never hidden again', `${s}: ${id} was deleted but hiddenMessageIds is ${JSON.stringify(hidden)}`);
        }
      }
    }
  }
}

const show = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));

/**
 * Runs `items` on a fresh store. Returns the final answers, and (with `delivered`) every failed
 * step invariant: `failures` maps a check to `{ message, at }` (its first failure). Issue 41's
 * options: `extra` (each status summary delivered carries `extra()` under `git`), `alter` (every
 * argument is altered after its call), `hostile` (a Map from a step to `[call, args]` lists made
 * after it, each of which must throw a TaskProjectionError and change nothing; `refused` counts
 * them) and `sound` (the store is sound, tests/js/sound.mjs, after every step).
 */
function run(path, items, entities, { invariants, hydrateAt, extra, alter = false, hostile = new Map(), sound = false }) {
  let store = new ProjectionStore();
  const saved = new Map();
  const failures = new Map();
  const delivered = invariants ? new Delivered(entities) : null;
  const apply = PATHS[path];
  let refused = 0;
  try {
    items.forEach((it, at) => {
      const { call, save } = it.step;
      let args = it.step.args ? resolveArgs(it.step.args, saved) : [];
      if (extra) args = withOddSummary(call, args, extra);
      const fail = (check, message) => {
        if (!failures.has(check)) failures.set(check, { message: `after delivery ${at} (${call}): ${message}`, at });
      };
      let result;
      try {
        result = apply(store, call, args);
      } catch (error) {
        fail(`throws: ${call}`, `${call} threw ${error?.code ?? ''} ${error?.field ?? ''} ${error?.message ?? error}`);
        return;
      }
      if (save !== undefined) saved.set(save, result);
      if (at === hydrateAt) {
        // A page load in the middle of the history: the store's snapshot, through JSON text, into
        // a new store that takes every later delivery (SPEC §12).
        const text = JSON.stringify(store.dehydrate());
        store.free();
        store = ProjectionStore.hydrate(text);
      }
      if (delivered) {
        delivered.observe(call, args);
        delivered.check(store, fail);
      }
      if (alter && save === undefined) mutateDeep(args);
      for (const [hostileCall, hostileArgs] of hostile.get(at) ?? []) {
        const before = stateOf(store, { byValue: true });
        try {
          store[hostileCall](...hostileArgs);
          fail(`hostile accepted: ${hostileCall}`, `a hostile ${hostileCall} was accepted`);
        } catch (error) {
          if (error?.name !== 'TaskProjectionError' || typeof error.field !== 'string') fail(`hostile threw: ${hostileCall}`, `a hostile ${hostileCall} threw ${error}`);
        }
        if (stateOf(store, { byValue: true }) !== before) fail(`hostile changed: ${hostileCall}`, `a refused ${hostileCall} changed the store`);
        refused++;
      }
      if (sound) {
        const problem = soundness(ProjectionStore, store);
        if (problem) fail('sound', problem);
      }
    });
    return { answers: answers(store, entities), failures, refused };
  } finally {
    store.free();
  }
}

/**
 * Every check that fails for this pair of deliveries: `Map(check → message)`. `shuffled` holds
 * only units present in `inOrder`.
 */
function evaluate(path, inOrder, shuffled, entities) {
  const a = run(path, inOrder, entities, { invariants: true });
  const b = run(path, shuffled, entities, { invariants: true });
  const failed = new Map();
  for (const [check, { message }] of a.failures) failed.set(`in order ${check}`, message);
  for (const [check, { message }] of b.failures) failed.set(check, message);
  a.answers.forEach(([call, id, want], i) => {
    const got = b.answers[i][2];
    const check = `final: ${call}`;
    if (!isDeepStrictEqual(got, want) && !failed.has(check)) {
      failed.set(check, `${call}(${JSON.stringify(id)}): in order ${show(want)}, shuffled ${show(got)}`);
    }
  });
  return failed;
}

// ---- what a shrunk subset must keep ----------------------------------------------------------------

const revisionAbove = (a, b) => {
  const ea = BigInt(a.epoch);
  const eb = BigInt(b.epoch);
  return ea !== eb ? ea > eb : a.sequence > b.sequence;
};

/**
 * SPEC §5 lets a message event lose its projection when the stored row is newer ("an older update
 * carries no projection"): delivered after a newer version of its row, such an event's projection
 * is dropped, so the session's answers depend on order when that projection is the session's
 * newest. The generator never emits that; a shrunk subset could (by dropping the later input that
 * carried the projection again), so shrinking never keeps such a subset.
 */
function sanctionedLoss(units) {
  const newest = new Map(); // session → { revision, step }
  const rows = []; // [session, id, updated_at] of every row version
  const see = (sessionId, revision, step) => {
    const held = newest.get(sessionId);
    if (held === undefined || revisionAbove(revision, held.revision)) newest.set(sessionId, { revision, step });
  };
  for (const u of units) {
    for (const { call, args } of u.steps) {
      if (call === 'applyMessageEvent') {
        const p = args[1];
        if (p.pending_action_revision) see(p.session_id, p.pending_action_revision, u.steps[0]);
        if (args[0] === 'updated') rows.push([p.session_id, p.message_id, p.updated_at]);
      } else if (call === 'applySessionEvent') {
        if (args[0].pending_action_revision) see(args[0].id, args[0].pending_action_revision, u.steps[0]);
      } else if (call === 'applySessionList') {
        for (const s of args[1]) if (s.pending_action_revision) see(s.id, s.pending_action_revision, u.steps[0]);
      } else if (call === 'applyMessagePage') {
        for (const r of args[1]) rows.push([args[0], r.id, r.updated_at]);
      }
    }
  }
  for (const [sessionId, { step }] of newest) {
    if (step.call !== 'applyMessageEvent' || step.args[0] === 'deleted') continue;
    const p = step.args[1];
    if (rows.some(([s, id, at]) => s === sessionId && id === p.message_id && at > p.updated_at)) return true;
  }
  return false;
}

// ---- shrinking -------------------------------------------------------------------------------------

/** The units of `units` that `items` delivers. */
function unitsIn(units, items) {
  const present = new Set(items.map((it) => it.origin));
  return units.filter((u) => present.has(u.origin));
}

function shrink(path, units, entities, shuffled, check) {
  let budget = SHRINK_BUDGET;
  let current = shuffled;
  const fails = (items) => {
    if (budget <= 0) return false;
    budget--;
    const kept = unitsIn(units, items);
    if (sanctionedLoss(kept)) return false;
    return evaluate(path, inOrderDelivery(kept), items, entities).has(check);
  };
  /** Greedy removal of groups (by `key`), halving the chunk size down to one. */
  const pass = (keyOf, removable) => {
    let changed = false;
    let keys = [...new Set(current.map(keyOf))].filter((k) => removable(k));
    for (let size = Math.max(1, Math.ceil(keys.length / 2)); size >= 1; size = size === 1 ? 0 : Math.ceil(size / 2)) {
      for (let i = 0; i < keys.length;) {
        const drop = new Set(keys.slice(i, i + size));
        const candidate = current.filter((it) => !drop.has(keyOf(it)));
        if (candidate.length > 0 && drop.size > 0 && fails(candidate)) {
          current = candidate;
          keys = keys.filter((k) => !drop.has(k));
          changed = true;
        } else {
          i += size;
        }
      }
      if (size === 1) break;
    }
    return changed;
  };
  for (let round = 0; round < 8 && budget > 0; round++) {
    const a = pass((it) => it.origin, () => true);
    // Duplicates: drop extra copies, keeping at least one of each unit.
    const copies = new Map();
    for (const it of current) copies.set(it.origin, (copies.get(it.origin) ?? new Set()).add(it.copy));
    const b = pass((it) => `${it.origin}/${it.copy}`, (k) => copies.get(Number(k.split('/')[0])).size > 1);
    if (!a && !b) break;
  }
  shrink.spent = SHRINK_BUDGET - budget;
  return current;
}

// ---- the fixture case ---------------------------------------------------------------------------

const encode = (v) => {
  if (v === undefined) return { $undefined: true };
  if (Array.isArray(v)) return v.map(encode);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).map((k) => [k, encode(v[k])]));
  return v;
};

/** One store-scenario case: the delivery's calls, then the in-order store's answers as queries. */
function fixtureCase(name, path, units, shuffled) {
  const kept = unitsIn(units, shuffled);
  const entities = historyEntities(kept.flatMap((u) => u.steps));
  const want = run(path, inOrderDelivery(kept), entities, { invariants: false }).answers;
  const steps = shuffled.map(({ step }) => ({ call: step.call, ...(step.args && { args: step.args }), ...(step.save && { save: step.save }) }));
  for (const [call, id, value] of want) steps.push({ call, args: [id], expect: encode(value) });
  return { name, steps };
}

/** The case as JSON, one step per line (ready to paste into store_scenarios.json). */
const caseJson = (c) => `{"name": ${JSON.stringify(c.name)}, "steps": [\n${c.steps.map((s) => `  ${JSON.stringify(s)}`).join(',\n')}\n]}`;

// ---- the generator's histories are server-like -----------------------------------------------------

const STAMP = /^2026-11-29T12:[0-5]\d:[0-5]\d\.\d{9}Z$/;
const ALLOWED = new Set(['applyMessageEvent', 'applyTurnEvent', 'applySessionEvent', 'applyStatusSummaryEvent',
  'applySessionList', 'applyTurnList', 'applyMessagePage', 'beginTaskFetch', 'applyTaskSnapshot', 'removeTask']);

/**
 * Every way `inputs` breaks the rules that make order independence a promise (the module docs of
 * history.mjs): an empty list when the history is server-like.
 */
function serverLikeViolations(inputs) {
  const bad = [];
  const versions = new Map(); // `kind id @updated_at` → content
  const version = (kind, id, at, content, where) => {
    if (typeof at !== 'string' || !STAMP.test(at)) bad.push(`${where}: ${kind} ${id} updated_at ${at}`);
    const key = `${kind} ${id} @${at}`;
    const text = JSON.stringify(content);
    if (!versions.has(key)) versions.set(key, text);
    else if (versions.get(key) !== text) bad.push(`${where}: two versions of ${kind} ${id} share updated_at ${at}`);
  };
  const projections = new Map(); // `session epoch:sequence` → action
  const revisionOwners = new Map(); // `epoch:sequence` → where (one input per revision, a list counts once)
  const projection = (sessionId, holder, where, shared) => {
    const hasAction = Object.prototype.hasOwnProperty.call(holder, 'pending_action');
    const hasRevision = Object.prototype.hasOwnProperty.call(holder, 'pending_action_revision');
    if (hasAction !== hasRevision) bad.push(`${where}: only one projection key`);
    if (!hasRevision) return;
    const r = holder.pending_action_revision;
    if (typeof r?.epoch !== 'string' || !/^\d+$/.test(r.epoch) || !Number.isSafeInteger(r.sequence)) bad.push(`${where}: revision ${JSON.stringify(r)}`);
    const key = `${r.epoch}:${r.sequence}`;
    const owner = revisionOwners.get(key);
    if (owner === undefined) revisionOwners.set(key, shared ?? where);
    else if (owner !== (shared ?? where)) bad.push(`${where}: revision ${key} also used by ${owner}`);
    const k = `${sessionId} ${key}`;
    if (projections.has(k) && projections.get(k) !== holder.pending_action) bad.push(`${where}: two projections of ${sessionId} share revision ${key}`);
    projections.set(k, holder.pending_action);
  };
  const added = new Set();
  const deleted = new Set();
  const lists = new Map(); // task → session ids of its newest list
  const summaries = new Map(); // `task revision` → summary
  const published = new Map(); // task → newest summary revision published
  let lastEvent = '';
  let lastRevision = null;
  const wsClock = (at, where) => {
    if (!(at > lastEvent)) bad.push(`${where}: event timestamp ${at} not after ${lastEvent}`);
    lastEvent = at;
  };
  const wsRevision = (r, where) => {
    if (r === undefined) return;
    if (lastRevision !== null && !revisionAbove(r, lastRevision)) bad.push(`${where}: revision ${JSON.stringify(r)} not after ${JSON.stringify(lastRevision)}`);
    lastRevision = r;
  };
  const messageContent = (m) => ({ session_id: m.session_id, task_id: m.task_id, turn_id: m.turn_id, type: m.type, metadata: m.metadata, created_at: m.created_at });
  const turnContent = (t) => ({ started_at: t.started_at, created_at: t.created_at, completed_at: t.completed_at, metadata: t.metadata });
  inputs.forEach(({ call, args, save }, i) => {
    const where = `input ${i} (${call})`;
    if (!ALLOWED.has(call)) bad.push(`${where}: not a server-like call`);
    if (JSON.stringify(args ?? null).includes('status_summary_invalidated')) bad.push(`${where}: status_summary_invalidated`);
    if (call === 'removeTask' && i !== inputs.length - 1) bad.push(`${where}: removeTask before the end`);
    if (call === 'beginTaskFetch' && (inputs[i + 1]?.call !== 'applyTaskSnapshot' || inputs[i + 1].args[0].$saved !== save)) bad.push(`${where}: not followed by its snapshot`);
    if (call === 'applyMessageEvent') {
      const [kind, p] = args;
      const id = p.message_id;
      if (kind === 'added') {
        if (added.has(id)) bad.push(`${where}: message ${id} added twice`);
        added.add(id);
      } else if (!added.has(id) || deleted.has(id)) {
        bad.push(`${where}: ${kind} of a message not live (${id})`);
      }
      if (kind === 'deleted') deleted.add(id);
      if (kind !== 'deleted') version('message', id, p.updated_at, messageContent(p), where);
      wsClock(p.updated_at, where);
      projection(p.session_id, p, where);
      wsRevision(p.pending_action_revision, where);
    } else if (call === 'applyMessagePage') {
      for (const row of args[1]) {
        if (!added.has(row.id) || deleted.has(row.id)) bad.push(`${where}: page lists ${row.id}, not live`);
        if (row.session_id !== args[0]) bad.push(`${where}: row of another session`);
        version('message', row.id, row.updated_at, messageContent(row), where);
      }
    } else if (call === 'applyTurnEvent') {
      version('turn', args[0].id, args[0].updated_at, turnContent(args[0]), where);
      wsClock(args[0].updated_at, where);
    } else if (call === 'applyTurnList') {
      for (const t of args[1]) version('turn', t.id, t.updated_at, turnContent(t), where);
    } else if (call === 'applySessionEvent') {
      const s = args[0];
      if (!Object.prototype.hasOwnProperty.call(s, 'pending_action_revision')) bad.push(`${where}: session event without projection`);
      version('session', s.id, s.updated_at, { task_id: s.task_id, state: s.state }, where);
      wsClock(s.updated_at, where);
      projection(s.id, s, where);
      wsRevision(s.pending_action_revision, where);
    } else if (call === 'applySessionList') {
      const [taskId, sessions] = args;
      const ids = sessions.map((s) => s.id);
      for (const held of lists.get(taskId) ?? []) if (!ids.includes(held)) bad.push(`${where}: ${held} left the list of ${taskId}`);
      lists.set(taskId, ids);
      sessions.forEach((s, n) => {
        if (n > 0 && !(sessions[n - 1].started_at > s.started_at)) bad.push(`${where}: not newest first`);
        if (!Object.prototype.hasOwnProperty.call(s, 'pending_action_revision')) bad.push(`${where}: list entry without projection`);
        version('session', s.id, s.updated_at, { task_id: s.task_id, state: s.state }, where);
        projection(s.id, s, `${where}[${n}]`, where);
      });
      wsRevision(sessions[0]?.pending_action_revision, where);
    } else if (call === 'applyStatusSummaryEvent') {
      const { task_id: taskId, status_summary: summary } = args[0];
      if (summary.revision !== (published.get(taskId) ?? 0) + 1) bad.push(`${where}: summary revision ${summary.revision} after ${published.get(taskId)}`);
      published.set(taskId, summary.revision);
      if (Object.prototype.hasOwnProperty.call(summary, 'pending_action') && summary.pending_action == null) bad.push(`${where}: a clean summary must omit pending_action`);
      summaries.set(`${taskId} ${summary.revision}`, JSON.stringify(summary));
      wsClock(summary.updated_at, where);
    } else if (call === 'applyTaskSnapshot') {
      for (const t of args[1]) {
        if (!Object.prototype.hasOwnProperty.call(t, 'status_summary')) continue;
        if (summaries.get(`${t.id} ${t.status_summary.revision}`) !== JSON.stringify(t.status_summary)) bad.push(`${where}: ${t.id}'s summary was never published`);
      }
    }
  });
  if (sanctionedLoss(unitsOf(inputs))) bad.push('a projection that only an older row version carries (SPEC §5 would drop it)');
  return bad;
}

test('the generated histories are server-like (the cases SPEC makes order independent)', (t) => {
  const problems = [];
  let inputs = 0;
  for (let seed = FIRST_SEED; seed < FIRST_SEED + COUNT; seed++) {
    const history = generateHistory(seed);
    inputs += history.length;
    if (generateHistory(seed).length !== history.length || JSON.stringify(generateHistory(seed)) !== JSON.stringify(history)) {
      problems.push(`seed ${seed}: not deterministic`);
    }
    for (const p of serverLikeViolations(history)) problems.push(`seed ${seed}: ${p}`);
  }
  t.diagnostic(`${COUNT} histories, ${inputs} inputs, ${problems.length} problems`);
  if (problems.length > 0) throw new Error(`${problems.length} problems:\n${problems.slice(0, 30).join('\n')}`);
});

// ---- the property ---------------------------------------------------------------------------------

function convergence(path, t) {
  const failing = new Map(); // check → { seed, message, count }
  let histories = 0;
  let failedHistories = 0;
  let inputs = 0;
  let deliveries = 0;
  for (let seed = FIRST_SEED; seed < FIRST_SEED + COUNT; seed++) {
    const history = generateHistory(seed);
    const units = unitsOf(history);
    const entities = historyEntities(history);
    if (sanctionedLoss(units)) throw new Error(`seed ${seed}: the generator emitted a history that is not server-like (a projection only an older row version carries)`);
    // The delivery's randomness is its own stream, derived from the seed.
    const shuffled = shuffledDelivery(units, makeRng(Math.imul(seed, 0x9e3779b1) ^ 0x5bd1e995));
    histories++;
    inputs += history.length;
    deliveries += shuffled.length;
    const failed = evaluate(path, inOrderDelivery(units), shuffled, entities);
    if (failed.size === 0) continue;
    failedHistories++;
    for (const [check, message] of failed) {
      const f = failing.get(check);
      if (f) f.count++;
      else failing.set(check, { seed, message, count: 1, units, entities, shuffled });
    }
  }
  t.diagnostic(`${path}: ${histories} histories (seeds ${FIRST_SEED}..${FIRST_SEED + COUNT - 1}), ${inputs} inputs, ${deliveries} shuffled deliveries; ${failedHistories} failing histories`);
  console.log(`convergence (${path}): ${histories} histories run, ${failedHistories} failing`);
  if (failing.size === 0) return;
  const reports = [];
  const cases = []; // [{ name, failed }] of the shrunk cases so far
  for (const [check, f] of failing) {
    t.diagnostic(`${path}: "${check}" failed in ${f.count} histories (first: seed ${f.seed}: ${f.message})`);
    console.log(`  "${check}": ${f.count} histories, first seed ${f.seed}: ${f.message}`);
    // A shrunk case that already fails this check covers it (one root cause, several symptoms).
    const covered = cases.find((c) => c.failed.has(check));
    if (covered) {
      console.log(`    also failed by the shrunk case "${covered.name}"`);
      continue;
    }
    if (cases.length >= MAX_CASES) continue;
    let minimal = shrink(path, f.units, f.entities, f.shuffled, check);
    let failed = evaluate(path, inOrderDelivery(unitsIn(f.units, minimal)), minimal, f.entities);
    const why = failed.get(check);
    let note = '';
    const finalFails = (m) => [...m.keys()].some((k) => k.startsWith('final: '));
    if (!finalFails(failed)) {
      // Only a step invariant fails, the final answers agree: cut the delivery after the input
      // that broke it, where the in-order store of the inputs delivered so far answers otherwise.
      const at = run(path, minimal, f.entities, { invariants: true }).failures.get(check)?.at;
      const cut = at === undefined ? [] : minimal.slice(0, at + 1);
      const cutFailed = cut.length > 0 ? evaluate(path, inOrderDelivery(unitsIn(f.units, cut)), cut, f.entities) : new Map();
      if (finalFails(cutFailed)) {
        minimal = cut;
        failed = new Map([...failed, ...cutFailed]);
      } else {
        note = ` NOTE: only the step invariant fails (after delivery ${at}); the case's final queries agree with the in-order store.`;
      }
    }
    const c = fixtureCase(`convergence (${path}) seed ${f.seed}: ${check}`, path, f.units, minimal);
    cases.push({ name: c.name, failed });
    const json = caseJson(c);
    console.log(`\nshrunk case for "${check}" (seed ${f.seed}, ${f.shuffled.length} → ${minimal.length} deliveries in ${shrink.spent} runs; fails: ${[...failed.keys()].join('; ')}): ${why}${note}\n${json}\n`);
    reports.push(`${check} (seed ${f.seed}; ${why}${note}):\n${json}`);
  }
  throw new Error(`${failedHistories} of ${histories} histories do not converge (${path}); ${failing.size} distinct checks failed: ${[...failing.keys()].join('; ')}\n\n${reports.join('\n\n')}`);
}

for (const path of Object.keys(PATHS)) {
  test(`convergence on server-like histories: ${path}`, (t) => convergence(path, t));
}

/** The deliveries after which no task-list fetch is in flight (a snapshot holds no fetch token). */
function quietPoints(items) {
  const points = [];
  let open = 0;
  items.forEach((it, at) => {
    if (it.step.call === 'beginTaskFetch') open++;
    if (it.step.call === 'applyTaskSnapshot') open--;
    if (open === 0) points.push(at);
  });
  return points;
}

// SPEC §12: hydrated at a random point of a random delivery (duplicates included), a store then
// ends as the in-order delivery of every input does: the snapshot carries everything later
// inputs are ordered against (revisions, clocks, tombstones, removals).
test('convergence with a dehydrate/hydrate at a random point of each shuffled delivery', (t) => {
  let histories = 0;
  let deliveries = 0;
  const failures = [];
  for (let seed = FIRST_SEED; seed < FIRST_SEED + COUNT; seed++) {
    const history = generateHistory(seed);
    const units = unitsOf(history);
    const entities = historyEntities(history);
    const rng = makeRng(Math.imul(seed, 0x2545f491) ^ 0x68e31da4);
    const shuffled = shuffledDelivery(units, rng);
    const points = quietPoints(shuffled);
    const hydrateAt = points[rng.int(points.length)];
    const want = run('fast path', inOrderDelivery(units), entities, { invariants: false }).answers;
    const got = run('fast path', shuffled, entities, { invariants: true, hydrateAt });
    histories++;
    deliveries += shuffled.length;
    for (const [check, { message }] of got.failures) failures.push(`seed ${seed} (hydrated after ${hydrateAt}): ${check}: ${message}`);
    want.forEach(([call, id, value], i) => {
      if (!isDeepStrictEqual(got.answers[i][2], value)) {
        failures.push(`seed ${seed} (hydrated after ${hydrateAt}): ${call}(${JSON.stringify(id)}): in order ${show(value)}, hydrated ${show(got.answers[i][2])}`);
      }
    });
  }
  t.diagnostic(`${histories} histories, ${deliveries} deliveries, each hydrated once at a random point`);
  console.log(`hydrate convergence: ${histories} histories, ${failures.length} failures`);
  assert.deepEqual(failures.slice(0, 10), []);
});

// ---- SPEC §13: the user's answers at random points ---------------------------------------------

const RESPOND_HISTORIES = envInt('CONVERGENCE_RESPOND_HISTORIES', 1000);
const REFUSALS = new Set(['bundle_not_live', 'live_question_unknown']);
const liveBundle = (store, sessionId) => store.pendingClarification(sessionId)?.pending_id;

/**
 * A delivery with the user's answers, as an app with `respond` (js/respond.js) makes them: a
 * start clicked again after every input until it is taken (the question shows) or its reply's
 * point comes (then the request was another tab's: no reply here); the reply to the attempt
 * sent, then the body's `session` and `status_summary`. `responds: false` skips them (the
 * server's truth). Checks after every input: a start and a refused or failed reply change no
 * answer; a bundle a reply settled never shows again (by an input produced before the server
 * handled the response, or after). Returns the final answers, the failures and counts.
 */
function runResponds(items, entities, { hydrateAt, responds = true }) {
  let store = new ProjectionStore();
  const saved = new Map();
  const waiting = new Map(); // token → [sessionId, pendingId]
  const settled = []; // [sessionId, pendingId, handledAt]
  const failures = [];
  const counts = { clicks: 0, sent: 0, replies: 0, settled: 0, open: 0, olderAfter: 0 };
  const snapshot = () => JSON.stringify(answers(store, entities));
  const click = (token, sessionId, pendingId) => {
    const before = snapshot();
    counts.clicks++;
    try {
      const started = store.respondStart(sessionId, pendingId);
      waiting.delete(token);
      if (started.fresh) {
        counts.sent++;
        saved.set(token, started.attempt);
      }
    } catch (error) {
      if (!REFUSALS.has(error?.code)) throw error;
      waiting.set(token, [sessionId, pendingId]);
    }
    if (snapshot() !== before) failures.push(`a respondStart(${sessionId}, ${pendingId}) changed an answer`);
  };
  try {
    items.forEach((it, at) => {
      const { call } = it.step;
      if (call === 'respondStart' || call === 'respondReply') {
        if (!responds) return;
        if (call === 'respondStart') click(it.step.save, ...it.step.args);
        else {
          const token = it.step.args[0].$saved;
          waiting.delete(token);
          const attempt = saved.get(token);
          saved.delete(token);
          if (attempt !== undefined) {
            const reply = JSON.parse(JSON.stringify(it.step.args[1]));
            const before = snapshot();
            const result = store.respondReply(attempt, reply);
            counts.replies++;
            const settles = ['won', 'lost', 'no_longer_active'].includes(result.outcome);
            if (!settles && (result.applied || snapshot() !== before)) failures.push(`delivery ${at}: a ${result.outcome} reply changed an answer`);
            if (!settles) counts.open++;
            if (result.applied) {
              counts.settled++;
              settled.push([it.step.sessionId, it.step.pendingId, it.step.handledAt]);
            }
            const session = reply.body?.session;
            if (session !== undefined) store.applySessionEvent(session);
            if (reply.body?.status_summary !== undefined) store.applyStatusSummaryEvent({ task_id: it.step.taskId, status_summary: reply.body.status_summary });
          }
        }
      } else {
        const args = it.step.args ? resolveArgs(it.step.args, saved) : [];
        const result = store[call](...args);
        if (it.step.save !== undefined) saved.set(it.step.save, result);
      }
      if (at === hydrateAt) {
        const text = JSON.stringify(store.dehydrate());
        store.free();
        store = ProjectionStore.hydrate(text);
        // A page load abandons its requests: their replies reach no store.
        for (const [token, value] of saved) if (typeof value === 'number') saved.delete(token);
      }
      for (const [token, [sessionId, pendingId]] of [...waiting]) click(token, sessionId, pendingId);
      for (const [sessionId, pendingId, handledAt] of settled) {
        if (it.origin < handledAt) counts.olderAfter++;
        if (liveBundle(store, sessionId) === pendingId) {
          failures.push(`delivery ${at} (${call}, input ${it.origin}): settled ${pendingId} of ${sessionId} shows again (${it.origin < handledAt ? 'an input produced before the server handled the response' : 'after the handling'})`);
        }
      }
    });
    return { answers: answers(store, entities), failures, counts };
  } finally {
    store.free();
  }
}

test('the user\'s answers at random points of random deliveries with duplicates and a hydrate: the server\'s truth, never reopened, failures hide nothing', (t) => {
  const failures = [];
  const total = { histories: 0, deliveries: 0, clicks: 0, sent: 0, replies: 0, settled: 0, open: 0, olderAfter: 0 };
  for (let seed = FIRST_SEED; seed < FIRST_SEED + RESPOND_HISTORIES; seed++) {
    const history = generateHistory(seed, { responds: 40 });
    const units = unitsOf(history);
    const entities = historyEntities(history);
    const rng = makeRng(Math.imul(seed, 0x27d4eb2f) ^ 0x13a5);
    // Half the histories fully shuffled, half delivered nearly in order (the user clicks more).
    const shuffled = seed % 2 === 0 ? shuffledDelivery(units, rng) : nearbyDelivery(units, rng, 6);
    const points = quietPoints(shuffled);
    const hydrateAt = points[rng.int(points.length)];
    // The server's truth: its data in order, no answers.
    const want = runResponds(inOrderDelivery(units), entities, { responds: false }).answers;
    const got = runResponds(shuffled, entities, { hydrateAt });
    total.histories++;
    total.deliveries += shuffled.length;
    for (const k of Object.keys(got.counts)) total[k] += got.counts[k];
    for (const f of got.failures) failures.push(`seed ${seed} (hydrated after ${hydrateAt}): ${f}`);
    want.forEach(([call, id, value], i) => {
      if (!isDeepStrictEqual(got.answers[i][2], value)) {
        failures.push(`seed ${seed} (hydrated after ${hydrateAt}): ${call}(${JSON.stringify(id)}): the server's truth ${show(value)}, delivered ${show(got.answers[i][2])}`);
      }
    });
  }
  const line = `${total.histories} histories, ${total.deliveries} deliveries (hydrated once each); ${total.clicks} clicks (${total.sent} sent), ${total.replies} replies (${total.settled} settled, ${total.open} refused or failed), ${total.olderAfter} inputs produced before the handling delivered after a settlement`;
  t.diagnostic(line);
  console.log(`respond convergence: ${line}; ${failures.length} failures`);
  assert.ok(total.settled * 20 >= total.histories && total.open > 0 && total.olderAfter > 0, 'the histories exercise settled and failed replies, and older inputs after a settlement');
  assert.deepEqual(failures.slice(0, 10), []);
});

// ---- issue 41: hostile summaries mixed in ------------------------------------------------------

/** A field no rule reads, odd but JSON (the same in both deliveries): `-0`, a `__proto__` key,
 * a null-prototype object, a key set to undefined, non-ASCII text, up to 30 levels deep. */
function oddField(rng) {
  let v = Object.assign(Object.create(null), { z: -0, gone: undefined, 'é😀': [1e300, 5e-324, '\u0000'] });
  v = { ...JSON.parse('{"__proto__": {"x": 1}}'), inner: v };
  for (let i = rng.int(29); i > 0; i--) v = { next: v, i };
  return v;
}

/** `args` of `call` with each status summary in them carrying `extra()` (under `git`: a fresh
 * one per summary, since every argument is altered after its call). */
function withOddSummary(call, args, extra) {
  const mark = (holder) => {
    const s = holder?.status_summary;
    if (s !== null && typeof s === 'object') holder.status_summary = { ...s, git: extra() };
  };
  if (call === 'applyStatusSummaryEvent' || call === 'applyTaskUpdated') mark(args[0]);
  if (call === 'applyTaskSnapshot' && Array.isArray(args[1])) args[1].forEach(mark);
  return args;
}

/** Summaries no store may take (issue 41's classes), each newer than any the history sends. */
const HOSTILE_SUMMARIES = [
  () => { const s = { revision: 1e6, pending_action: 'permission', git: {} }; s.git.self = s; return s; },
  () => ({ revision: 10n ** 6n, pending_action: 'permission' }),
  () => ({ revision: 1e6, updated_at: 5n }),
  () => ({ revision: 1e6, git: [0].concat(Array.from({ length: 32 }).reduce((v) => [v], [])) }),
  () => { const r = Proxy.revocable({}, {}); r.revoke(); return { revision: 1e6, git: r.proxy }; },
  () => Object.defineProperty({ revision: 1e6 }, 'git', { enumerable: true, get() { throw new Error('getter'); } }),
  () => ({ revision: 1e6, updated_at: new Date(0) }),
  () => ({ revision: 1e6, ratio: NaN }),
  () => ({ revision: 1e6, files: Array.from({ length: 10_000 }, () => 0) }),
];
const HOSTILE_CALLS = [
  (task, s) => ['applyStatusSummaryEvent', [{ task_id: task, status_summary: s }]],
  (task, s) => ['applyTaskUpdated', [{ id: task, status_summary: s, task_pending_action: 'permission' }]],
  (task, s) => ['applyFrame', [{ type: 'task.status_summary.updated', payload: { task_id: task, status_summary: s } }]],
];

// Issue 41 as a property: shuffled deliveries with duplicates, each summary carrying a field no
// rule reads (odd but JSON), every argument altered after its call, and summaries no store may
// take mixed in at random points (through applyStatusSummaryEvent, applyTaskUpdated and
// applyFrame): each of those is refused and changes nothing, the step invariants hold and the
// store is sound after every step, and the answers end as the in-order delivery's.
test('hostile summaries mixed into shuffled deliveries: refused, the store sound after every step, the answers converge', (t) => {
  let histories = 0;
  let deliveries = 0;
  let refused = 0;
  const failures = [];
  for (let seed = FIRST_SEED; seed < FIRST_SEED + COUNT; seed++) {
    const history = generateHistory(seed);
    const units = unitsOf(history);
    const entities = historyEntities(history);
    if (entities.tasks.length === 0) continue;
    const rng = makeRng(Math.imul(seed, 0x41) ^ 0x5eed41);
    const oddSeed = rng.int(1 << 30);
    const extra = () => oddField(makeRng(oddSeed));
    const shuffled = shuffledDelivery(units, rng);
    const hostile = new Map();
    for (let n = rng.int(6); n > 0; n--) {
      const at = rng.int(shuffled.length);
      const call = rng.pick(HOSTILE_CALLS)(rng.pick(entities.tasks), rng.pick(HOSTILE_SUMMARIES)());
      hostile.set(at, [...(hostile.get(at) ?? []), call]);
    }
    const want = run('fast path', inOrderDelivery(units), entities, { invariants: false, extra, alter: true });
    const got = run('fast path', shuffled, entities, { invariants: true, extra, alter: true, hostile, sound: true });
    histories++;
    deliveries += shuffled.length;
    refused += got.refused;
    for (const [check, { message }] of want.failures) failures.push(`seed ${seed}: in order ${check}: ${message}`);
    for (const [check, { message }] of got.failures) failures.push(`seed ${seed}: ${check}: ${message}`);
    want.answers.forEach(([call, id, value], i) => {
      if (!isDeepStrictEqual(got.answers[i][2], value)) failures.push(`seed ${seed}: ${call}(${JSON.stringify(id)}): in order ${show(value)}, shuffled ${show(got.answers[i][2])}`);
    });
  }
  t.diagnostic(`${histories} histories, ${deliveries} deliveries each followed by a soundness check, ${refused} hostile summaries refused`);
  console.log(`sound convergence: ${histories} histories, ${deliveries} deliveries, ${refused} hostile summaries refused, ${failures.length} failures`);
  assert.deepEqual(failures.slice(0, 10), []);
});
