// The hostile-input catalogue in `npm test` (issue 11): every kind of bad value of
// tests/js/hostile.mjs at every position (each argument, each field the engine reads) of every
// entry point (the store's `task-projection` with its recorder `task-projection/trace`, and the
// stateless `task-projection/rules`), against the default entries and the pure-JS fallbacks.
// Each outcome is either a TaskProjectionError (known code, a field, a short message) with the
// state digest unchanged, or an acceptance that leaves a sound store (tests/js/sound.mjs: it
// dehydrates and hydrates back alike, its answers can be written, and altering the call's
// arguments or the answers afterwards changes nothing it holds), and the accepted ones are exactly those of
// tests/fixtures/hostile_acceptances.json (docs/decisions.md says why each class is accepted;
// HOSTILE_UPDATE=1 rewrites the file). Then
// 10^5 more hostile calls in the same module instance, after which every case of
// tests/fixtures/scenarios.json and store_scenarios.json still passes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import * as mainStore from 'task-projection';
import * as fallbackStore from 'task-projection/fallback';
import * as mainRules from 'task-projection/rules';
import * as fallbackRules from 'task-projection/rules/fallback';
// The recorder (startRecording) and replayTrace; one for the stores of both builds.
import * as trace from 'task-projection/trace';
import { hasDevelopmentFeatures, stateOf } from './build.mjs';
import { readCases } from './fixture.mjs';
import { runCase } from './runner.mjs';
import { loadStoreCases, runStoreCase } from './store-runner.mjs';
import { KINDS, entries, seeded, positions, replaced, TOKEN, TICKET, ATTEMPT, pathText, acceptancesUrl, readAcceptances } from './hostile.mjs';
import { mutateDeep, soundness } from './sound.mjs';

// Each build's entry points: the store module's and the rules module's (two wasm instances).
// `ProjectionStore.hydrate` as an entry point of its own (a store it returns is freed at once).
const hydrateOf = (entry) => (...args) => entry.ProjectionStore.hydrate(...args).free();
const main = { ...mainStore, ...mainRules, ...trace, hydrate: hydrateOf(mainStore), development: isDevelopment(mainStore) };
const fallback = { ...fallbackStore, ...fallbackRules, ...trace, hydrate: hydrateOf(fallbackStore), development: isDevelopment(fallbackStore) };

// `bundle_not_live` / `live_question_unknown`: a respond that may not start (SPEC §13), refused typed.
const CODES = new Set(['invalid_type', 'invalid_value', 'invalid_revision', 'malformed_epoch', 'unreadable_value', 'disposed', 'unsupported_version', 'development_only', 'bundle_not_live', 'live_question_unknown']);
/** The development build's features (the inbox's calls too, until their bytes are paid for:
 * SPEC §14, docs/package.md): in a production build each rejects every call, arguments unread. */
const DEVELOPMENT_ONLY = new Set(['explain', 'explainOwner', 'digest', 'stats', 'startRecording', 'applyInboxPage', 'applyInboxSeed', 'inboxReadFailed', 'inbox']);
/** Whether the store module of `tp` is a development build. */
function isDevelopment(tp) {
  const store = new tp.ProjectionStore();
  try {
    return hasDevelopmentFeatures(store);
  } finally {
    store.free();
  }
}
const SURVIVAL_CALLS = Number(process.env.HOSTILE_SURVIVAL_CALLS || 100_000);
/** Kinds too slow to repeat 10^5 times (each is in the full catalogue once per position). */
const HEAVY = new Set(['10 MB string', '10^6-element array', '10^5-deep nesting', '10^5-digit epoch']);

function describe(error) {
  try {
    return error instanceof Error ? `${error.name}: ${error.message.slice(0, 300)}` : String(error);
  } catch {
    return 'an unprintable value';
  }
}

/** One call of entry `name` on `tp` (and `store`), with `$token` / `$ticket` made real. */
/** The stand-ins of `args` made real on `store` (before the call's state is taken). An attempt is
 * p-1's: a new one while p-1 is live, else its last one (a reply to it is then `already_replied`,
 * read and decoded all the same). */
