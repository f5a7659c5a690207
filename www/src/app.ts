// The page's state: ONE ProjectionStore (every decision) plus display-only caches (titles, message
// text, session labels). Every REST snapshot and WebSocket event goes into the store exactly as
// docs/js-api.md describes; nothing here decides what is pending, current or answerable.
import { boundedLoad, type ProjectionStore, type SelectionLoad } from 'task-projection';
import * as api from './api';
import { isRecord, type Frame, type Message, type RespondBody, type Session, type Task } from './wire';

export type Route = { taskId: string | null; sessionId: string | null };
export type Connection = 'connecting' | 'live' | 'offline';
export interface ReasonEntry { n: number; source: string; reason: string }
/** What became of an answer, shown in the session it was given in (and nowhere else). */
export interface Notice { kind: 'info' | 'error'; text: string; sessionId: string }

const MESSAGE_KINDS: Record<string, 'added' | 'updated' | 'deleted'> = {
  'session.message.added': 'added',
  'session.message.updated': 'updated',
  'session.message.deleted': 'deleted',
};
const SELECTION_TIMEOUT_MS = 5000;
const REMEMBERED_KEY = 'task-projection-demo:remembered-sessions';

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return '';
    }
  });
  if (parts[0] !== 'task' || !parts[1]) return { taskId: null, sessionId: null };
  return { taskId: parts[1], sessionId: parts[2] === 'session' && parts[3] ? parts[3] : null };
}

export function routeHash(route: Route): string {
  if (!route.taskId) return '#/';
  const task = `#/task/${encodeURIComponent(route.taskId)}`;
  return route.sessionId ? `${task}/session/${encodeURIComponent(route.sessionId)}` : task;
}

/** Display copy of a row plus the arrival counter of the last event that touched it. */
interface Held<T> { value: T; seq: number }

export class App {
  readonly tasks = new Map<string, Held<Task>>();
  taskOrder: string[] = [];
  /** Per task: its listed sessions, newest first (display copies). */
  readonly sessionLists = new Map<string, string[]>();
  readonly sessions = new Map<string, Held<Session>>();
  /** Per session: its messages in creation order (display copies). */
  readonly messages = new Map<string, Map<string, Held<Message>>>();
  readonly loadedSessions = new Set<string>();
  readonly reasons: ReasonEntry[] = [];
  readonly notices = new Map<string, Notice>();
  readonly busy = new Set<string>();
  route: Route = { taskId: null, sessionId: null };
  epoch: string | null = null;
  connection: Connection = 'connecting';
  /** A visible error (server unreachable, a failed load); cleared by the next successful load. */
  error: string | null = null;
  selecting: string | null = null;
  taskListLoaded = false;
  private seq = 0;
  reasonCount = 0;
  private hadConnection = false;
  private socket: api.EventSocket | null = null;
  private readonly remembered = new Map<string, string>();
  private renderQueued = false;

  constructor(readonly store: ProjectionStore, private readonly paint: (app: App) => void) {
    store.subscribe(() => this.render());
    try {
      const saved: unknown = JSON.parse(localStorage.getItem(REMEMBERED_KEY) ?? '{}');
      if (isRecord(saved)) for (const [k, v] of Object.entries(saved)) if (typeof v === 'string') this.remembered.set(k, v);
    } catch {
      // storage unavailable: nothing remembered
    }
  }

  start(): void {
    this.route = parseRoute(location.hash);
    this.store.setActiveTask(this.route.taskId);
    window.addEventListener('hashchange', () => void this.onRoute());
    this.socket = new api.EventSocket({
      onOpen: () => {
        this.connection = 'live';
        this.render();
      },
      onFrame: (frame) => this.onFrame(frame),
      onClose: (reason) => {
        this.connection = 'offline';
        if (this.hadConnection || !this.taskListLoaded) this.error = `Cannot reach the server (${reason}); retrying…`;
        this.render();
      },
    });
    this.socket.connect();
    this.render();
  }

  stop(): void {
    this.socket?.close();
  }

  // ---- rendering ------------------------------------------------------------------------------

  render(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    queueMicrotask(() => {
      this.renderQueued = false;
      this.paint(this);
    });
  }

  note(source: string, reason: string = this.store.lastReason()): void {
    this.reasons.push({ n: ++this.reasonCount, source, reason });
    if (this.reasons.length > 60) this.reasons.shift();
    this.render();
  }

