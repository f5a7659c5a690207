// "Nothing accepted is lost or unwritable" (issue 41) as checks any test runs on a store: its
// `dehydrate()` succeeds and survives JSON and structuredClone; `hydrate(dehydrate())` gives the
// same snapshot, answers, explanations and digest; every answer survives JSON.stringify and
// structuredClone; mutating an answer the store handed out changes no later answer. And
// `mutateDeep`, which alters everything reachable from a value (an argument after its call).

import { hasDevelopmentFeatures } from './build.mjs';

export const SESSION_QUERIES = ['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission'];
export const TASK_QUERIES = ['taskPendingAction', 'taskStatusSummary', 'pendingOwner'];

function describe(error) {
  try {
    return error instanceof Error ? `${error.name}${error.code ? ` ${error.code}` : ''}: ${error.message.slice(0, 200)}` : String(error);
  } catch {
    return 'an unprintable value';
  }
}

/** `[[query, id, value]]` for every id the snapshot `snap` holds (with explanations in a
 * development build). */
function answersOf(store, snap, dev) {
  const out = [];
  for (const { id } of snap.sessions) {
    for (const q of SESSION_QUERIES) out.push([q, id, store[q](id)]);
    if (dev) out.push(['explain', id, store.explain(id)]);
  }
  for (const { id } of snap.tasks) {
    for (const q of TASK_QUERIES) out.push([q, id, store[q](id)]);
    if (dev) out.push(['explainOwner', id, store.explainOwner(id)]);
  }
  return out;
}

const text = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));

/**
 * What is wrong with `store` by the invariant above ('' when nothing is). `ProjectionStore` is
 * the class of its build (for `hydrate`).
 */
export function soundness(ProjectionStore, store) {
  const dev = hasDevelopmentFeatures(store);
  let snap;
  let written;
  try {
    snap = store.dehydrate();
  } catch (error) {
    return `dehydrate() threw ${describe(error)}`;
  }
  try {
    written = JSON.stringify(snap);
    structuredClone(snap);
  } catch (error) {
    return `its snapshot cannot be written: ${describe(error)}`;
  }
  const before = answersOf(store, snap, dev);
  for (const [q, id, value] of before) {
    try {
      JSON.stringify(value);
      structuredClone(value);
    } catch (error) {
      return `${q}(${JSON.stringify(id)}) cannot be written: ${describe(error)}`;
    }
  }
  const seen = before.map(([, , v]) => text(v));
  let back;
  try {
    back = ProjectionStore.hydrate(written);
  } catch (error) {
    return `its snapshot does not hydrate: ${describe(error)}`;
  }
  try {
    const again = answersOf(back, snap, dev);
    for (let i = 0; i < before.length; i++) {
      const [q, id] = before[i];
      if (text(again[i][2]) !== seen[i]) return `${q}(${JSON.stringify(id)}) is ${seen[i]}, hydrated ${text(again[i][2])}`;
    }
    if (dev && back.digest() !== store.digest()) return 'the hydrated store\'s digest differs';
    const rewritten = JSON.stringify(back.dehydrate());
    if (rewritten !== written) return `the hydrated store's snapshot differs: ${written.slice(0, 300)} / ${rewritten.slice(0, 300)}`;
  } finally {
    back.free();
  }
  // An answer the store handed out, altered by its reader, alters no later answer.
  for (const [, , value] of before) mutateDeep(value);
  const after = answersOf(store, snap, dev);
  for (let i = 0; i < before.length; i++) {
    const [q, id] = before[i];
    if (text(after[i][2]) !== seen[i]) return `mutating the answers changed ${q}(${JSON.stringify(id)}): ${seen[i]} → ${text(after[i][2])}`;
  }
  return '';
}

/** At most this many keys of one object are altered (a 10^6-element array stays cheap). */
const KEYS = 200;

/**
 * Alters every property reachable from `value` (to depth 40) that lets itself be altered, and adds
 * one to each object: what a caller might do to an argument after the call or to an answer.
 * Never throws (frozen objects, throwing getters and revoked Proxies are passed over).
 */
export function mutateDeep(value, seen = new Set(), depth = 0) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
  if (depth > 40 || seen.has(value)) return;
  seen.add(value);
  let keys;
  try {
    keys = Reflect.ownKeys(value).slice(0, KEYS);
  } catch {
    return;
  }
  for (const k of keys) {
    let v;
    try {
      v = value[k];
    } catch {
      continue;
    }
    mutateDeep(v, seen, depth + 1);
    let next;
    if (typeof v === 'string') next = `${v}-mutated`;
    else if (typeof v === 'number') next = v + 1;
    else if (typeof v === 'boolean') next = !v;
    else if (v === null || v === undefined) next = 'mutated';
    else next = null;
    try {
      value[k] = next;
    } catch {
      // frozen, a getter without a setter, a Proxy that refuses
    }
  }
  try {
    value.mutated = true;
  } catch {
    // not extensible
  }
}
