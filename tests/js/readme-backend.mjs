// The backend the consumer README's examples talk to (docs/package-readme.md): the reference
// server's REST answers and WebSocket frames (docs/server-api.md) for one task whose agent asks a
// two-question bundle. Served by a fake `fetch` / `WebSocket` in Node (tests/js/readme-preamble.mjs)
// and by Playwright's request and WebSocket routing in Chromium (tests/packaging/next.test.mjs).
// Ids and expected answers here are the ones the README's examples print.

const at = (second) => `2026-12-01T09:00:${String(second).padStart(2, '0')}.000000000Z`;
const revision = (sequence) => ({ epoch: '1733043600', sequence });

const task = {
  id: 'task-1', workspace_id: 'ws-1', title: 'Move billing to the new database', archived: false,
  created_at: at(0), updated_at: at(1), status_summary: { revision: 3, updated_at: at(1), pending_action: null },
  task_pending_action: null, primary_session_pending_action: null,
};
const session = {
  id: 'sess-1', task_id: 'task-1', state: 'RUNNING', started_at: at(1), updated_at: at(2), completed_at: null,
  is_primary: true, pending_action: null, pending_action_revision: revision(4),
};
const turn = {
  id: 'turn-1', session_id: 'sess-1', task_id: 'task-1', started_at: at(2), completed_at: null, created_at: at(2),
  updated_at: at(2), metadata: {},
};
const prompt = {
  id: 'm-1', session_id: 'sess-1', task_id: 'task-1', turn_id: 'turn-1', author_type: 'user', type: 'message',
  metadata: {}, content: 'Move billing to Postgres 17.', created_at: at(2), updated_at: at(2),
};

/** The agent's two questions (message id -> content), as the README's page shows them. */
export const QUESTION_TEXT = {
  'q-1': 'Which region should the new database run in?',
  'q-2': 'May I drop the legacy audit table?',
};

const question = (id, index, sequence, content) => ({
  message_id: id, session_id: 'sess-1', task_id: 'task-1', turn_id: 'turn-1', author_type: 'agent',
  type: 'clarification_request',
  metadata: { pending_id: 'p-1', question_id: id, question_index: index, question_total: 2, status: 'pending' },
  content, created_at: at(5 + index), updated_at: at(5 + index),
  pending_action: 'clarification', pending_action_revision: revision(sequence),
});

/**
 * The server's event stream and the offset of its last event (when the REST state below was
 * read): `GET /tasks` says so (`stream`, `offset`), and a connection that asks to resume from there
 * (`?since=40&stream=s-1`) is answered `resumed: true` (helloFor).
 */
export const STREAM = 's-1';
export const OFFSET = 40;

/** REST: path below `/api/v1` -> JSON body. Before the agent asks: nothing needs the user. */
export const REST = {
  '/tasks': { tasks: [task], stream: STREAM, offset: OFFSET },
  '/tasks/task-1/task-sessions': { sessions: [session] },
  '/task-sessions/sess-1/turns': { turns: [turn] },
  '/task-sessions/sess-1/messages': { messages: [prompt] },
};

/** A REST message row of a question (`id`, no projection fields), as `GET …/messages` lists it. */
const questionRow = (...args) => {
  const { message_id: id, pending_action: _action, pending_action_revision: _revision, ...row } = question(...args);
  return { id, ...row };
};

/**
 * REST once the agent has asked (the state FRAMES lead to): the session waits for the two-question
 * bundle, the task's summary says so. A page opened now needs no WebSocket to show the question.
 */
export const REST_ASKED = {
  '/tasks': {
    tasks: [{
      ...task, updated_at: at(7), status_summary: { revision: 4, updated_at: at(7), pending_action: 'clarification' },
      task_pending_action: 'clarification', primary_session_pending_action: 'clarification',
    }],
    stream: STREAM,
    offset: OFFSET,
  },
  '/tasks/task-1/task-sessions': {
    sessions: [{ ...session, state: 'WAITING_FOR_INPUT', updated_at: at(7), pending_action: 'clarification', pending_action_revision: revision(7) }],
  },
  '/task-sessions/sess-1/turns': { turns: [turn] },
  '/task-sessions/sess-1/messages': { messages: [prompt, questionRow('q-1', 0, 5, QUESTION_TEXT['q-1']), questionRow('q-2', 1, 6, QUESTION_TEXT['q-2'])] },
};