  // ---- display caches -------------------------------------------------------------------------

  task(id: string): Task | undefined {
    return this.tasks.get(id)?.value;
  }
  session(id: string): Session | undefined {
    return this.sessions.get(id)?.value;
  }
  listedSessions(taskId: string): Session[] {
    return (this.sessionLists.get(taskId) ?? []).flatMap((id) => this.sessions.get(id)?.value ?? []);
  }
  transcript(sessionId: string): Message[] {
    return [...(this.messages.get(sessionId)?.values() ?? [])].map((m) => m.value);
  }
  message(sessionId: string, id: string): Message | undefined {
    return this.messages.get(sessionId)?.get(id)?.value;
  }

  /** A REST list replaces display copies, except rows an event touched after the request began. */
  private setSessionList(taskId: string, list: readonly Session[], since: number): void {
    for (const s of list) {
      const held = this.sessions.get(s.id);
      if (!held || held.seq <= since) this.sessions.set(s.id, { value: s, seq: since });
    }
    const ids = list.map((s) => s.id);
    for (const id of this.sessionLists.get(taskId) ?? []) {
      const held = this.sessions.get(id);
      if (!ids.includes(id) && held && held.seq > since) ids.unshift(id);
    }
    this.sessionLists.set(taskId, ids);
  }

  private setMessagePage(sessionId: string, page: readonly Message[], since: number): void {
    const old = this.messages.get(sessionId) ?? new Map<string, Held<Message>>();
    const next = new Map<string, Held<Message>>();
    for (const m of page) {
      const held = old.get(m.id);
      next.set(m.id, held && held.seq > since ? held : { value: m, seq: since });
    }
    for (const [id, held] of old) if (!next.has(id) && held.seq > since) next.set(id, held);
    this.messages.set(sessionId, next);
  }

  // ---- REST -----------------------------------------------------------------------------------

  private async guarded(what: string, load: () => Promise<void>): Promise<boolean> {
    try {
      await load();
      if (this.error?.startsWith('Could not load')) this.error = null;
      return true;
    } catch (e) {
      this.error = `Could not load ${what}: ${e instanceof Error ? e.message : String(e)}`;
      this.note(`load ${what}`, 'load_failed');
      return false;
    } finally {
      this.render();
    }
  }

  loadTasks(): Promise<boolean> {
    return this.guarded('the task list', async () => {
      const token = this.store.beginTaskFetch();
      const since = this.seq;
      const tasks = await api.fetchTasks();
      this.store.applyTaskSnapshot(token, tasks);
      this.note('GET /tasks');
      const ids = tasks.map((t) => t.id);
      for (const t of tasks) {
        const held = this.tasks.get(t.id);
        if (!held || held.seq <= since) this.tasks.set(t.id, { value: t, seq: since });
      }
      for (const id of this.taskOrder) if (!ids.includes(id) && (this.tasks.get(id)?.seq ?? 0) > since) ids.push(id);
      for (const id of [...this.tasks.keys()]) if (!ids.includes(id)) this.tasks.delete(id);
      this.taskOrder = ids;
      this.taskListLoaded = true;
    });
  }

  loadSessions(taskId: string): Promise<boolean> {
    return this.guarded('the sessions', async () => {
      const since = this.seq;
      const list = await api.fetchSessions(taskId);
      this.store.applySessionList(taskId, list);
      this.note(`GET sessions of ${taskId}`);
      this.setSessionList(taskId, list, since);
    });
  }

  loadSession(sessionId: string): Promise<boolean> {
    return this.guarded('the session', async () => {
      const since = this.seq;
      const [turns, page] = await Promise.all([api.fetchTurns(sessionId), api.fetchMessages(sessionId)]);
      this.store.applyTurnList(sessionId, turns);
      this.note(`GET turns of ${sessionId}`);
      this.store.applyMessagePage(sessionId, page);
      this.note(`GET messages of ${sessionId}`);
      this.setMessagePage(sessionId, page, since);
      this.loadedSessions.add(sessionId);
    });
  }

