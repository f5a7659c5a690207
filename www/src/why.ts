// The "Why?" panel: the store's own explanations (`store.explain(sessionId)`,
// `store.explainOwner(taskId)`) in words. Every "why" comes from the package; this file only
// words it. Codes stay on the elements (`data-standing`, `data-reason`) for tests and devtools;
// ids, states and revisions show only with the header's "Details" toggle on.
import type { OwnerExplanation, Reason, RejectedInput, RequestStanding, SessionExplanation, TurnStanding } from 'task-projection';
import type { App } from './app';
import { h } from './dom';
import { ACTION_TITLE, detail, messageText, sessionLabel, shortId, turnNumbers } from './words';

export const TURN_WHY: Partial<Record<Reason, string>> = {
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

export const TURN_STANDING: Record<TurnStanding, string> = {
  current: 'current',
  lifecycle_skipped: 'skipped: a bookkeeping record, never current',
  unpublished_reservation: 'skipped: reserved, nothing sent in it yet',
  quarantined: 'set aside: the session is neither working nor waiting',
  outranked: 'not current: earlier, or finished',
};

export const QUESTION_WHY: Partial<Record<Reason, string>> = {
  active_bundle: 'the open question of the current turn is shown',
  no_pending_request: 'nothing in the current turn waits for an answer',
  bundle_incomplete: 'questions asked together show once they have all arrived',
  projection_not_clarification: 'the server says the session waits for no answer now',
  no_current_turn: 'no turn is current, so no question is shown',
  authority_unknown: 'which turn is current is not known yet, so no question is shown',
  awaiting_turn_list: 'its turns have not loaded yet, so no question is shown',
  awaiting_message_page: 'its messages have not loaded yet, so no question is shown',
  task_removed: 'the task was deleted',
};

export const REQUEST_STANDING: Record<RequestStanding, string> = {
  in_bundle: 'shown: open in the current turn',
  not_current_turn: 'not shown: from an earlier turn, overtaken',
  bundle_incomplete: 'not shown yet: waiting for the rest of its questions',
  newer_request_chosen: 'not shown: a newer question in the same turn replaced it',
  discovery_closed: 'not shown: the session does not wait for an answer now',
};

const INPUT_WORDS: Record<RejectedInput['input'], string> = {
  session_list: 'A session list',
  'session.updated': 'A session update',
  'session.message.added': 'A new message',
  'session.message.updated': 'A message update',
  'session.message.deleted': 'A message deletion',
  'task.status_summary.updated': 'A task summary',
};

const REJECTED_WHY: Partial<Record<Reason, string>> = {
  older_revision_rejected: 'was older than what the page already had',
  older_update_carries_no_projection: 'was an older copy of a message',
  older_state_ignored: 'carried an older state than the one shown',
  deleted_message_stays_deleted: 'was about a message already deleted',
  task_mismatch_rejected: 'named another task than its session’s',
  task_removed: 'was about a deleted task',
};

const DETAIL_WORDS: Record<NonNullable<RejectedInput['detail']>, string> = {
  older_epoch: 'from before the server restarted',
  older_sequence: 'an earlier update',
  malformed_epoch: 'with an unreadable revision',
};

export const OWNER_WHY: Partial<Record<Reason, string>> = {
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

export const words = (table: Partial<Record<Reason, string>>, reason: Reason) => table[reason] ?? reason.replaceAll('_', ' ');

const revisionText = (r: RejectedInput['revision']) =>
  r === null ? '—' : typeof r === 'object' ? `epoch ${r.epoch} · ${String(r.sequence)}` : String(r);

/** A turn's name as the transcript shows it ("Turn 2"), by the order its messages appear. */
function turnNames(app: App, sessionId: string): (turnId: string) => string {
  const numbers = turnNumbers(app.transcript(sessionId));
  return (turnId) => {
    const n = numbers.get(turnId);
    return n === undefined ? 'A turn with no messages' : `Turn ${n}`;
  };
}

function sessionWhy(app: App, e: SessionExplanation): HTMLElement[] {
  const turnName = turnNames(app, e.session_id);
  const current = e.current_turn.id ? turnName(e.current_turn.id) : 'No turn';
  const out: HTMLElement[] = [
    h('p', { 'data-testid': 'why-current-turn', 'data-reason': e.current_turn.reason },
      h('strong', {}, current), ' is current: ', words(TURN_WHY, e.current_turn.reason), '.'),
  ];
  if (e.turns.length > 1 || e.turns.some((t) => t.standing !== 'current' && t.standing !== 'outranked')) {
    out.push(h('ul', { class: 'why-list', 'data-testid': 'why-turns' }, e.turns.map((t) =>
      h('li', { 'data-standing': t.standing, 'data-turn-id': t.id }, `${turnName(t.id)}: ${TURN_STANDING[t.standing]}`, detail(app, t.id)))));
  }
  out.push(h('p', { 'data-testid': 'why-question', 'data-reason': e.clarification.reason },
    h('strong', {}, 'Question: '), words(QUESTION_WHY, e.clarification.reason), '.'));
  if (e.requests.length) {
    out.push(h('ul', { class: 'why-list', 'data-testid': 'why-requests' }, e.requests.map((r) => {
      const text = messageText(app.messages.get(e.session_id)?.get(r.id)?.value) || 'A question';
      return h('li', { 'data-standing': r.standing, 'data-message-id': r.id },
        `“${text.length > 60 ? `${text.slice(0, 57)}…` : text}” (${r.turn_id ? turnName(r.turn_id) : 'no turn'}): ${REQUEST_STANDING[r.standing]}`,
        detail(app, r.pending_id ?? ''));
    })));
  }
  // What the server last said about the session (its projection), in words; the action and the
  // revision it carried only as a detail.
  const { known, action, revision } = e.projection;
  const held = revision ? `epoch ${revision.epoch} · sequence ${String(revision.sequence)}` : 'no revision';
  out.push(h('p', { 'data-testid': 'why-projection', 'data-action': known ? (action ?? 'none') : 'unknown' },
    h('strong', {}, 'The server’s last word: '),
    !known ? 'not received yet.' : action ? `the session is ${ACTION_TITLE[action]}.` : 'nothing in the session waits for you.',
    detail(app, `projection ${known ? (action ?? 'clean') : 'unknown'} · ${held}`)));
  out.push(h('p', { 'data-testid': 'why-rejected', 'data-count': String(e.rejected.length) },
    h('strong', {}, 'Late updates ignored: '), e.rejected.length ? String(e.rejected.length) : 'none', '.'));
  if (e.rejected.length) {
    out.push(h('ul', { class: 'why-list', 'data-testid': 'why-rejected-list' }, e.rejected.slice(0, 8).map((r) =>
      h('li', { 'data-reason': r.reason, 'data-input': r.input },
        `${INPUT_WORDS[r.input]} ${words(REJECTED_WHY, r.reason)}${r.detail ? ` (${DETAIL_WORDS[r.detail]})` : ''}.`,
        detail(app, `${revisionText(r.revision)} < held ${revisionText(r.held)}`)))));
  }
  return out;
}

function ownerWhy(app: App, e: OwnerExplanation): HTMLElement[] {
  const owner = e.owner.session_id;
  const target = owner ? sessionLabel(app.session(owner)) : 'the task itself';
  // The task's own late updates (its summary); its sessions' are listed under the session.
  const summaries = e.rejected.filter((r) => r.input === 'task.status_summary.updated').length;
  return [
    h('p', { 'data-testid': 'why-owner', 'data-reason': e.owner.reason },
      h('strong', {}, 'Clicking the task opens '), target, ': ', words(OWNER_WHY, e.owner.reason), '.',
      owner ? detail(app, shortId(owner)) : null),
    summaries
      ? h('p', { 'data-testid': 'why-summary-rejected', 'data-count': String(summaries) },
        h('strong', {}, 'Late updates of the task’s summary ignored: '), String(summaries), '.')
      : null,
  ].filter((x): x is HTMLParagraphElement => x !== null);
}

/**
 * Renders the panel for the task and session being viewed, while it is open (an explanation reads
 * every pending question of the session: not worth it for a closed panel). `render(key, build)`
 * rebuilds only when the key changes.
 */
export function renderWhy(
  app: App, sessionId: string | null, taskId: string | null,
  render: (key: string, build: () => HTMLElement[]) => void,
): void {
  const { store } = app;
  const owner = taskId ? store.explainOwner(taskId) : null;
  const session = sessionId ? store.explain(sessionId) : null;
  const key = JSON.stringify([owner, session, app.details, sessionId ? app.transcript(sessionId).length : 0]);
  render(key, () => {
    const out: HTMLElement[] = [];
    if (owner) out.push(...ownerWhy(app, owner));
    if (session) out.push(...sessionWhy(app, session));
    if (!out.length) out.push(h('p', { class: 'muted' }, 'Open a task to see why it shows what it shows.'));
    return out;
  });
}