/** A second task of the workspace, whose agent asks one question (the README's pages link to it). */
export const SECOND_TASK = { id: 'task-2', title: 'Rotate the API keys', question: 'Should the old keys keep working for a day?' };

/**
 * REST_ASKED with SECOND_TASK in it too: the task list holds both (its stream position unchanged),
 * and task-2's session waits for its one-question bundle (p-2: q-3).
 */
export const REST_TWO = {
  ...REST_ASKED,
  '/tasks': {
    ...REST_ASKED['/tasks'],
    tasks: [
      ...REST_ASKED['/tasks'].tasks,
      {
        ...task, id: 'task-2', title: SECOND_TASK.title, updated_at: at(9),
        status_summary: { revision: 2, updated_at: at(9), pending_action: 'clarification' },
        task_pending_action: 'clarification', primary_session_pending_action: 'clarification',
      },
    ],
  },
  '/tasks/task-2/task-sessions': {
    sessions: [{ ...session, id: 'sess-2', task_id: 'task-2', state: 'WAITING_FOR_INPUT', updated_at: at(9), pending_action: 'clarification', pending_action_revision: revision(9) }],
  },
  '/task-sessions/sess-2/turns': { turns: [{ ...turn, id: 'turn-2', session_id: 'sess-2', task_id: 'task-2' }] },
  '/task-sessions/sess-2/messages': {
    messages: [{
      id: 'q-3', session_id: 'sess-2', task_id: 'task-2', turn_id: 'turn-2', author_type: 'agent', type: 'clarification_request',
      metadata: { pending_id: 'p-2', question_id: 'q-3', question_index: 0, question_total: 1, status: 'pending' },
      content: SECOND_TASK.question, created_at: at(8), updated_at: at(8),
    }],
  },
};

/** WebSocket `/api/v1/ws`: `server.hello` first (as on every connection), then the agent asks. */
export const FRAMES = [
  { type: 'server.hello', payload: { epoch: '1733043600', started_at: at(0) } },
  { type: 'session.message.added', payload: question('q-1', 0, 5, QUESTION_TEXT['q-1']) },
  { type: 'session.message.added', payload: question('q-2', 1, 6, QUESTION_TEXT['q-2']) },
  {
    type: 'session.state_changed',
    payload: {
      session_id: 'sess-1', task_id: 'task-1', workspace_id: 'ws-1', state: 'WAITING_FOR_INPUT', previous_state: 'RUNNING',
      reason: 'clarification_requested', updated_at: at(7), pending_action: 'clarification', pending_action_revision: revision(7),
    },
  },
  { type: 'task.status_summary.updated', payload: { task_id: 'task-1', workspace_id: 'ws-1', status_summary: { revision: 4, updated_at: at(7), pending_action: 'clarification' } } },
];

/**
 * The `server.hello` a connection to `url` gets from a server whose stream is STREAM at OFFSET:
 * `resumed: true` when it asks to resume from there (`?since=40&stream=s-1`: no event since, so
 * none to replay), else a fresh start (the client refetches everything).
 */
export function helloFor(url) {
  const query = new URL(String(url), 'http://localhost').searchParams;
  const resumed = query.get('stream') === STREAM && query.get('since') === String(OFFSET);
  return { type: 'server.hello', payload: { epoch: '1733043600', started_at: at(0), stream: STREAM, offset: OFFSET, resumed } };
}

/** Milliseconds between two frames of FRAMES (the REST refetch the hello asks for runs meanwhile). */
export const FRAME_GAP_MS = 20;

/** The REST body for a URL (absolute or a path) under `/api/v1`, or `undefined`; `rest`: REST or REST_ASKED. */
export function restBody(url, rest = REST) {
  const { pathname } = new URL(String(url), 'http://localhost');
  const at = pathname.indexOf('/api/v1/');
  return at < 0 ? undefined : rest[pathname.slice(at + '/api/v1'.length)];
}