  /** Everything the page shows, again (first connection, new epoch, reconnect). */
  async refreshAll(): Promise<void> {
    const { taskId, sessionId } = this.route;
    // Lists of other tasks and transcripts of other sessions are reloaded when next opened.
    for (const id of [...this.sessionLists.keys()]) if (id !== taskId) this.sessionLists.delete(id);
    for (const id of [...this.loadedSessions]) if (id !== sessionId) this.loadedSessions.delete(id);
    const loads: Promise<boolean>[] = [this.loadTasks()];
    if (taskId) loads.push(this.loadSessions(taskId));
    if (sessionId) loads.push(this.loadSession(sessionId));
    await Promise.all(loads);
  }

  // ---- navigation -----------------------------------------------------------------------------

  navigate(route: Route): void {
    const hash = routeHash(route);
    if (location.hash === hash || (hash === '#/' && location.hash === '')) void this.onRoute();
    else location.hash = hash;
  }

  private async onRoute(): Promise<void> {
    const route = parseRoute(location.hash);
    if (route.taskId !== this.route.taskId) this.store.setActiveTask(route.taskId);
    this.route = route;
    if (route.taskId && route.sessionId) {
      this.remembered.set(route.taskId, route.sessionId);
      try {
        localStorage.setItem(REMEMBERED_KEY, JSON.stringify(Object.fromEntries(this.remembered)));
      } catch {
        // storage unavailable
      }
    }
    this.render();
    if (route.taskId && !this.sessionLists.has(route.taskId)) await this.loadSessions(route.taskId);
    if (route.sessionId && !this.loadedSessions.has(route.sessionId)) await this.loadSession(route.sessionId);
  }

  /** A click on a task: the selection machine picks the session (SPEC §6). */
  async selectTask(taskId: string): Promise<void> {
    const preferredSessionId = this.remembered.get(taskId) ?? null;
    const { ticket, reload } = this.store.beginSelection(taskId, { preferredSessionId });
    this.selecting = taskId;
    this.render();
    let load: SelectionLoad;
    const cached = this.sessionLists.has(taskId) ? this.listedSessions(taskId) : null;
    if (reload || !cached) {
      const since = this.seq;
      load = await boundedLoad(api.fetchSessions(taskId), SELECTION_TIMEOUT_MS);
      if ('sessions' in load) this.setSessionList(taskId, load.sessions as Session[], since);
    } else {
      load = { sessions: cached };
    }
    const outcome = this.store.settleSelection(ticket, load);
    this.note(`select ${taskId} → ${outcome.kind}`);
    if (this.selecting === taskId) this.selecting = null;
    if ('error' in load) this.error = `Could not load the sessions of the task (${load.timedOut ? 'timed out' : String(load.error)})`;
    if (outcome.kind === 'session') this.navigate({ taskId, sessionId: outcome.sessionId });
    else if (outcome.kind === 'task_only') this.navigate({ taskId, sessionId: null });
    else this.render();
  }

  // ---- WebSocket ------------------------------------------------------------------------------

  private onFrame({ type, payload }: Frame): void {
    this.seq++;
    try {
      this.dispatch(type, payload);
    } catch (e) {
      // Malformed input: the store throws and keeps its state; show it in the dev panel.
      const code = isRecord(e) && typeof e['code'] === 'string' ? e['code'] : 'error';
      this.note(type, `rejected_input:${code}`);
    }
  }

