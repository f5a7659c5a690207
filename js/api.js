// The package's stateless functions: each reads its arguments once into plain copies
// (./read.js), calls the wasm export with the copies only, and hands back the caller's own
// objects where the answer is one of them (the export returns their indices). `boundedLoad` is
// plain JS: it runs no engine rule, only waits.
import * as raw from './task_projection.js';
import {
  readArg, readItems, original, taskProjectionError, typeName, LEAF, MESSAGE, TURN, TURNS, MESSAGES,
  SESSIONS, SCOPE, REVISION, PROJECTION, TASK, SUMMARY, SESSION_INPUT, RESOLVE_INPUT,
  SELECTION_INPUT, FETCHED_INPUT,
} from './read.js';

/** The caller's items at `indices` (a Uint32Array from wasm). */
function pick(items, indices) {
  const out = new Array(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = items[indices[i]];
  return out;
}

/** Items and copies of an array argument; a non-array goes to wasm as its stand-in. */
function itemsOf(value, node, name) {
  const read = readItems(value, node, name);
  return read !== undefined ? read : { items: [], copies: readArg(value, LEAF, name) };
}

export function currentTurnId(turns, sessionState) {
  return raw.currentTurnId(readArg(turns, TURNS, 'turns'), readArg(sessionState, LEAF, 'sessionState'));
}

export function visibleTurnHistory(turns) {
  const t = itemsOf(turns, TURN, 'turns');
  return pick(t.items, raw.visibleTurnHistory(t.copies));
}

export function findPendingClarification(messages, scope) {
  const m = itemsOf(messages, MESSAGE, 'messages');
  const i = raw.findPendingClarification(m.copies, readArg(scope, SCOPE, 'scope'));
  return i < 0 ? null : m.items[i];
}

export function pendingClarificationBundle(messages, scope) {
  const m = itemsOf(messages, MESSAGE, 'messages');
  return pick(m.items, raw.pendingClarificationBundle(m.copies, readArg(scope, SCOPE, 'scope')));
}

export function visibleTranscriptMessages(messages, scope) {
  const m = itemsOf(messages, MESSAGE, 'messages');
  return pick(m.items, raw.visibleTranscriptMessages(m.copies, readArg(scope, SCOPE, 'scope')));
}

export function hasPendingPermission(messages) {
  return raw.hasPendingPermission(readArg(messages, MESSAGES, 'messages'));
}

export function sessionPendingAction(input) {
  return raw.sessionPendingAction(readArg(input, SESSION_INPUT, 'input'));
}

export function taskPendingAction(sessions) {
  return raw.taskPendingAction(readArg(sessions, SESSIONS, 'sessions'));
}

export function effectiveTaskPendingAction(task) {
  return raw.effectiveTaskPendingAction(readArg(task, TASK, 'task'));
}

export function compareRevisions(a, b) {
  return raw.compareRevisions(readArg(a, REVISION, 'a'), readArg(b, REVISION, 'b'));
}

export function canReplaceRevision(held, incoming) {
  return raw.canReplaceRevision(readArg(held, REVISION, 'held'), readArg(incoming, REVISION, 'incoming'));
}

export function mergePendingProjection(held, incoming) {
  return raw.mergePendingProjection(readArg(held, PROJECTION, 'held'), readArg(incoming, PROJECTION, 'incoming'));
}

export function resolveTaskSessionId(input) {
  return raw.resolveTaskSessionId(readArg(input, RESOLVE_INPUT, 'input'));
}

export function selectionOutcome(input) {
  return raw.selectionOutcome(readArg(input, SELECTION_INPUT, 'input'));
}

export function isNewerStatusSummary(incoming, held) {
  return raw.isNewerStatusSummary(readArg(incoming, SUMMARY, 'incoming'), readArg(held, SUMMARY, 'held'));
}

export function mergeFetchedStatusSummary(input) {
  const copy = readArg(input, FETCHED_INPUT, 'input');
  const chosen = raw.mergeFetchedStatusSummary(copy);
  const summary = chosen === 0 ? copy.held : chosen === 1 ? copy.response.status_summary : null;
  return summary === undefined || summary === null ? null : original(summary);
}

export function normalizeStartPolicy(value) {
  return raw.normalizeStartPolicy(readArg(value, LEAF, 'value'));
}

export function normalizeEndPolicy(value) {
  return raw.normalizeEndPolicy(readArg(value, LEAF, 'value'));
}

/** The longest timer a platform keeps (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2147483647;

/**
 * `boundedLoad(load, timeoutMs)`: waits for a session-list load at most `timeoutMs` and resolves
 * (never rejects) to the `settleSelection` outcome: `{ sessions }`, `{ error }` (the load
 * rejected, threw, or is not a promise) or `{ error: "timeout", timedOut: true }`. NaN or a
 * timeout ≤ 0 times out at once; one beyond a timer's range, or Infinity, waits for the load.
 */
export function boundedLoad(load, timeoutMs) {
  return new Promise((resolve) => {
    let done = false;
    let timer;
    const finish = (outcome) => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      resolve(outcome);
    };
    if (typeof timeoutMs !== 'number' && timeoutMs !== undefined) {
      finish({ error: taskProjectionError('invalid_type', 'timeoutMs', `timeoutMs: expected a number, got ${typeof timeoutMs}`) });
      return;
    }
    let then;
    try {
      if (load !== null && (typeof load === 'object' || typeof load === 'function')) then = load.then;
    } catch (error) {
      finish({ error });
      return;
    }
    if (typeof then !== 'function') {
      finish({ error: taskProjectionError('invalid_type', 'load', `load: expected a promise, got ${typeName(load)}`) });
      return;
    }
    const ms = timeoutMs === undefined || timeoutMs !== timeoutMs || timeoutMs <= 0 ? 0 : timeoutMs;
    if (ms < MAX_TIMER_MS) timer = setTimeout(() => finish({ error: 'timeout', timedOut: true }), Math.ceil(ms));
    try {
      then.call(
        load,
        (sessions) => finish({ sessions }),
        // A rejection without a reason still reads as a failed load.
        (error) => finish({ error: error === undefined ? null : error }),
      );
    } catch (error) {
      finish({ error });
    }
  });
}
