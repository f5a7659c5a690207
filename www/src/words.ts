// Plain words for what the page shows. Wire states, ids and revisions appear only with the
// header's "Details" toggle on; these helpers turn display copies into the user's text.
import type { PendingAction } from 'task-projection';
import type { RespondResult } from 'task-projection/connect';
import type { App, Given } from './app';
import { h } from './dom';
import type { Message, Session } from './wire';
import { isRecord } from './wire';
// The session states in the devtools panel's words (the same file the panel uses).
import { stateWords as panelStateWords } from '/pkg/devtools-words.js';

export const ACTION_LABEL: Record<PendingAction, string> = { clarification: 'Question', permission: 'Permission' };
export const ACTION_TITLE: Record<PendingAction, string> = {
  clarification: 'waiting for your answer',
  permission: 'waiting for your permission',
};

/** A session state in words, as the panel says it (`action`, the store's answer for the session,
 * names what it waits for); '' while the state is not loaded (the page says "Loading…"). */
export function stateWords(state: unknown, action: PendingAction | null | undefined): string {
  if (typeof state !== 'string' || !state) return '';
  // What the session waits for is the store's answer, not the state the page last heard: an answer
  // the reply alone settled (no event since) leaves the state saying it waits.
  if (state === 'WAITING_FOR_INPUT' && action === null) return 'Nothing needs you now';
  if (state === 'WAITING_FOR_INPUT' && action === undefined) return 'Waiting for you (not known yet for what)';
  return panelStateWords(state, action);
}

/** What became of your answer or skip, in words: `kind` `busy` while it is sent, `info` once the
 * question went (yours, another caller's, or no longer open), `error` when it failed or was
 * refused (`retry`: the page offers "Try again"); `code` the wire detail (Details on). */
export interface RespondNotice { kind: 'busy' | 'info' | 'error'; text: string; code: string; retry: boolean }

export function respondNotice(given: Given | undefined, phase: 'in_flight' | 'settled' | 'open' | undefined): RespondNotice | null {
  const skip = given !== undefined && 'reject' in given.body;
  if (phase === 'in_flight') return { kind: 'busy', text: skip ? 'Skipping…' : 'Sending your answer…', code: 'in_flight', retry: false };
  const result = given?.result;
  if (!result) return null;
  const body = isRecord(result.body) ? result.body : {};
  const error = isRecord(body['error']) && typeof body['error']['code'] === 'string' ? body['error']['code'] : '';
  const code = [result.status === null ? 'no reply' : `HTTP ${result.status}`, error, result.failure ?? result.outcome].filter(Boolean).join(' · ');
  const yours = skip ? 'your skip' : 'your answer';
  switch (result.outcome) {
    case 'won':
      return { kind: 'info', text: skip ? 'Skipped.' : 'Answer delivered.', code, retry: false };
    case 'lost':
      return {
        kind: 'info',
        text: body['status'] === 'rejected'
          ? 'Already skipped elsewhere (another tab or person): that counts.'
          : 'Already answered elsewhere (another tab or person): that answer counts.',
        code, retry: false,
      };
    case 'no_longer_active':
      return { kind: 'info', text: `This question is no longer open (answered, skipped or overtaken): ${yours} was not used.`, code, retry: false };
    case 'refused':
      return { kind: 'error', text: `The server refused ${yours}.`, code, retry: true };
    case 'failed':
      return { kind: 'error', text: FAILURE_WORDS[result.failure ?? 'unreadable'].replace('{yours}', yours), code, retry: true };
  }
}

const FAILURE_WORDS: Record<NonNullable<RespondResult['failure']>, string> = {
  retryable: 'Not delivered: the server could not take {yours} right now.',
  server_error: 'The server had a problem: {yours} may not have been delivered.',
  network: 'No reply: the server could not be reached, {yours} may not have been delivered.',
  timeout: 'No reply in time: {yours} may not have been delivered.',
  unreadable: 'The server’s reply could not be read: whether it took {yours} is not known.',
};

/** Turns numbered as the transcript shows them ("Turn 2"): by the order their first message appears. */
export function turnNumbers(messages: readonly Message[]): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const m of messages) if (m.turn_id && !numbers.has(m.turn_id)) numbers.set(m.turn_id, numbers.size + 1);
  return numbers;
}

/** A detail (id, wire state, revision): rendered only with "Details" on. */
export const detail = (app: App, text: string) => (app.details ? h('span', { class: 'detail', 'data-testid': 'detail' }, text) : null);

export const shortId = (id: string) => (id.length > 14 ? `${id.slice(0, 12)}…` : id);

export const isPrimary = (s: Session | undefined) =>
  s?.is_primary === true || s?.is_primary === 1 || s?.is_primary === 'true' || s?.is_primary === '1';

/** The session's name: its agent profile, else "Main session" / "Other session". */
export function sessionLabel(s: Session | undefined): string {
  const name = s?.agent_profile_id || s?.profile;
  if (!name) return isPrimary(s) ? 'Main session' : 'Other session';
  return isPrimary(s) ? `${name} (main)` : name;
}

export const messageText = (m: Message | undefined) => (m ? String(m.content ?? m.text ?? m.metadata?.question ?? '') : '');

const QUESTION_STATUS: Record<string, string> = { answered: 'Answered', rejected: 'Skipped', pending: 'No longer answerable' };
const PERMISSION_STATUS: Record<string, string> = { approved: 'Approved', rejected: 'Denied' };