/**
 * The reference server's reply to `POST /api/v1/clarification/:pending_id/respond` (server/src/http/
 * actions.rs, docs/server-api.md "Respond replies") for the bundle REST_ASKED holds (p-1: q-1, q-2),
 * as `{ status, body }`. `kind` is how the server handled it: `claimed` (this answer won: 200),
 * `not_active` (no longer active, no winner: 409), `retryable` (claimed, the handoff to the detached
 * agent failed, the bundle is answerable again: 503). A body that is not `{ answers }` answering q-1
 * and q-2 once each (string `question_id` and `answer`) or `{ reject: true }` is 400 `bad_request`;
 * another bundle is 404. Replies that are not 5xx carry the server's position after the call: the
 * session's projection (nothing pending, revision 8) and the task's status summary.
 */
export function respondReply(pendingId, body, kind = 'claimed') {
  if (pendingId !== 'p-1') return { status: 404, body: { error: { code: 'not_found', message: `no clarification bundle ${pendingId}` } } };
  const reject = body !== null && typeof body === 'object' && body.reject === true && !('answers' in body);
  const answers = body?.answers;
  const ids = Array.isArray(answers) ? answers.map((a) => a?.question_id) : [];
  const wellFormed = Array.isArray(answers) && !('reject' in body) && answers.every((a) => typeof a?.question_id === 'string' && typeof a?.answer === 'string');
  if (!reject && !(wellFormed && ids.length === 2 && ids.includes('q-1') && ids.includes('q-2'))) {
    return { status: 400, body: { error: { code: 'bad_request', message: 'expected {"answers": [{"question_id", "answer"}, ...]} answering q-1 and q-2 once each, or {"reject": true}' } } };
  }
  const position = {
    session: { id: 'sess-1', task_id: 'task-1', pending_action: null, pending_action_revision: revision(8) },
    status_summary: { revision: 5, updated_at: at(9), pending_action: null },
  };
  if (kind === 'claimed') {
    const status = reject ? 'rejected' : 'answered';
    const byId = new Map((answers ?? []).map((a) => [a.question_id, a.answer]));
    const response = {
      pending_id: 'p-1',
      answers: reject ? [] : ['q-1', 'q-2'].map((id) => ({ question_id: id, selected_options: [], custom_text: byId.get(id) })),
      rejected: reject, reject_reason: '', responded_at: at(9),
    };
    return { status: 200, body: { result: 'success', state: 'active_live', outcome: 'success', success: true, claimed: true, status, response, ...position } };
  }
  if (kind === 'not_active') {
    return {
      status: 409,
      body: {
        result: 'conflict', state: 'terminal', outcome: 'conflict', success: false,
        error: { code: 'clarification_not_active', message: 'clarification request is no longer active' }, ...position,
      },
    };
  }
  if (kind === 'retryable') {
    return {
      status: 503,
      body: {
        result: 'retryable_error', state: 'active_detached', outcome: 'retryable_error', success: false, claimed: true,
        error: { code: 'retryable_error', message: 'the response could not be handed off; the bundle is answerable again' },
      },
    };
  }
  throw new Error(`respondReply: unknown kind ${kind}`);
}

/** The bundle id of a respond URL (`…/api/v1/clarification/:pending_id/respond`), or `undefined`. */
export function respondPendingId(url) {
  const m = /\/api\/v1\/clarification\/([^/]+)\/respond$/.exec(new URL(String(url), 'http://localhost').pathname);
  return m ? decodeURIComponent(m[1]) : undefined;
}

/** A store (`ProjectionStore` of any entry) fed `rest` (REST or REST_ASKED) as the README's feed feeds it, at stream position `s-1` 40. */
export function storeOf(ProjectionStore, rest) {
  const store = new ProjectionStore();
  store.applyTaskSnapshot(store.beginTaskFetch(), rest['/tasks'].tasks);
  store.applySessionList('task-1', rest['/tasks/task-1/task-sessions'].sessions);
  store.applyTurnList('sess-1', rest['/task-sessions/sess-1/turns'].turns);
  store.applyMessagePage('sess-1', rest['/task-sessions/sess-1/messages'].messages);
  store.applyStreamPosition({ stream: 's-1', offset: 40 });
  return store;
}
