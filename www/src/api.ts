// The reference server's REST endpoints and its simulator (docs/server-api.md). No decisions here;
// the WebSocket and the user's answers (`connect`, `respond`) are `task-projection/connect`'s (app.ts).
import { isRecord, type Message, type Session, type Task, type Turn } from './wire';

export class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly body: unknown) {
    super(message);
    this.name = 'HttpError';
  }
}

async function request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const init: RequestInit = { method, headers: { accept: 'application/json' }, cache: 'no-store' };
  if (method === 'POST') {
    // The server takes writes as JSON only (its CSRF guard).
    init.body = JSON.stringify(body ?? {});
    init.headers = { accept: 'application/json', 'content-type': 'application/json' };
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, body: parsed };
}

function fail(path: string, status: number, body: unknown): never {
  const error = isRecord(body) && isRecord(body['error']) ? body['error'] : {};
  const code = typeof error['code'] === 'string' ? error['code'] : `http_${status}`;
  const message = typeof error['message'] === 'string' ? error['message'] : `HTTP ${status}`;
  throw new HttpError(status, code, `${path}: ${message}`, body);
}

async function getList<T>(path: string, key: string): Promise<T[]> {
  const { status, body } = await request('GET', path);
  if (status !== 200) fail(path, status, body);
  const list = isRecord(body) ? body[key] : undefined;
  if (!Array.isArray(list)) throw new HttpError(status, 'bad_response', `${path}: no "${key}" array`, body);
  return list as T[];
}

const enc = encodeURIComponent;

/** Where in the server's event stream a REST read stands (`GET /tasks` says), or null. */
export interface StreamPosition { stream: string; offset: number }

/** `GET /tasks`: the tasks, and where in the event stream the read stands (`store.applyStreamPosition`). */
export async function fetchTasks(): Promise<{ tasks: Task[]; position: StreamPosition | null }> {
  const path = '/api/v1/tasks';
  const { status, body } = await request('GET', path);
  if (status !== 200) fail(path, status, body);
  const tasks = isRecord(body) ? body['tasks'] : undefined;
  if (!Array.isArray(tasks)) throw new HttpError(status, 'bad_response', `${path}: no "tasks" array`, body);
  const stream = isRecord(body) ? body['stream'] : undefined;
  const offset = isRecord(body) ? body['offset'] : undefined;
  const position = typeof stream === 'string' && typeof offset === 'number' ? { stream, offset } : null;
  return { tasks: tasks as Task[], position };
}
export const fetchSessions = (taskId: string) => getList<Session>(`/api/v1/tasks/${enc(taskId)}/task-sessions`, 'sessions');
export const fetchTurns = (sessionId: string) => getList<Turn>(`/api/v1/task-sessions/${enc(sessionId)}/turns`, 'turns');
export const fetchMessages = (sessionId: string) => getList<Message>(`/api/v1/task-sessions/${enc(sessionId)}/messages`, 'messages');

// ---- the simulator (`--simulator`; docs/server-api.md "Simulator") ------------------------------

/** Whether the server mounts the simulator: `GET /api/dev/sim` answers 200 (404 without it). */
export async function simulatorAvailable(): Promise<boolean> {
  try {
    const { status } = await request('GET', '/api/dev/sim');
    return status === 200;
  } catch {
    return false;
  }
}

export type SimResult =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; code: string; message: string };

/** `POST /api/dev/sim/<route>`: the agent side of a scenario (the page's "Play the agent" panel). */
export async function sim(route: string, body: Record<string, unknown> = {}): Promise<SimResult> {
  const path = `/api/dev/sim/${route}`;
  try {
    const { status, body: reply } = await request('POST', path, body);
    if (status >= 200 && status < 300 && isRecord(reply)) return { ok: true, body: reply };
    const error = isRecord(reply) && isRecord(reply['error']) ? reply['error'] : {};
    return {
      ok: false,
      status,
      code: typeof error['code'] === 'string' ? error['code'] : `http_${status}`,
      message: typeof error['message'] === 'string' ? error['message'] : `HTTP ${status}`,
    };
  } catch (e) {
    return { ok: false, status: 0, code: 'unreachable', message: e instanceof Error ? e.message : String(e) };
  }
}

export const simPath = {
  tasks: () => 'tasks',
  sessions: (taskId: string) => `tasks/${enc(taskId)}/sessions`,
  turns: (sessionId: string) => `sessions/${enc(sessionId)}/turns`,
  messages: (sessionId: string) => `sessions/${enc(sessionId)}/messages`,
  clarification: (sessionId: string) => `sessions/${enc(sessionId)}/clarification`,
  permission: (sessionId: string) => `sessions/${enc(sessionId)}/permission`,
  resolvePermission: (sessionId: string) => `sessions/${enc(sessionId)}/permission/resolve`,
  detach: (sessionId: string) => `sessions/${enc(sessionId)}/detach`,
  restart: () => 'restart',
  replay: () => 'replay',
  reset: () => 'reset',
};