  /**
   * One frame: the store routes it (`applyFrame`: the apply call of its type, and what to refetch);
   * the page then updates its display copy of what it shows (content, labels), which the store
   * does not hold.
   */
  private dispatch(type: string, p: Record<string, unknown>): void {
    const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
    const outcome = this.store.applyFrame({ type, payload: p });
    const { reason } = outcome;
    if (type === 'server.hello') return this.onHello(p, outcome.refetch === 'all');
    const kind = MESSAGE_KINDS[type];
    if (kind) {
      const sessionId = str('session_id');
      const id = str('message_id') || str('id');
      this.note(`${type} ${id}`, reason);
      // The store judged the row stale or misrouted: the display copy keeps what it has too.
      if (reason === 'older_update_carries_no_projection' || reason === 'task_mismatch_rejected') return;
      let rows = this.messages.get(sessionId);
      if (!rows) this.messages.set(sessionId, (rows = new Map()));
      if (kind === 'deleted') rows.delete(id);
      else rows.set(id, { value: { ...(p as unknown as Message), id }, seq: this.seq });
      return;
    }
    switch (type) {
      case 'turn.started':
      case 'turn.completed':
        return this.note(`${type} ${str('id')}`, reason);
      case 'session.created':
      case 'session.state_changed': {
        const sessionId = str('id') || str('session_id');
        const taskId = str('task_id');
        if (type === 'session.created' && taskId) {
          const list = this.sessionLists.get(taskId);
          if (list && !list.includes(sessionId)) list.unshift(sessionId);
        }
        this.note(`${type} ${sessionId}`, reason);
        // Misrouted, or older than the projection we hold (e.g. a delayed frame of an old epoch):
        // the display copy keeps its state too.
        if (reason === 'task_mismatch_rejected' || reason === 'older_revision_rejected') return;
        const held = this.sessions.get(sessionId)?.value;
        const fields = type === 'session.created' ? p : { state: p['state'], state_reason: p['reason'] };
        this.sessions.set(sessionId, { value: { ...(held ?? { id: sessionId }), ...fields, id: sessionId } as Session, seq: this.seq });
        // The new session joins the listed order through the task's session list, fetched again.
        if (outcome.refetch === 'sessions' && outcome.taskId && this.sessionLists.has(outcome.taskId)) void this.loadSessions(outcome.taskId);
        return;
      }
      case 'task.status_summary.updated':
        return this.note(`${type} ${str('task_id')}`, reason);
      case 'task.updated': {
        this.note(`${type} ${str('id')}`, reason);
        const id = str('id');
        if (id) {
          if (!this.tasks.has(id)) this.taskOrder.push(id);
          this.tasks.set(id, { value: { ...this.tasks.get(id)?.value, ...(p as unknown as Task) }, seq: this.seq });
        }
        return;
      }
      case 'task.deleted': {
        const id = str('task_id');
        this.note(`${type} ${id}`, reason);
        this.tasks.delete(id);
        this.taskOrder = this.taskOrder.filter((t) => t !== id);
        if (this.route.taskId === id) this.navigate({ taskId: null, sessionId: null });
        return;
      }
      default:
        // task.stalled (shown only) and types this page does not know.
        return this.note(`${type} ${str('task_id')}`.trim(), reason);
    }
  }

  /** `server.hello`: a connection's first frame. The store asks for a refetch after every one
   * (nothing resumes: what was published while the page had no connection is lost); its reason
   * says why: the first connection, the same server run, or a restarted server. */
  private onHello(p: Record<string, unknown>, refetch: boolean): void {
    const epoch = typeof p['epoch'] === 'string' ? p['epoch'] : null;
    this.hadConnection = true;
    this.epoch = epoch;
    this.connection = 'live';
    if (this.error?.startsWith('Cannot reach')) this.error = null;
    const reason = this.store.lastReason();
    this.note(`server.hello epoch ${epoch ?? '?'}`, refetch ? `${reason}_refetch` : reason);
    if (refetch) void this.refreshAll();
  }

  // ---- answering ------------------------------------------------------------------------------

  async respond(sessionId: string, pendingId: string, body: RespondBody): Promise<void> {
    if (this.busy.has(pendingId)) return;
    this.busy.add(pendingId);
    this.notices.set(pendingId, { kind: 'info', text: 'reject' in body ? 'Skipping…' : 'Sending…', sessionId });
    this.render();
    let result: api.RespondResult;
    try {
      result = await api.respond(pendingId, body);
    } catch (e) {
      result = { kind: 'retryable', status: 0, detail: e instanceof Error ? e.message : String(e) };
    }
    this.busy.delete(pendingId);
    this.note(`respond ${pendingId}`, result.kind === 'success' ? 'respond_success' : `respond_${result.kind}`);
    switch (result.kind) {
      case 'success':
        this.notices.set(pendingId, { kind: 'info', text: 'reject' in body ? 'Skipped.' : 'Answer delivered.', sessionId });
        break;
      case 'conflict':
        this.notices.set(pendingId, { kind: 'error', text: 'This question is no longer open (answered, skipped or superseded).', sessionId });
        // Our view is behind: reload the session from the server.
        void this.loadSession(sessionId);
        break;
      case 'retryable':
        this.notices.set(pendingId, { kind: 'error', text: `Could not deliver right now (${result.detail}). Try again.`, sessionId });
        break;
      case 'failed':
        this.notices.set(pendingId, { kind: 'error', text: `The server could not deliver it (${result.detail}).`, sessionId });
        break;
    }
    this.render();
  }
}