function realArgs(store, args) {
  return args.map((a) => {
    if (a === TOKEN) return store.beginTaskFetch();
    if (a === TICKET) return store.beginSelection('task-1').ticket;
    if (a === ATTEMPT) {
      try {
        return store.respondStart('sess-1', 'p-1').attempt;
      } catch {
        return store.respondState('sess-1', 'p-1')?.attempt ?? 1;
      }
    }
    return a;
  });
}

async function call(tp, store, name, kind, real) {
  const method = name.split(' ')[0];
  // One recording at a time: each kind of bad value is tried on a store that is not recording.
  if (method === 'startRecording') store.stopRecording();
  if (kind === 'store') return store[method](...real);
  return tp[method](...real);
}

/** A copy of plain data `v` (arrays and unfrozen plain objects; anything else as is): a base call's
 * arguments, fresh per call so that altering them after the call alters no other call's. */
function cloneData(v) {
  if (Array.isArray(v)) return v.map(cloneData);
  if (v === null || typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype || Object.isFrozen(v)) return v;
  const out = {};
  for (const k of Object.keys(v)) out[k] = cloneData(v[k]);
  return out;
}

/** `base`'s arguments with the one at `i` / `path` replaced by `bad`, fresh (cloneData). */
const argsWith = (base, i, path, bad) => {
  const args = base.map(cloneData);
  args[i] = replaced(args[i], path, bad);
  return args;
};

/**
 * Runs one hostile call; returns 'accepted', 'rejected', or a string describing what went wrong.
 * An accepted store call must leave a sound store (sound.mjs: it dehydrates, hydrates back alike,
 * its answers can be written), and then altering its arguments (unless `shared`: a heavy value
 * other calls reuse) must change nothing the store holds. The pure-JS fallback skips the
 * soundness check for the heavy values (a store holding a 10 MB id written and read back: most
 * of the catalogue's time there); the default build, whose boundary JS is the same, runs it.
 */
async function hostileCall(tp, store, name, kind, args, shared = false) {
  const real = store ? realArgs(store, args) : args;
  const before = store ? stateOf(store) : undefined;
  let result;
  try {
    result = await call(tp, store, name, kind, real);
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'TaskProjectionError') return `threw ${describe(error)}`;
    if (!CODES.has(error.code) || typeof error.field !== 'string') return `a TaskProjectionError without a known code and field: ${describe(error)}`;
    if (error.message.length > 600) return `a message of ${error.message.length} characters`;
    if (store && stateOf(store) !== before) return 'rejected, yet the state changed';
    if ((error.code === 'development_only') !== (!tp.development && DEVELOPMENT_ONLY.has(name.split(' ')[0]))) {
      return `${error.code} from a ${tp.development ? 'development' : 'production'} build`;
    }
    return 'rejected';
  }
  if (kind === 'async' && !(result && typeof result === 'object' && ('sessions' in result || 'error' in result))) {
    return `boundedLoad resolved to ${describe(result)}`;
  }
  if (store) {
    const problem = shared && tp === fallback ? '' : soundness(tp.ProjectionStore, store);
    if (problem) return `accepted, then ${problem}`;
    if (!shared) {
      const held = stateOf(store, { byValue: true });
      mutateDeep(args);
      if (stateOf(store, { byValue: true }) !== held) return 'accepted, then altering its arguments changed what the store holds';
    }
  }
  return 'accepted';
}

/** The store still answers (a dead or bricked store throws here). */
function answers(store) {
  store.sessionPendingAction('sess-1');
  store.pendingClarification('sess-1');
  store.pendingOwner('task-1');
  return stateOf(store);
}

const results = {};

