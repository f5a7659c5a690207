// The devtools panel's words (`task-projection/devtools`, js/devtools-dom.js): the store's answers
// and explanations (`explain`, `explainOwner`) in plain words; the repository's demo page and its
// inspector word session states and reasons with them too (served at /pkg/devtools-words.js).
// Codes (reasons, standings, states, revisions) never appear in these words: the panel puts them
// in its smaller "details" lines.

/** What a session or task waits for (`sessionPendingAction`, `taskPendingAction`). */
export function actionWords(action) {
  if (action === undefined) return 'not known yet';
  if (action === null) return 'nothing';
  if (action === 'clarification') return 'your answer';
  if (action === 'permission') return 'your permission';
  return 'something this panel has no words for';
}

/** `pendingClarification`'s answer. */
export function questionWords(bundle) {
  if (bundle === undefined) return 'not known yet';
  if (bundle === null) return 'none shown';
  const n = bundle.message_ids.length;
  return n === 1 ? '1 question shown' : `${n} questions shown together`;
}

/** `currentTurnId`'s answer (an id: the app's own data, not a code). */
export function turnWords(turn) {
  if (turn === undefined) return 'not known yet';
  return turn === null ? 'none' : turn;
}

/** `hasPendingPermission`'s answer. */
export function permissionWords(pending) {
  if (pending === undefined) return 'not known yet';
  return pending ? 'yes, one waits' : 'none waits';
}

/** `pendingOwner`'s answer. */
export function ownerWords(owner) {
  if (owner === undefined) return 'not known yet';
  return owner === '' ? 'the task itself (no session to open)' : owner;
}

/** `taskStatusSummary`'s answer (the app's own object). */
export function summaryWords(summary) {
  if (summary === undefined) return 'not known yet';
  if (summary === null) return 'none';
  return 'held';
}

const STATE_WORDS = {
  CREATED: 'New',
  STARTING: 'Starting',
  RUNNING: 'Working',
  IDLE: 'Idle',
  WAITING_FOR_INPUT: 'Waiting for your answer',
  COMPLETED: 'Finished',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
};

/** A session state in words; `action` names what it waits for. */
export function stateWords(state, action) {
  if (typeof state !== 'string' || !state) return 'state not known yet';
  if (state === 'WAITING_FOR_INPUT' && action === 'permission') return 'Waiting for your permission';
  return STATE_WORDS[state] ?? 'Unknown state';
}

export const TURN_WHY = {
  open_turn_outranks_completed: 'an open turn comes before finished ones, however recent those are',
  newest_turn: 'it is the newest turn that counts',
  session_not_input_capable: 'the session is neither working nor waiting for you, so none of its turns takes an answer',
  no_eligible_turn: 'no turn counts yet',
  turn_history_not_loaded: 'its turns have not loaded yet',
  awaiting_session_list: 'the session list has not loaded yet',
  awaiting_turn_list: 'its turns have not loaded yet',
  awaiting_message_page: 'its messages have not loaded yet',
  task_removed: 'the task was deleted',
};

export const TURN_STANDING = {
  current: 'current',
  lifecycle_skipped: 'skipped: a bookkeeping record, never current',
  unpublished_reservation: 'skipped: reserved, nothing sent in it yet',
  quarantined: 'set aside: the session is neither working nor waiting',
  outranked: 'not current: earlier, or finished',
};

export const QUESTION_WHY = {
  active_bundle: 'the open question of the current turn is shown',
  no_pending_request: 'nothing in the current turn waits for an answer',
  bundle_incomplete: 'questions asked together show once they have all arrived',
  projection_not_clarification: 'the server says the session waits for no answer now',
  no_current_turn: 'no turn is current, so no question is shown',
  authority_unknown: 'which turn is current is not known yet, so no question is shown',
  awaiting_session_list: 'the session list has not loaded yet, so no question is shown',
  awaiting_turn_list: 'its turns have not loaded yet, so no question is shown',
  awaiting_message_page: 'its messages have not loaded yet, so no question is shown',
  session_not_input_capable: 'the session is neither working nor waiting for you, so no question is shown',
  terminal_session: 'the session has ended, so no question is shown',
  task_removed: 'the task was deleted',
};

export const REQUEST_STANDING = {
  in_bundle: 'shown: open in the current turn',
  not_current_turn: 'not shown: from an earlier turn, overtaken',
  bundle_incomplete: 'not shown yet: waiting for the rest of its questions',
  newer_request_chosen: 'not shown: a newer question in the same turn replaced it',
  discovery_closed: 'not shown: the session does not wait for an answer now',
};

