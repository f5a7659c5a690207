// The page's state: ONE ProjectionStore (every decision) plus display-only caches (titles, message
// text, session labels, the answers you gave). Every REST snapshot and WebSocket event goes into
// the store exactly as docs/js-api.md describes (the socket is the package's `connect()`, your
// answers and skips its `respond()`); nothing here decides what is pending, current or answerable. With `--simulator` the page also plays the
// agent (the "Play the agent" panel): those calls only ask the server to act; what they cause
// arrives like any other event. Why it shows what it shows is the package's devtools panel
// (`task-projection/devtools/dom`, mounted by main.ts): the page's "Why?" opens it on a session.
import { boundedLoad, type FrameOutcome, type ProjectionStore, type SelectionLoad } from 'task-projection';
import { connect, respond, type Connection as Link, type RespondResult } from 'task-projection/connect';
import type { DevtoolsHandle, DevtoolsTarget } from 'task-projection/devtools/dom';
import * as api from './api';
import { ReplayWatch, readLog, replayText } from './replay';
import { frameWords, reasonWords, sessionLabel, shortId } from './words';
import { isRecord, type Message, type RespondBody, type Session, type Task } from './wire';

export type Route = { taskId: string | null; sessionId: string | null };
export type Connection = 'connecting' | 'live' | 'offline';
/**
 * One line of the page's log: `what` in words (short labels for tasks and sessions), `reason` the
 * code the store (or the page) gave it, `source` the wire terms (frame type, ids) for Details.
 */
export interface ReasonEntry { n: number; what: string; source: string; reason: string }
/**
 * Your last answer or skip of a bundle on this page: the session, what was sent, and what the
 * package's `respond` resolved to (`null` while its request is in flight). Display only: the
 * store decides what is answerable; view.ts words the outcome in the session it was given in.
 */
export interface Given { sessionId: string; body: RespondBody; result: RespondResult | null }

const MESSAGE_KINDS: Record<string, 'added' | 'updated' | 'deleted'> = {
  'session.message.added': 'added',
  'session.message.updated': 'updated',
  'session.message.deleted': 'deleted',
};
const SELECTION_TIMEOUT_MS = 5000;
const REMEMBERED_KEY = 'task-projection-demo:remembered-sessions';
const DETAILS_KEY = 'task-projection-demo:details';
/** Frames of the current server run kept for "Replay old messages" (the newest ones). */
const CAPTURED_FRAMES = 300;
/** How long "Replay old messages" waits for the frames it sent to come back through the socket. */
const REPLAY_WAIT_MS = 5000;

/** A simulator action in flight or just finished (a status line). */
export interface SimStatus { kind: 'busy' | 'info' | 'error'; text: string }
/** One of your own actions in a session: its status shows there (the permission banner, the message box). */
export interface Yours { sessionId: string; what: 'permission' | 'prompt' }

