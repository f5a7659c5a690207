// The package's stateless functions: each reads its arguments once onto the tape (./read.js),
// calls the wasm export, which takes them from there, and hands back the caller's own objects
// where the answer is one of them (the export returns their indices). `boundedLoad` is plain JS:
// it runs no engine rule, only waits.
import * as raw from './task_projection.js';
import {
  tape, taskProjectionError, typeName, LEAF, TURN, TURNS, MESSAGE, MESSAGES, SESSIONS, SCOPE, REVISION,
  PROJECTION, TASK, SUMMARY, SESSION_INPUT, RESOLVE_INPUT, SELECTION_INPUT, FETCHED_INPUT,
} from './read.js';

/** The caller's items at `indices` (a Uint32Array from wasm). */
function pick(items, indices) {
  const out = new Array(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = items[indices[i]];
  return out;
}

/** `f()` after one argument went onto the tape. */
function one(f, value, node, name) {
  tape().arg(value, node, name).send();
  return f();
}

/** `f()` after two arguments went onto the tape. */
function two(f, a, nodeA, nameA, b, nodeB, nameB) {
  tape().arg(a, nodeA, nameA).arg(b, nodeB, nameB).send();
  return f();
}

/** No `scope` argument (visibleTurnHistory). */
const NO_SCOPE = {};

/** The caller's elements of `list` at the indices `f` returns (`list` and `scope` on the tape). */
function picked(f, list, node, name, scope) {
  const t = tape();
  const items = t.items(list, node, name);
  if (scope !== NO_SCOPE) t.arg(scope, SCOPE, 'scope');
  t.send();
  return pick(items, f());
}

export function currentTurnId(turns, sessionState) {
  return two(raw.currentTurnId, turns, TURNS, 'turns', sessionState, LEAF, 'sessionState');
}

export function visibleTurnHistory(turns) {
  return picked(raw.visibleTurnHistory, turns, TURN, 'turns', NO_SCOPE);
}

export function findPendingClarification(messages, scope) {
  const t = tape();
  const items = t.items(messages, MESSAGE, 'messages');
  t.arg(scope, SCOPE, 'scope').send();
  const i = raw.findPendingClarification();
  return i < 0 ? null : items[i];
}

export function pendingClarificationBundle(messages, scope) {
  return picked(raw.pendingClarificationBundle, messages, MESSAGE, 'messages', scope);
}

export function visibleTranscriptMessages(messages, scope) {
  return picked(raw.visibleTranscriptMessages, messages, MESSAGE, 'messages', scope);
}

export function hasPendingPermission(messages) {
  return one(raw.hasPendingPermission, messages, MESSAGES, 'messages');
}

export function sessionPendingAction(input) {
  return one(raw.sessionPendingAction, input, SESSION_INPUT, 'input');
}

export function taskPendingAction(sessions) {
  return one(raw.taskPendingAction, sessions, SESSIONS, 'sessions');
}

export function effectiveTaskPendingAction(task) {
  return one(raw.effectiveTaskPendingAction, task, TASK, 'task');
}

export function compareRevisions(a, b) {
  return two(raw.compareRevisions, a, REVISION, 'a', b, REVISION, 'b');
}

export function canReplaceRevision(held, incoming) {
  return two(raw.canReplaceRevision, held, REVISION, 'held', incoming, REVISION, 'incoming');
}

export function mergePendingProjection(held, incoming) {
  return two(raw.mergePendingProjection, held, PROJECTION, 'held', incoming, PROJECTION, 'incoming');
}

export function resolveTaskSessionId(input) {
  return one(raw.resolveTaskSessionId, input, RESOLVE_INPUT, 'input');
}

export function selectionOutcome(input) {
  return one(raw.selectionOutcome, input, SELECTION_INPUT, 'input');
}

export function isNewerStatusSummary(incoming, held) {
  return two(raw.isNewerStatusSummary, incoming, SUMMARY, 'incoming', held, SUMMARY, 'held');
}

/** The summary to hold: the caller's own object (the export returns its index among the kept). */
export function mergeFetchedStatusSummary(input) {
  const kept = tape().arg(input, FETCHED_INPUT, 'input').send();
  const i = raw.mergeFetchedStatusSummary();
  return i < 0 ? null : kept[i];
}

export function normalizeStartPolicy(value) {
  return one(raw.normalizeStartPolicy, value, LEAF, 'value');
}

export function normalizeEndPolicy(value) {
  return one(raw.normalizeEndPolicy, value, LEAF, 'value');
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