for (const [label, tp] of [[main.development ? 'default (development build)' : 'default (production build)', main], ['fallback', fallback]]) {
  test(`${label}: ${KINDS.length} kinds of bad value × every position of every entry point`, async () => {
    const acceptances = {};
    const problems = [];
    let calls = 0;
    let rejected = 0;
    for (const [name, base, schemas, kind] of entries()) {
      assert.ok(base !== undefined, `${name}: no base call`);
      for (const [i, path] of positions(schemas)) {
        // A fresh store per position: what one position accepted does not weigh on the next.
        let store = kind === 'store' ? seeded(tp.ProjectionStore) : undefined;
        const key = `${name} ${pathText(i, path)}`;
        const accepted = [];
        for (const [kindName, make] of KINDS) {
          const args = argsWith(base, i, path, make());
          const outcome = await hostileCall(tp, store, name, kind, args, HEAVY.has(kindName));
          calls++;
          if (outcome === 'accepted') accepted.push(kindName);
          else if (outcome === 'rejected') rejected++;
          else problems.push(`${key} ← ${kindName}: ${outcome}`);
          if (store) {
            try {
              answers(store);
            } catch (error) {
              problems.push(`${key} ← ${kindName}: the store stopped answering: ${describe(error)}`);
              store = seeded(tp.ProjectionStore);
            }
          }
        }
        acceptances[key] = accepted;
        if (store) store.free();
      }
    }
    results[label] = { calls, rejected };
    assert.deepEqual(problems, [], `${problems.length} unexpected outcomes of ${calls} calls`);
    // A production build accepts nothing of the development features (the file lists the
    // development build's acceptances).
    const want = readAcceptances();
    if (want && !tp.development) {
      for (const key of Object.keys(want)) if (DEVELOPMENT_ONLY.has(key.split(' ')[0])) want[key] = [];
    }
    if (process.env.HOSTILE_UPDATE === '1' && tp === main && tp.development) {
      // One line per position.
      const lines = Object.entries(acceptances).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
      fs.writeFileSync(acceptancesUrl, `{\n${lines.join(',\n')}\n}\n`);
    } else {
      assert.ok(want, 'tests/fixtures/hostile_acceptances.json is missing (HOSTILE_UPDATE=1 writes it)');
      assert.deepEqual(acceptances, want, 'accepted values differ from tests/fixtures/hostile_acceptances.json');
    }
    console.log(`${label}: ${calls} hostile calls, ${rejected} typed rejections, ${calls - rejected} acceptances`);
  });

  test(`${label}: ${SURVIVAL_CALLS.toLocaleString('en')} hostile calls in one instance, then every scenario passes`, async () => {
    const list = entries().filter((e) => e[3] !== 'async');
    const combos = [];
    for (const [name, base, schemas, kind] of list) {
      for (const [i, path] of positions(schemas)) {
        for (const [kindName, make] of KINDS) if (!HEAVY.has(kindName)) combos.push([name, base, kind, i, path, make]);
      }
    }
    let store = seeded(tp.ProjectionStore);
    const problems = [];
    for (let n = 0; n < SURVIVAL_CALLS; n++) {
      const [name, base, kind, i, path, make] = combos[(n * 7919) % combos.length];
      const args = argsWith(base, i, path, make());
      const outcome = await hostileCall(tp, kind === 'store' ? store : undefined, name, kind, args);
      if (outcome !== 'accepted' && outcome !== 'rejected') problems.push(`${name} ${pathText(i, path)}: ${outcome}`);
      if (n % 5000 === 4999) {
        answers(store);
        const problem = soundness(tp.ProjectionStore, store);
        if (problem) problems.push(`after ${n + 1} hostile calls: ${problem}`);
        store.free();
        store = seeded(tp.ProjectionStore);
      }
    }
    store.free();
    assert.deepEqual(problems.slice(0, 20), [], `${problems.length} unexpected outcomes`);
    for (const c of readCases()) runCase(tp, c, assert);
    const storeCases = loadStoreCases(JSON.parse(fs.readFileSync(new URL('../fixtures/store_scenarios.json', import.meta.url), 'utf8')));
    for (const c of storeCases) runStoreCase(tp.ProjectionStore, c, assert);
  });
}