/** The tag of a question shown as history (not the open one): answered, skipped, or overtaken. */
export const questionTag = (status: string) => QUESTION_STATUS[status] ?? 'Closed';
export const permissionTag = (status: string) => PERMISSION_STATUS[status] ?? null;

/** `{"answers": [{question_id, answer}]}` (a respond body, as the server keeps it) → question_id → text. */
export function answersOf(body: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const list = isRecord(body) ? body['answers'] : undefined;
  if (Array.isArray(list)) {
    for (const a of list) {
      if (isRecord(a) && typeof a['question_id'] === 'string' && typeof a['answer'] === 'string') found.set(a['question_id'], a['answer']);
    }
  }
  return found;
}

/**
 * The user's text of a message. A resumed answer from an older server was the respond body's JSON
 * (`Answers to <id>: {"answers": [...]}`): shown as the answers themselves.
 */
export function userText(m: Message): string {
  const raw = messageText(m);
  const legacy = /^Answers to \S+: (\{.*\})$/s.exec(raw);
  if (!legacy?.[1]) return raw;
  try {
    const answers = [...answersOf(JSON.parse(legacy[1])).values()];
    if (answers.length === 1) return answers[0] ?? raw;
    if (answers.length > 1) return answers.map((a, i) => `${i + 1}. ${a}`).join('\n');
  } catch {
    // not JSON after all: the text as it is
  }
  return raw;
}

// ---- the page's log of what it did (its "Log" below the page): each entry in words, its code kept in
// `data-reason` (and shown with "Details" on) ----------------------------------------------------

/** What became of an input or an action, by the code the store (or the page) gave it. */
const REASON_WORDS: Record<string, string> = {
  // what the store did with an input (`lastReason()`, `applyFrame`'s outcome)
  applied: 'taken',
  unchanged: 'already known, nothing changed',
  older_revision_rejected: 'ignored (older than what the page holds)',
  older_update_carries_no_projection: 'ignored (an older copy of a message)',
  older_state_ignored: 'ignored (an older state than the one shown)',
  deleted_message_stays_deleted: 'ignored (that message was deleted)',
  task_mismatch_rejected: 'ignored (it names another task than its session’s)',
  task_removed: 'ignored (the task was deleted)',
  buffered_until_session_list: 'kept until the task’s sessions load',
  buffered_until_turn_list: 'kept until the session’s turns load',
  unknown_fetch_token: 'ignored (the page no longer waits for that load)',
  not_stored: 'shown only, not kept',
  unknown_frame_type: 'ignored (a kind of update the engine does not know)',
  first_hello: 'first connection, the page loads what it shows',
  same_epoch: 'connected again to the same server run, the page loads what it shows again',
  new_epoch: 'the server restarted, the page loads what it shows again',
  resumed: 'connected again, nothing was missed',
  // which session a click on a task opens (`settleSelection`)
  pending_owner: 'opens the session that waits for you',
  owner_not_input_capable: 'opens the task only (no session can take your answer now)',
  preferred_session: 'opens the session you had open last',
  preferred_not_listed: 'opens the session you had open last',
  primary_session: 'opens the main session',
  first_listed_session: 'opens the newest session',
  no_session: 'opens the task only (it has no session yet)',
  superseded_by_newer_selection: 'nothing (you picked another task since)',
  active_task_changed: 'nothing (you moved to another task)',
  aborted: 'nothing (the load was stopped)',
  task_gone: 'nothing (the task is gone)',
  task_changed_during_load: 'opens the task only (what it waits for changed while its sessions loaded)',
  load_failed_pending_task: 'opens the task only (its sessions did not load)',
  load_failed_clean_task: 'opens the session you had open last, if any (its sessions did not load)',
  ticket_not_current: 'nothing (a newer click counts)',
  // the page's own codes
  load_failed: 'failed (see the message at the top)',
  rejected_input: 'refused (the engine could not read it)',
  // your answers and skips (the package's `respond`: the store's outcome of the reply)
  respond_won: 'delivered',
  respond_lost: 'already answered elsewhere (that answer counts)',
  respond_no_longer_active: 'not used (the question is no longer open)',
  respond_refused: 'refused by the server',
  respond_failed: 'not delivered (try again)',
  bundle_not_live: 'not sent (the question is no longer open)',
  live_question_unknown: 'not sent (the question is not known yet)',
  simulator_ok: 'done',
  simulator_failed: 'failed',
};

/** A log entry's code in words (codes the table lacks: their words, spelled out). */
export const reasonWords = (code: string) => REASON_WORDS[code] ?? REASON_WORDS[code.split(':')[0] ?? ''] ?? code.replace(/[_:.]+/g, ' ');

/** What a WebSocket frame is, by its `type`, before what it is about ("A new message in …"). */
const FRAME_WORDS: Record<string, string> = {
  'session.message.added': 'A new message in',
  'session.message.updated': 'A message update in',
  'session.message.deleted': 'A message deletion in',
  'turn.started': 'A turn start in',
  'turn.completed': 'A turn end in',
  'session.created': 'The creation of',
  'session.state_changed': 'A state change of',
  'task.status_summary.updated': 'A summary update of',
  'task.updated': 'An update of',
  'task.deleted': 'The deletion of',
  'task.stalled': 'A stall report about',
};
/** A frame in words: `about` names the session or task it is about (short labels). */
export const frameWords = (type: string, about: string) => `${FRAME_WORDS[type] ?? 'An update of an unknown kind about'} ${about}`;
