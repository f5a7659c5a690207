// Plain words for what the page shows. Wire states, ids and revisions appear only with the
// header's "Details" toggle on; these helpers turn display copies into the user's text.
import type { PendingAction } from 'task-projection';
import type { App } from './app';
import { h } from './dom';
import type { Message, Session } from './wire';
import { isRecord } from './wire';

export const ACTION_LABEL: Record<PendingAction, string> = { clarification: 'Question', permission: 'Permission' };
export const ACTION_TITLE: Record<PendingAction, string> = {
  clarification: 'waiting for your answer',
  permission: 'waiting for your permission',
};

const STATE_WORDS: Record<string, string> = {
  CREATED: 'New',
  STARTING: 'Starting',
  RUNNING: 'Working',
  IDLE: 'Idle',
  WAITING_FOR_INPUT: 'Waiting for your answer',
  COMPLETED: 'Finished',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
};

/** A session state in words; `action` (the store's answer for the session) names what it waits for. */
export function stateWords(state: unknown, action: PendingAction | null | undefined): string {
  if (typeof state !== 'string' || !state) return '';
  if (state === 'WAITING_FOR_INPUT' && action === 'permission') return 'Waiting for your permission';
  return STATE_WORDS[state] ?? 'Unknown state';
}

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