const QUESTIONS = [
  'Which branch should I push the fix to?',
  'May I rename the config file to settings.toml?',
  'Should the old endpoint keep working for one more release?',
  'Is it fine to add a dependency on a date library?',
  'Should I squash the commits before the review?',
];
const BUNDLE = [
  'Which database should the tests run against?',
  'Keep the old migration files?',
  'Who should review the change?',
];
const PERMISSIONS = [
  'Run `npm publish` for the new version?',
  'Delete the stale `tmp/` folder in the repository?',
  'Push a force-update to the feature branch?',
];
const TASK_TITLES = ['Write the changelog', 'Tidy the test suite', 'Speed up the build', 'Fix the login timeout'];

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
  /** Your answers and skips, per bundle (pending_id): see `Given`. */
  readonly given = new Map<string, Given>();
  /** Moves when a respond came back (the transcript's render key). */
  givenVersion = 0;
  route: Route = { taskId: null, sessionId: null };
  epoch: string | null = null;
  connection: Connection = 'connecting';
  /** A visible error (server unreachable, a failed load); cleared by the next successful load. */
  error: string | null = null;
  /** The error's wire details (path, status, code): shown with Details on. */
  errorDetail: string | null = null;
  selecting: string | null = null;
  taskListLoaded = false;
  /** Show ids, wire states and revisions (the header's "Details" toggle). */
  details = false;
  /** The server mounts the simulator (`GET /api/dev/sim`); `null` until the probe answered. */
  simulator: boolean | null = null;
  /** The agent's or the server's last action (the panel's status line). */
  simStatus: SimStatus | null = null;
  /** Your last approve / deny and the session it was in (shown there, under the permission). */
  yourStatus: (SimStatus & Yours) | null = null;
  /** Messages you sent from a session's message box (the e2e waits on it). */
  promptsSent = 0;
  /** Simulator actions finished so far (tests wait for it to move). */
  simDone = 0;
  /** What the last "Replay old messages" came to, by the store's outcome of each frame. */
  lastReplay: import('./replay').ReplayTally | null = null;
  /** Raw frames of the current server run (the newest, `task.updated` aside), and those of the
   * previous run (after a restart): what "Replay old messages" sends back through the simulator. */
  private runFrames: string[] = [];
  oldFrames: string[] = [];
  private seq = 0;
  reasonCount = 0;
  private hadConnection = false;
  private link: Link | null = null;
  /** The package's devtools panel on this page's store (main.ts mounts it). */
  devtools: DevtoolsHandle | null = null;
  /** The replay in flight: its frames, counted as they come back. */
  private replaying: ReplayWatch | null = null;
  private readonly remembered = new Map<string, string>();
  /** The task whose bare route (`#/task/ID`) already ran the selection machine. */
  private routeSelected: string | null = null;
  private renderQueued = false;
  private counter = 0;

  constructor(readonly store: ProjectionStore, private readonly paint: (app: App) => void) {
    store.subscribe(() => this.render());
    try {
      const saved: unknown = JSON.parse(localStorage.getItem(REMEMBERED_KEY) ?? '{}');
      if (isRecord(saved)) for (const [k, v] of Object.entries(saved)) if (typeof v === 'string') this.remembered.set(k, v);
      this.details = localStorage.getItem(DETAILS_KEY) === 'on';
    } catch {
      // storage unavailable: nothing remembered
    }
  }

  /**
   * The socket to the server (`task-projection/connect`): made first, so that the devtools panel
   * can be given it before the store's first input; its first frame comes after `start()`.
   */
  connect(): Link {
    if (this.link) return this.link;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/ws`;
    this.link = connect(url, this.store, {
      // A server.hello (a connection's first frame) the server did not resume asks for everything
      // again; a new session asks for its task's list, which the page holds only for tasks it opened.
      refetch: ({ what, taskId }) => {
        if (what === 'all') return this.refreshAll();
        return taskId && this.sessionLists.has(taskId) ? this.loadSessions(taskId) : undefined;
      },
      onFrame: (outcome, data) => this.onFrame(outcome, data),
      onStatus: (status) => this.onStatus(status),
      onError: (error) => {
        // A malformed frame: the store threw and kept its state; show it in the reasons panel.
        const code = isRecord(error) && typeof error['code'] === 'string' ? error['code'] : 'error';
        this.note('An update', 'frame', `rejected_input:${code}`);
      },
    });
    return this.link;
  }

  start(): void {
    this.route = parseRoute(location.hash);
    this.store.setActiveTask(this.route.taskId);
    window.addEventListener('hashchange', () => void this.onRoute());
    this.connect();
    void api.simulatorAvailable().then((available) => {
      this.simulator = available;
      this.render();
    });
    this.render();
  }

  stop(): void {
    this.link?.close();
  }

  /** "Why?": the devtools panel, opened on the session (or task) being viewed. */
  why(target: DevtoolsTarget): void {
    this.devtools?.open(target);
  }

  setDetails(on: boolean): void {
    this.details = on;
    try {
      localStorage.setItem(DETAILS_KEY, on ? 'on' : 'off');
    } catch {
      // storage unavailable
    }
    this.render();
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

  note(what: string, source: string, reason: string = this.store.lastReason()): void {
    this.reasons.push({ n: ++this.reasonCount, what, source, reason });
    if (this.reasons.length > 60) this.reasons.shift();
    this.render();
  }

  // ---- display caches -------------------------------------------------------------------------

  /** A task's short label for the log: its title, else a short id. */
  taskName(id: string): string {
    const title = this.task(id)?.title;
    return title ? `“${title.length > 40 ? `${title.slice(0, 38)}…` : title}”` : `task ${shortId(id)}`;
  }

  /** A session's short label for the log: its name and its task's. */
  sessionName(id: string): string {
    const s = this.session(id);
    if (!s) return `session ${shortId(id)}`;
    return s.task_id ? `${sessionLabel(s)} of ${this.taskName(s.task_id)}` : sessionLabel(s);
  }

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
      this.error = `Could not load ${what} (${failureWords(e)}).`;
      this.errorDetail = e instanceof Error ? e.message : String(e);
      this.note(`Loading ${what}`, `load ${what}`, 'load_failed');
      return false;
    } finally {
      this.render();
    }
  }

  loadTasks(): Promise<boolean> {
    return this.guarded('the task list', async () => {
      const token = this.store.beginTaskFetch();
      const since = this.seq;
      const { tasks, position } = await api.fetchTasks();
      this.store.applyTaskSnapshot(token, tasks);
      // Where the read stands in the event stream: the store's position (what a reconnection
      // resumes after, what the devtools panel shows).
      if (position) this.store.applyStreamPosition(position);
      this.note('The task list', 'GET /tasks');
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
      this.note(`The sessions of ${this.taskName(taskId)}`, `GET sessions of ${taskId}`);
      this.setSessionList(taskId, list, since);
    });
  }

  loadSession(sessionId: string): Promise<boolean> {
    return this.guarded('the session', async () => {
      const since = this.seq;
      const [turns, page] = await Promise.all([api.fetchTurns(sessionId), api.fetchMessages(sessionId)]);
      this.store.applyTurnList(sessionId, turns);
      this.note(`The turns of ${this.sessionName(sessionId)}`, `GET turns of ${sessionId}`);
      this.store.applyMessagePage(sessionId, page);
      this.note(`The messages of ${this.sessionName(sessionId)}`, `GET messages of ${sessionId}`);
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
    // A first route `#/task/ID` (a link, a reload) picks its session once the task is known.
    const route = this.route;
    if (route.taskId && !route.sessionId && this.routeSelected !== route.taskId) await this.selectForRoute(route.taskId);
  }

  // ---- navigation -----------------------------------------------------------------------------

  navigate(route: Route): void {
    const hash = routeHash(route);
    if (location.hash === hash || (hash === '#/' && location.hash === '')) void this.onRoute();
    else location.hash = hash;
  }

  private async onRoute(): Promise<void> {
    const route = parseRoute(location.hash);
    if (route.taskId !== this.routeSelected) this.routeSelected = null;
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
    if (route.taskId && !route.sessionId) return this.selectForRoute(route.taskId);
    if (route.taskId && !this.sessionLists.has(route.taskId)) await this.loadSessions(route.taskId);
    if (route.sessionId && !this.loadedSessions.has(route.sessionId)) await this.loadSession(route.sessionId);
  }

  /** `#/task/ID` (a link, a reload): the selection machine picks the session, as a click does;
   * once per arrival, so a task-only outcome (which navigates to this same route) stays put. */
  private async selectForRoute(taskId: string): Promise<void> {
    if (this.routeSelected === taskId) {
      if (!this.sessionLists.has(taskId)) await this.loadSessions(taskId);
      return;
    }
    await this.selectTask(taskId);
  }

  /** A click on a task: the selection machine picks the session (SPEC §6). */
  async selectTask(taskId: string): Promise<void> {
    this.routeSelected = taskId;
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
    this.note(`A click on ${this.taskName(taskId)}`, `select ${taskId} → ${outcome.kind}`);
    if (this.selecting === taskId) this.selecting = null;
    if ('error' in load) {
      this.error = `Could not load the sessions of the task (${load.timedOut ? 'it took too long' : failureWords(load.error)}).`;
      this.errorDetail = load.timedOut ? 'timed out' : load.error instanceof Error ? load.error.message : String(load.error);
    }
    if (outcome.kind === 'session') this.navigate({ taskId, sessionId: outcome.sessionId });
    else if (outcome.kind === 'task_only') this.navigate({ taskId, sessionId: null });
    else this.render();
  }

  // ---- WebSocket (task-projection/connect) ---------------------------------------------------

  private onStatus(status: 'connecting' | 'open' | 'waiting' | 'closed'): void {
    if (status === 'open') {
      this.connection = 'live';
    } else if (status === 'closed') {
      this.connection = 'offline';
      if (this.hadConnection || !this.taskListLoaded) this.error = 'Cannot reach the server; retrying…';
    } else {
      return; // connecting / waiting: the state shown stays (Connecting… before the first, Offline after a drop)
    }
    this.render();
  }

  /**
   * One frame the store took (`connect` ran `store.applyFrame`; `outcome` is what it did). The page
   * updates its display copy of what it shows (content, labels), which the store does not hold,
   * and keeps the raw frame of this server run for "Replay old messages".
   */
  private onFrame(outcome: FrameOutcome, data: unknown): void {
    this.seq++;
    let frame: unknown = data;
    if (typeof data === 'string') {
      try {
        frame = JSON.parse(data);
      } catch {
        frame = null;
      }
    }
    const payload = isRecord(frame) && isRecord(frame['payload']) ? frame['payload'] : {};
    const replayed = this.replaying?.take(data, outcome) ?? false;
    if (outcome.type === 'server.hello') return this.onHello(payload, outcome);
    // Kept for the replay: every frame of this run (a replayed one is not) but `task.updated`,
    // which carries no revision and by SPEC §7 overwrites the held summary whatever its age
    // (docs/convergence.md, exception 1): a late one would put back an old summary, which is not
    // what the restart scenario shows.
    if (outcome.type !== 'task.updated' && !replayed) {
      this.runFrames.push(typeof data === 'string' ? data : JSON.stringify(frame));
      if (this.runFrames.length > CAPTURED_FRAMES) this.runFrames.shift();
    }
    this.display(outcome, payload);
  }

  private display(outcome: FrameOutcome, p: Record<string, unknown>): void {
    const { type, reason } = outcome;
    const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
    const kind = MESSAGE_KINDS[type];
    if (kind) {
      const sessionId = str('session_id');
      const id = str('message_id') || str('id');
      this.note(frameWords(type, this.sessionName(sessionId)), `${type} ${id}`, reason);
      // The store judged the row stale or misrouted: the display copy keeps what it has too.
      if (reason === 'older_update_carries_no_projection' || reason === 'task_mismatch_rejected') return;
      let rows = this.messages.get(sessionId);
      if (!rows) this.messages.set(sessionId, (rows = new Map()));
      if (kind === 'deleted') {
        rows.delete(id);
        return;
      }
      const row = { ...(p as unknown as Message), id };
      // A late copy of a row (a delayed frame) does not replace a newer one.
      const held = rows.get(id)?.value;
      if (held && stamp(row) < stamp(held)) return;
      rows.set(id, { value: row, seq: this.seq });
      return;
    }
    switch (type) {
      case 'turn.started':
      case 'turn.completed':
        return this.note(frameWords(type, this.sessionName(str('session_id'))), `${type} ${str('id')}`, reason);
      case 'session.created':
      case 'session.state_changed': {
        const sessionId = str('id') || str('session_id');
        const taskId = str('task_id');
        if (type === 'session.created' && taskId) {
          const list = this.sessionLists.get(taskId);
          if (list && !list.includes(sessionId)) list.unshift(sessionId);
        }
        // Misrouted, or older than the projection we hold (e.g. a delayed frame of an old run):
        // the display copy keeps its state too.
        if (reason !== 'task_mismatch_rejected' && reason !== 'older_revision_rejected') {
          const held = this.sessions.get(sessionId)?.value;
          const fields = type === 'session.created' ? p : { state: p['state'], state_reason: p['reason'] };
          this.sessions.set(sessionId, { value: { ...(held ?? { id: sessionId }), ...fields, id: sessionId } as Session, seq: this.seq });
        }
        return this.note(frameWords(type, this.sessionName(sessionId)), `${type} ${sessionId}`, reason);
      }
      case 'task.status_summary.updated':
        return this.note(frameWords(type, this.taskName(str('task_id'))), `${type} ${str('task_id')}`, reason);
      case 'task.updated': {
        const id = str('id');
        if (id) {
          if (!this.tasks.has(id)) this.taskOrder.unshift(id);
          this.tasks.set(id, { value: { ...this.tasks.get(id)?.value, ...(p as unknown as Task) }, seq: this.seq });
        }
        return this.note(frameWords(type, this.taskName(id)), `${type} ${id}`, reason);
      }
      case 'task.deleted': {
        const id = str('task_id');
        this.note(frameWords(type, this.taskName(id)), `${type} ${id}`, reason);
        this.tasks.delete(id);
        this.taskOrder = this.taskOrder.filter((t) => t !== id);
        if (this.route.taskId === id) this.navigate({ taskId: null, sessionId: null });
        return;
      }
      default:
        // task.stalled (shown only) and types this page does not know.
        return this.note(frameWords(type, str('task_id') ? this.taskName(str('task_id')) : 'no task'), `${type} ${str('task_id')}`.trim(), reason);
    }
  }

  /** `server.hello`: a connection's first frame. The store asks for a refetch after every one
   * the server did not resume (what was published while the page had no connection is lost;
   * `connect` calls `refetch`; a resumed one, reason `resumed`, asks nothing); its reason says
   * why: the first connection, the same server run, or a restarted server (whose frames so far
   * become the "old messages" a replay sends). */
  private onHello(p: Record<string, unknown>, outcome: FrameOutcome): void {
    const epoch = typeof p['epoch'] === 'string' ? p['epoch'] : null;
    if (this.epoch !== null && epoch !== this.epoch) {
      this.oldFrames = this.runFrames;
      this.runFrames = [];
    }
    this.hadConnection = true;
    this.epoch = epoch;
    this.connection = 'live';
    if (this.error?.startsWith('Cannot reach')) this.error = null;
    this.note('The server’s greeting', `server.hello epoch ${epoch ?? '?'}${outcome.refetch ? ' (refetch)' : ''}`, outcome.reason);
  }

  // ---- answering ------------------------------------------------------------------------------

  /**
   * Your answer or skip of bundle `pendingId`: the package's `respond` (`task-projection/connect`)
   * posts it, joins a double click to the request in flight (one request), and hands the store the
   * reply and the position it carries. The store decides: while the attempt is in flight the
   * bundle shows as being submitted (`respondState`); won, lost and no longer active take it away
   * at once (the page re-reads its answers, no REST read); refused and failed leave it
   * answerable, and the page says what failed and offers to try again. The page keeps only what
   * it shows: what you sent and what came back.
   */
  async respond(sessionId: string, pendingId: string, body: RespondBody): Promise<void> {
    // A second click while the attempt is in flight joins it: the first click's body stands.
    const joining = this.store.respondState(sessionId, pendingId)?.phase === 'in_flight';
    let result: RespondResult;
    try {
      // Throws (docs/js-api.md: rejects) only when the store will not start: nothing is sent.
      const reply = respond(this.store, { sessionId, pendingId, body });
      if (joining) {
        await reply; // the first call shows what came back
        return;
      }
      // (Deleted first: the map's order is the order the answers were given, newest last.)
      this.given.delete(pendingId);
      this.given.set(pendingId, { sessionId, body, result: null });
      this.render();
      result = await reply;
    } catch (e) {
      // Not the session's live question (or not known yet): the page shows what the store
      // answers. Anything else is a bug: thrown.
      const code = isRecord(e) && typeof e['code'] === 'string' ? e['code'] : '';
      if (code !== 'bundle_not_live' && code !== 'live_question_unknown') throw e;
      if (this.given.get(pendingId)?.result === null && !joining) this.given.delete(pendingId);
      this.note('reject' in body ? 'Your skip' : 'Your answer', `respond ${pendingId}`, code);
      return;
    }
    this.given.set(pendingId, { sessionId, body, result });
    this.givenVersion++;
    const code = `respond_${result.outcome}${result.failure ? `:${result.failure}` : ''}`;
    this.note('reject' in body ? 'Your skip' : 'Your answer', `respond ${pendingId} → ${result.status === null ? 'no reply' : `HTTP ${result.status}`}`, code);
    this.render();
  }

  /** "Try again" after a failure: the same answer (or skip), a new attempt. */
  retry(pendingId: string): Promise<void> {
    const held = this.given.get(pendingId);
    return held ? this.respond(held.sessionId, pendingId, held.body) : Promise.resolve();
  }

  /**
   * How a bundle the store settled (`respondState` phase `settled`) ended for the transcript,
   * while the server's rows the page holds still say pending (no event has come): answered or
   * skipped (yours when you won, the winner's when another caller did), or null (not settled by
   * your respond, or no longer active: nobody's answer was taken).
   */
  settledAs(sessionId: string, pendingId: string): 'answered' | 'rejected' | null {
    if (this.store.respondState(sessionId, pendingId)?.phase !== 'settled') return null;
    const result = this.given.get(pendingId)?.result;
    if (!result) return null;
    if (result.outcome === 'won') return 'reject' in (this.given.get(pendingId)?.body ?? {}) ? 'rejected' : 'answered';
    if (result.outcome === 'lost') {
      const status = isRecord(result.body) ? result.body['status'] : undefined;
      return status === 'answered' || status === 'rejected' ? status : null;
    }
    return null;
  }

  /** The answers given to a bundle through this page, by question_id: yours (sent, or taken),
   * or the winner's when another caller's answer was taken (`claimed: false`). */
  givenAnswers(pendingId: string): Map<string, string> | null {
    const held = this.given.get(pendingId);
    if (!held) return null;
    if (held.result?.outcome === 'lost') return winnerAnswers(held.result.response);
    if (held.result === null || held.result.outcome === 'won') return 'answers' in held.body ? new Map(held.body.answers.map((a) => [a.question_id, a.answer])) : null;
    return null;
  }

  // ---- playing the agent (the simulator) --------------------------------------------------------

  /**
   * Runs one simulator action (a few `POST /api/dev/sim/*` calls in order) with the panel's
   * status line; `run` returns the line to show when it succeeded. One action at a time.
   */
  private async play(busy: string, run: (call: SimCall) => Promise<string>, yours: Yours | null = null): Promise<void> {
    if (this.simBusy()) return;
    const set = (status: SimStatus) => {
      if (yours === null) this.simStatus = status;
      else this.yourStatus = { ...status, ...yours };
    };
    set({ kind: 'busy', text: busy });
    this.render();
    const call: SimCall = async (route, body) => {
      const result = await api.sim(route, body);
      if (!result.ok) throw new SimError(result.code, result.message);
      return result.body;
    };
    let failed = false;
    try {
      set({ kind: 'info', text: await run(call) });
    } catch (e) {
      failed = true;
      set({ kind: 'error', text: simErrorText(e) });
    }
    this.simDone++;
    this.note(`${yours === null ? 'Play the agent' : 'You'}: ${busy.replace(/…$/, '').toLowerCase()}`, `simulator: ${busy.replace(/…$/, '')}`, failed ? 'simulator_failed' : 'simulator_ok');
    this.render();
  }

  /** A simulator action is in flight (the page runs one at a time). */
  simBusy(): boolean {
    return this.simStatus?.kind === 'busy' || this.yourStatus?.kind === 'busy';
  }

  private next<T>(list: readonly T[]): T {
    return list[this.counter++ % list.length] as T;
  }

  /** A new task with a primary session whose agent is working on it; the page opens it. */
  newTask(): Promise<void> {
    return this.play('Creating a task…', async (call) => {
      const title = this.next(TASK_TITLES);
      const taskId = str(await call(api.simPath.tasks(), { title }), 'task_id');
      const sessionId = str(await call(api.simPath.sessions(taskId), { primary: true, profile: 'coder', state: 'RUNNING' }), 'session_id');
      await call(api.simPath.turns(sessionId), { prompt: `${title}, please.` });
      await call(api.simPath.messages(sessionId), { type: 'message', text: 'On it. I will ask if I need a decision.' });
      this.navigate({ taskId, sessionId });
      return `Created “${title}”.`;
    });
  }

  /** The agent asks one question (or a bundle of three) in its open turn, waiting live. */
  ask(sessionId: string, bundle: boolean): Promise<void> {
    return this.play(bundle ? 'Asking three questions…' : 'Asking a question…', async (call) => {
      const questions = bundle ? BUNDLE : [this.next(QUESTIONS)];
      await call(api.simPath.clarification(sessionId), { questions, open_turn: true, prompt: 'Go ahead.' });
      return bundle ? 'The agent asked three questions.' : 'The agent asked a question.';
    });
  }

  askPermission(sessionId: string): Promise<void> {
    return this.play('Asking for a permission…', async (call) => {
      await call(api.simPath.permission(sessionId), { text: this.next(PERMISSIONS), open_turn: true, prompt: 'Go ahead.' });
      return 'The agent asked for a permission.';
    });
  }

  /** Your answer to a permission (the session's Approve / Deny; the demo server records it
   * through its simulator, having no permission endpoint of its own). */
  resolvePermission(sessionId: string, approve: boolean): Promise<void> {
    return this.play(approve ? 'Approving…' : 'Denying…', async (call) => {
      await call(api.simPath.resolvePermission(sessionId), { status: approve ? 'approved' : 'rejected' });
      return approve ? 'Approved.' : 'Denied.';
    }, { sessionId, what: 'permission' });
  }

  /** The agent goes away: its waiters end; an open question stays answerable (resumed). */
  detach(sessionId: string): Promise<void> {
    return this.play('Detaching the agent…', async (call) => {
      await call(api.simPath.detach(sessionId), {});
      return 'The agent detached: it no longer waits in this session.';
    });
  }

  /**
   * You write to the agent (the session's message box): the open turns complete and a new one
   * starts with your message. (In the demo the simulator stands in for the agent's backend.)
   */
  sendPrompt(sessionId: string, prompt: string): Promise<void> {
    return this.play('Sending…', async (call) => {
      await call(api.simPath.turns(sessionId), { close_open: true, prompt });
      this.promptsSent++;
      return 'Sent: a new turn started with your message.';
    }, { sessionId, what: 'prompt' });
  }

  /** The agent records a lifecycle-only turn (bookkeeping: never current). */
  lifecycleTurn(sessionId: string): Promise<void> {
    return this.play('Recording a bookkeeping turn…', async (call) => {
      await call(api.simPath.turns(sessionId), { lifecycle_only: true });
      return 'The agent recorded a bookkeeping turn.';
    });
  }

  /** A secondary (reviewer) session of the task asks two questions. */
  addReviewer(taskId: string): Promise<void> {
    return this.play('Adding a reviewer…', async (call) => {
      const sessionId = str(await call(api.simPath.sessions(taskId), { primary: false, profile: 'reviewer', state: 'RUNNING' }), 'session_id');
      await call(api.simPath.turns(sessionId), { prompt: 'Review the change.' });
      await call(api.simPath.clarification(sessionId), { questions: ['Mention the breaking change in the notes?', 'Link the migration guide?'] });
      return 'A reviewer session asked two questions.';
    });
  }

  restartServer(): Promise<void> {
    return this.play('Restarting the server…', async (call) => {
      await call(api.simPath.restart(), {});
      return 'The server restarted.';
    });
  }

  /**
   * Sends the frames this page received before the last restart to every socket again, waits for
   * them to come back, and says what the store did with them (replay.ts): the late updates it
   * ignored, counted from the store's own log (what the devtools panel lists), and the copies of
   * what it already held.
   */
  replayOldFrames(): Promise<void> {
    const frames = this.oldFrames;
    return this.play('Replaying old messages…', async (call) => {
      const log = () => readLog(this.store, this.knownSessions(), this.knownTasks());
      const watch = (this.replaying = new ReplayWatch(frames, REPLAY_WAIT_MS, log));
      try {
        await call(api.simPath.replay(), { frames });
        await watch.done;
      } finally {
        this.replaying = null;
      }
      const tally = watch.tally(frames.length);
      this.lastReplay = tally;
      return replayText(tally, { session: (id) => this.sessionName(id), task: (id) => this.taskName(id) }, reasonWords);
    });
  }

  /** The sessions the page has heard of (listed, or with messages). */
  private knownSessions(): Set<string> {
    return new Set([...this.sessions.keys(), ...this.messages.keys()]);
  }

  /** The tasks the page has heard of (listed, or named by a session). */
  private knownTasks(): Set<string> {
    const tasks = new Set([...this.taskOrder, ...this.tasks.keys(), ...this.sessionLists.keys()]);
    for (const { value } of this.sessions.values()) if (typeof value.task_id === 'string' && value.task_id) tasks.add(value.task_id);
    return tasks;
  }

  resetDemo(): Promise<void> {
    return this.play('Resetting the demo data…', async (call) => {
      await call(api.simPath.reset(), {});
      this.navigate({ taskId: null, sessionId: null });
      await this.loadTasks();
      return 'The demo data is back to its start.';
    });
  }
}

