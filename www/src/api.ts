// The reference server's REST and WebSocket endpoints (docs/server-api.md). No decisions here.
import { isRecord, type Frame, type Message, type RespondBody, type Session, type Task, type Turn } from './wire';

export class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly body: unknown) {
    super(message);
    this.name = 'HttpError';
  }
}

async function request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const init: RequestInit = { method, headers: { accept: 'application/json' }, cache: 'no-store' };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
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
export const fetchTasks = () => getList<Task>('/api/v1/tasks', 'tasks');
export const fetchSessions = (taskId: string) => getList<Session>(`/api/v1/tasks/${enc(taskId)}/task-sessions`, 'sessions');
export const fetchTurns = (sessionId: string) => getList<Turn>(`/api/v1/task-sessions/${enc(sessionId)}/turns`, 'turns');
export const fetchMessages = (sessionId: string) => getList<Message>(`/api/v1/task-sessions/${enc(sessionId)}/messages`, 'messages');

/** SPEC §8 outcome of a respond call, by HTTP status. */
export type RespondResult =
  | { kind: 'success' }
  | { kind: 'conflict' | 'retryable' | 'failed'; status: number; detail: string };

export async function respond(pendingId: string, body: RespondBody): Promise<RespondResult> {
  const path = `/api/v1/clarification/${enc(pendingId)}/respond`;
  const { status, body: reply } = await request('POST', path, body);
  const detail = describe(reply, status);
  if (status >= 200 && status < 300) return { kind: 'success' };
  if (status === 409) return { kind: 'conflict', status, detail };
  if (status === 503) return { kind: 'retryable', status, detail };
  return { kind: 'failed', status, detail };
}

function describe(reply: unknown, status: number): string {
  if (!isRecord(reply)) return `HTTP ${status}`;
  if (isRecord(reply['error']) && typeof reply['error']['code'] === 'string') return reply['error']['code'];
  for (const key of ['outcome', 'result', 'state']) if (typeof reply[key] === 'string') return reply[key];
  return `HTTP ${status}`;
}

export interface SocketHandlers {
  onFrame(frame: Frame): void;
  onOpen(): void;
  onClose(reason: string): void;
}

/** One WebSocket connection to `/api/v1/ws`; reconnects with backoff until `close()`. */
export class EventSocket {
  private socket: WebSocket | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private closed = false;

  constructor(private readonly handlers: SocketHandlers) {}

  connect(): void {
    if (this.closed) return;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/ws`;
    let socket: WebSocket;
    try {
      socket = new WebSocket(url);
    } catch (e) {
      this.handlers.onClose(e instanceof Error ? e.message : String(e));
      this.retry();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.handlers.onOpen();
    };
    socket.onmessage = (ev: MessageEvent) => {
      if (typeof ev.data !== 'string') return;
      let frame: unknown;
      try {
        frame = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (isRecord(frame) && typeof frame['type'] === 'string') {
        this.handlers.onFrame({ type: frame['type'], payload: isRecord(frame['payload']) ? frame['payload'] : {} });
      }
    };
    socket.onclose = (ev: CloseEvent) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.handlers.onClose(ev.reason || `connection closed (${ev.code})`);
      this.retry();
    };
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    const delay = Math.min(5000, 250 * 2 ** this.attempt++);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close();
  }
}