/** Why a session waits (or not) for something (`sessionPendingAction`). */
export const ACTION_WHY = {
  authoritative_projection: 'the server’s latest word on the session says so',
  terminal_session: 'the session has ended',
  session_not_input_capable: 'the session is neither working nor waiting for you',
  no_current_turn: 'no turn is current',
  pending_clarification_in_current_turn: 'a question of the current turn is open',
  latest_permission_pending: 'the latest permission request of the current turn is open',
  nothing_pending_in_current_turn: 'nothing in the current turn is open',
  awaiting_session_list: 'the session list has not loaded yet',
  awaiting_turn_list: 'its turns have not loaded yet',
  awaiting_message_page: 'its messages have not loaded yet',
  task_removed: 'the task was deleted',
};

/** Why a permission is pending or not (`hasPendingPermission`). */
export const PERMISSION_WHY = {
  newest_permission_pending: 'the newest permission request waits for you',
  no_pending_permission: 'no permission request waits',
  latest_permission_pending: 'the latest permission request of the current turn is open',
  session_not_input_capable: 'the session is neither working nor waiting for you',
  terminal_session: 'the session has ended',
  no_current_turn: 'no turn is current',
  authority_unknown: 'which turn is current is not known yet',
  awaiting_session_list: 'the session list has not loaded yet',
  awaiting_turn_list: 'its turns have not loaded yet',
  awaiting_message_page: 'its messages have not loaded yet',
  task_removed: 'the task was deleted',
};

/** Why a task waits (or not) for something (`taskPendingAction`). */
export const TASK_ACTION_WHY = {
  status_summary_action: 'the task’s summary says so',
  legacy_task_action: 'the task says so itself (it has no summary)',
  derived_from_sessions: 'from what its sessions wait for',
  awaiting_task: 'the page does not know this task yet',
  awaiting_session_list: 'the task’s sessions have not loaded yet',
  task_removed: 'the task was deleted',
};

export const OWNER_WHY = {
  pending_owner: 'it is the session that waits for you',
  owner_not_input_capable: 'the session that waited is neither working nor waiting now, so the task opens without one',
  preferred_session: 'it is the one you opened last',
  primary_session: 'it is the main session',
  first_listed_session: 'it is the newest session',
  preferred_not_listed: 'the one you opened last is not in the task’s list yet',
  no_session: 'the task has no session yet',
  awaiting_task: 'the page does not know this task yet',
  awaiting_session_list: 'the task’s sessions have not loaded yet',
  task_removed: 'the task was deleted',
};

/** The inputs an unknown answer awaits (an explanation's `missing`). */
export const MISSING_WORDS = {
  awaiting_session_list: 'the session list',
  awaiting_turn_list: 'its turns',
  awaiting_message_page: 'a page of its messages',
  awaiting_task: 'the task itself (its list, a summary or an update)',
};

export const INPUT_WORDS = {
  session_list: 'A session list',
  'session.updated': 'A session update',
  'session.message.added': 'A new message',
  'session.message.updated': 'A message update',
  'session.message.deleted': 'A message deletion',
  'task.status_summary.updated': 'A task summary',
  snapshot: 'Another page’s snapshot',
};

export const REJECTED_WHY = {
  older_revision_rejected: 'was older than what the page already had',
  older_update_carries_no_projection: 'was an older copy of a message',
  older_state_ignored: 'carried an older state than the one shown',
  deleted_message_stays_deleted: 'was about a message already deleted',
  task_mismatch_rejected: 'named another task than its session’s',
  task_removed: 'was about a deleted task',
};

export const DETAIL_WORDS = {
  older_epoch: 'from before the server restarted',
  older_sequence: 'an earlier update',
  malformed_epoch: 'with an unreadable revision',
};

/** The connection's states (`connect()`'s `state()`). */
export const CONNECTION_WORDS = {
  connecting: 'connecting…',
  open: 'open',
  waiting: 'closed, retrying soon',
  closed: 'closed',
};

/** `table[code]`, or words that say there are none (the code itself goes to the details line). */
export const words = (table, code) => (Object.prototype.hasOwnProperty.call(table, code) ? table[code] : 'for a reason this panel has no words for (see the details)');

/** An input's name, with the fallback of `words`. */
export const inputWords = (input) => (Object.prototype.hasOwnProperty.call(INPUT_WORDS, input) ? INPUT_WORDS[input] : 'An input');

/** A revision of an explanation, for a details line. */
export const revisionText = (r) => (r === null || r === undefined ? '—' : typeof r === 'object' ? `epoch ${r.epoch} · ${String(r.sequence)}` : String(r));