/** Why a load failed, in words (the wire details go to Details). */
function failureWords(e: unknown): string {
  if (e instanceof api.HttpError) return e.status >= 500 ? 'the server had a problem' : e.status === 404 ? 'the server does not know it' : 'the server refused';
  return 'the server did not answer';
}

type SimCall = (route: string, body: Record<string, unknown>) => Promise<Record<string, unknown>>;

class SimError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

function simErrorText(e: unknown): string {
  if (e instanceof SimError) {
    if (e.code === 'session_terminal') return 'This session has ended: the agent cannot act in it.';
    if (e.code === 'nothing_pending') return 'Nothing waits for a permission in this session.';
    if (e.code === 'unreachable') return 'Cannot reach the server.';
    return `The simulator refused: ${e.message}`;
  }
  return e instanceof Error ? e.message : String(e);
}

const str = (body: Record<string, unknown>, key: string): string => {
  const value = body[key];
  if (typeof value !== 'string') throw new Error(`the simulator's answer has no ${key}`);
  return value;
};

/** The winner's answers of a lost respond (`response`, the reference client's serialization:
 * `{ answers: [{ question_id, custom_text }] }`), by question_id. */
function winnerAnswers(response: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const list = isRecord(response) ? response['answers'] : undefined;
  if (Array.isArray(list)) {
    for (const a of list) {
      if (!isRecord(a) || typeof a['question_id'] !== 'string') continue;
      const text = typeof a['custom_text'] === 'string' ? a['custom_text'] : typeof a['answer'] === 'string' ? a['answer'] : null;
      if (text !== null) found.set(a['question_id'], text);
    }
  }
  return found;
}

/** A row's last-change time (display-copy ordering only). */
function stamp(m: Message): number {
  const t = Date.parse(m.updated_at ?? m.created_at ?? '');
  return Number.isNaN(t) ? 0 : t;
}
