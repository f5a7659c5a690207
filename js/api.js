// The stateless rule functions (`task-projection/rules`): each reads its arguments once onto the
// tape (./read.js), calls the wasm export of the rules module, which takes them from there, and
// hands back the caller's own objects where the answer is one of them (the export returns their
// indices).
import * as raw from './task_projection.js';
import {
  tape, LEAF, TURN, TURNS, MESSAGE, MESSAGES, SESSIONS, SCOPE, REVISION,
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
  const kept = tape(true).arg(input, FETCHED_INPUT, 'input').send();
  const i = raw.mergeFetchedStatusSummary();
  return i < 0 ? null : kept[i];
}

export function normalizeStartPolicy(value) {
  return one(raw.normalizeStartPolicy, value, LEAF, 'value');
}

export function normalizeEndPolicy(value) {
  return one(raw.normalizeEndPolicy, value, LEAF, 'value');
}
