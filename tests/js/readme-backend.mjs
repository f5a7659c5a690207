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

const question = (id, index, sequence, content) => ({
  message_id: id, session_id: 'sess-1', task_id: 'task-1', turn_id: 'turn-1', author_type: 'agent',
  type: 'clarification_request',
  metadata: { pending_id: 'p-1', question_id: id, question_index: index, question_total: 2, status: 'pending' },
  content, created_at: at(5 + index), updated_at: at(5 + index),
  pending_action: 'clarification', pending_action_revision: revision(sequence),
});

/** REST: path below `/api/v1` -> JSON body. */
export const REST = {
  '/tasks': { tasks: [task] },
  '/tasks/task-1/task-sessions': { sessions: [session] },
  '/task-sessions/sess-1/turns': { turns: [turn] },
  '/task-sessions/sess-1/messages': { messages: [prompt] },
};

/** WebSocket `/api/v1/ws`: `server.hello` first (as on every connection), then the agent asks. */
export const FRAMES = [
  { type: 'server.hello', payload: { epoch: '1733043600', started_at: at(0) } },
  { type: 'session.message.added', payload: question('q-1', 0, 5, 'Which region should the new database run in?') },
  { type: 'session.message.added', payload: question('q-2', 1, 6, 'May I drop the legacy audit table?') },
  {
    type: 'session.state_changed',
    payload: {
      session_id: 'sess-1', task_id: 'task-1', workspace_id: 'ws-1', state: 'WAITING_FOR_INPUT', previous_state: 'RUNNING',
      reason: 'clarification_requested', updated_at: at(7), pending_action: 'clarification', pending_action_revision: revision(7),
    },
  },
  { type: 'task.status_summary.updated', payload: { task_id: 'task-1', workspace_id: 'ws-1', status_summary: { revision: 4, updated_at: at(7), pending_action: 'clarification' } } },
];

/** Milliseconds between two frames of FRAMES (the REST refetch the hello asks for runs meanwhile). */
export const FRAME_GAP_MS = 20;

/** The REST body for a URL (absolute or a path) under `/api/v1`, or `undefined`. */
export function restBody(url) {
  const { pathname } = new URL(String(url), 'http://localhost');
  const at = pathname.indexOf('/api/v1/');
  return at < 0 ? undefined : REST[pathname.slice(at + '/api/v1'.length)];
}
