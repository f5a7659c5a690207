// A seeded generator of server-like histories for the store's convergence property
// (tests/js/store.convergence.test.mjs). Plain ES module: no Node-only imports, no DOM use, so a
// browser page can import it too.
//
//   generateHistory(seed, options?)  the ordered inputs a simulated backend emitted, each a step of
//                                    docs/store-fixture-format.md: `{ call, args }`, and for a task
//                                    snapshot the pair `{ call: 'beginTaskFetch', save: 'tokenN' }`,
//                                    `{ call: 'applyTaskSnapshot', args: [{ $saved: 'tokenN' }, tasks] }`
//   historyEntities(inputs)          { sessions, tasks, taskOf } named by a list of inputs
//   makeRng(seed)                    the deterministic PRNG (splitmix32) the generator uses
//
// The simulated backend holds 1–2 tasks with 1–3 sessions each; per session a state, its own
// `updated_at` clock, turns and messages. One global nanosecond clock (every action advances it;
// timestamps `2026-11-29T12:MM:SS.NNNNNNNNNZ`, strictly increasing as emitted); one process-wide
// revision `{epoch, sequence}` whose sequence increases by one per projection emitted (a restart
// bumps the epoch and restarts the sequence at 1); per task a status-summary revision, +1 per
// summary published.
//
// Server-like on purpose (the cases where SPEC promises order independence): no `task.updated`
// carrying `status_summary`, no `status_summary_invalidated`, no two different versions of one
// message / turn / session sharing an `updated_at`, projection keys both present or both omitted,
// no message id re-added after its delete, unique turn and message ids, sessions never leave a
// task's list (until the task is removed, always last), two different projections of a session
// never share a revision, no selections. After a message event that omitted the projection keys,
// a later input always carries the session's projection again (a session event at the end if
// nothing else did), so SPEC §5's "an older update carries no projection" can never drop the
// session's newest projection.

/** splitmix32: a small deterministic PRNG. */
export function makeRng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    return (z >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return {
    next,
    int,
    /** An integer in [lo, hi]. */
    range: (lo, hi) => lo + int(hi - lo + 1),
    chance: (p) => next() < p,
    pick: (items) => items[int(items.length)],
    /** A key of `weights` ({key: weight}), with probability proportional to its weight. */
    weighted(weights) {
      const keys = Object.keys(weights).filter((k) => weights[k] > 0);
      let total = 0;
      for (const k of keys) total += weights[k];
      let x = next() * total;
      for (const k of keys) {
        x -= weights[k];
        if (x < 0) return k;
      }
      return keys[keys.length - 1];
    },
  };
}

export const STATES = ['RUNNING', 'WAITING_FOR_INPUT', 'IDLE', 'COMPLETED', 'FAILED', 'CANCELLED'];
const INPUT_CAPABLE = new Set(['RUNNING', 'WAITING_FOR_INPUT']);
export const isInputCapable = (state) => INPUT_CAPABLE.has(state);

const DEFAULTS = {
  /** Steps (actions) of the simulated backend: [min, max]. */
  steps: [10, 40],
  /** Tasks: [min, max]. */
  tasks: [1, 2],
  /** Sessions per task: [min, max]. */
  sessionsPerTask: [1, 3],
  /** Chance a message event omits both projection keys ("the backend could not project"). */
  omitProjection: 0.08,
  /** Chance the history ends with a client reload (every REST snapshot once). */
  finalReload: 0.5,
  /** Chance the history ends with a task deletion. */
  removeTask: 0.25,
  /** Weight of the user answering a question (SPEC §13; 0: never, the data alone). */
  responds: 0,
};

const pad = (n, w) => String(n).padStart(w, '0');
const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
const isPendingStatus = (status) => status === undefined || status === null || status === '' || status === 'pending';

class Backend {
  constructor(rng, options) {
    this.r = rng;
    this.o = options;
    this.ns = 0;
    this.epoch = 7;
    this.sequence = 0;
    this.tasks = [];
    this.sessions = [];
    this.out = [];
    this.counters = { task: 0, session: 0, turn: 0, message: 0, pending: 0, token: 0 };
    this.maxTasks = rng.range(options.tasks[0], options.tasks[1]);
  }

  // ---- clocks ---------------------------------------------------------------------------------

  /** Advances the global clock and returns its timestamp (9 fraction digits). */
  now() {
    // Mostly a fraction of a second; sometimes a few nanoseconds (the order must not lose them).
    this.ns += this.r.chance(0.2) ? this.r.range(1, 9) : this.r.range(1, 400_000_000);
    const s = Math.floor(this.ns / 1e9);
    if (s >= 3600) throw new Error('history clock overflowed the hour');
    return `2026-11-29T12:${pad(Math.floor(s / 60), 2)}:${pad(s % 60, 2)}.${pad(this.ns % 1e9, 9)}Z`;
  }

  revision() {
    this.sequence += 1;
    return { epoch: String(this.epoch), sequence: this.sequence };
  }

  emit(call, args, extra) {
    this.out.push({ call, ...(args && { args: clone(args) }), ...extra });
  }

  // ---- the backend's projection (SPEC §2, §4) ---------------------------------------------------

  liveMessages(s) {
    return s.messages.filter((m) => !m.deleted);
  }

  currentTurn(s) {
    const live = this.liveMessages(s);
    const eligible = s.turns.filter((t) => {
      const m = t.metadata;
      if (m.lifecycle_only === true) return false;
      if (m.prompt_dispatch_pending === true && m.prompt_dispatch_attempted !== true) {
        return live.some((msg) => msg.turn_id === t.id);
      }
      return true;
    });
    let best;
    for (const t of eligible) {
      if (best === undefined) best = t;
      else {
        const open = t.completed_at === null;
        const bestOpen = best.completed_at === null;
        const newer = open !== bestOpen ? open
          : t.started_at !== best.started_at ? t.started_at > best.started_at
            : t.created_at !== best.created_at ? t.created_at > best.created_at
              : t.id > best.id;
        if (newer) best = t;
      }
    }
    return best;
  }

  project(s) {
    if (!isInputCapable(s.state)) return null;
    const turn = this.currentTurn(s);
    if (turn === undefined) return null;
    const rows = this.liveMessages(s).filter((m) => m.turn_id === turn.id);
    if (rows.some((m) => m.type === 'clarification_request' && isPendingStatus(m.metadata.status))) return 'clarification';
    // Latest permission_request by created_at, then insertion order (rows are in insertion order).
    let latest;
    for (const m of rows) if (m.type === 'permission_request' && (latest === undefined || m.created_at >= latest.created_at)) latest = m;
    if (latest !== undefined && isPendingStatus(latest.metadata.status)) return 'permission';
    return null;
  }

  taskAction(t) {
    const actions = t.sessions.filter((s) => isInputCapable(s.state)).map((s) => this.project(s));
    if (actions.includes('permission')) return 'permission';
    if (actions.includes('clarification')) return 'clarification';
    return null;
  }

  /** The projection keys of an event for `s`, and the session marked as published. */
  keys(s) {
    const action = this.project(s);
    s.published = action;
    s.dirty = false;
    return { pending_action: action, pending_action_revision: this.revision() };
  }

  // ---- emitted shapes ---------------------------------------------------------------------------

  messagePayload(m) {
    const p = { message_id: m.id, session_id: m.session_id, task_id: m.task_id };
    if (m.turn_id !== undefined) p.turn_id = m.turn_id;
    p.type = m.type;
    p.metadata = m.metadata;
    p.created_at = m.created_at;
    p.updated_at = m.updated_at;
    return p;
  }

  messageEvent(kind, s, m) {
    const p = this.messagePayload(m);
    if (this.r.chance(this.o.omitProjection)) s.dirty = true;
    else Object.assign(p, this.keys(s));
    this.emit('applyMessageEvent', [kind, p]);
  }

  sessionEvent(s) {
    this.emit('applySessionEvent', [{ id: s.id, task_id: s.task_id, state: s.state, updated_at: s.updated_at, ...this.keys(s) }]);
  }

  publishSummary(t) {
    t.summaryRevision += 1;
    const action = this.taskAction(t);
    const summary = { revision: t.summaryRevision, updated_at: this.now() };
    if (action !== null) summary.pending_action = action;
    t.summary = summary;
    t.published = action;
    this.emit('applyStatusSummaryEvent', [{ task_id: t.id, workspace_id: 'w', status_summary: summary }]);
  }

  /**
   * After an action: a session whose projection changed without an event carrying it (a turn
   * event) gets a session event; a task whose action changed publishes its summary.
   */
  settle() {
    for (const s of this.sessions) {
      if (!s.dirty && this.project(s) !== s.published) {
        s.updated_at = this.now();
        this.sessionEvent(s);
      }
    }
    for (const t of this.tasks) if (this.taskAction(t) !== t.published) this.publishSummary(t);
  }

  // ---- actions ----------------------------------------------------------------------------------

  createTask() {
    this.counters.task += 1;
    const t = {
      id: `task-${this.counters.task}`,
      sessions: [],
      summaryRevision: 0,
      summary: null,
      published: undefined,
      maxSessions: this.r.range(this.o.sessionsPerTask[0], this.o.sessionsPerTask[1]),
    };
    this.tasks.push(t);
    this.publishSummary(t);
    this.createSession(t);
  }

  createSession(t) {
    this.counters.session += 1;
    const at = this.now();
    const s = {
      id: `sess-${this.counters.session}`,
      task_id: t.id,
      state: this.r.chance(0.8) ? 'RUNNING' : this.r.pick(['WAITING_FOR_INPUT', 'IDLE']),
      started_at: at,
      updated_at: at,
      is_primary: t.sessions.length === 0,
      turns: [],
      messages: [],
      published: undefined,
      dirty: false,
    };
    t.sessions.push(s);
    this.sessions.push(s);
    this.sessionEvent(s);
    // A session usually starts with its first prompt.
    if (this.r.chance(0.75)) this.startTurn(s);
  }

  /** A session for a message action: input-capable ones are likelier. */
  pickSession() {
    const capable = this.sessions.filter((s) => isInputCapable(s.state));
    return capable.length > 0 && this.r.chance(0.8) ? this.r.pick(capable) : this.r.pick(this.sessions);
  }

  turnAction() {
    const s = this.pickSession();
    const reservations = s.turns.filter((t) => t.metadata.prompt_dispatch_pending === true && t.metadata.prompt_dispatch_attempted !== true);
    const open = s.turns.filter((t) => t.completed_at === null);
    if (reservations.length > 0 && this.r.chance(0.5)) {
      const turn = this.r.pick(reservations);
      turn.metadata = { ...turn.metadata, prompt_dispatch_attempted: true };
      turn.updated_at = this.now();
      this.emit('applyTurnEvent', [turn]);
    } else if (open.length > 0 && this.r.chance(0.45)) {
      // Mostly the newest open turn.
      const turn = this.r.chance(0.8) ? open[open.length - 1] : this.r.pick(open);
      const at = this.now();
      turn.completed_at = at;
      turn.updated_at = at;
      this.emit('applyTurnEvent', [turn]);
    } else {
      this.startTurn(s);
    }
  }

  startTurn(s) {
    this.counters.turn += 1;
    const at = this.now();
    const kind = this.r.weighted({ plain: 70, lifecycle: 15, reservation: 15 });
    const metadata = kind === 'lifecycle' ? { lifecycle_only: true } : kind === 'reservation' ? { prompt_dispatch_pending: true } : {};
    const turn = {
      id: `turn-${this.counters.turn}`,
      session_id: s.id,
      task_id: s.task_id,
      started_at: at,
      created_at: at,
      updated_at: at,
      completed_at: null,
      metadata,
    };
    s.turns.push(turn);
    this.emit('applyTurnEvent', [turn]);
  }

  newMessage(s, type, metadata, turnId) {
    this.counters.message += 1;
    const at = this.now();
    const m = { id: `msg-${this.counters.message}`, session_id: s.id, task_id: s.task_id, type, metadata, created_at: at, updated_at: at, deleted: false };
    if (turnId !== undefined) m.turn_id = turnId;
    s.messages.push(m);
    return m;
  }

  addMessage() {
    const s = this.pickSession();
    // Usually the session's newest turn (started last), sometimes none.
    const newest = s.turns[s.turns.length - 1];
    const turnId = newest !== undefined && this.r.chance(0.88) ? newest.id : undefined;
    const type = this.r.weighted({ message: 45, clarification_request: 35, permission_request: 20 });
    if (type === 'clarification_request') {
      this.counters.pending += 1;
      const pendingId = `pend-${this.counters.pending}`;
      const size = this.r.range(1, 3);
      const total = this.r.chance(0.85);
      for (let i = 0; i < size; i++) {
        const metadata = { pending_id: pendingId, question_index: i, ...(total && { question_total: size }), status: 'pending' };
        this.messageEvent('added', s, this.newMessage(s, type, metadata, turnId));
      }
    } else {
      const metadata = type === 'permission_request' ? { status: 'pending' } : {};
      this.messageEvent('added', s, this.newMessage(s, type, metadata, turnId));
    }
  }

  updateMessage() {
    const requests = this.sessions.flatMap((s) => this.liveMessages(s)
      .filter((m) => m.type !== 'message' && isPendingStatus(m.metadata.status)).map((m) => [s, m]));
    const any = this.sessions.flatMap((s) => this.liveMessages(s).map((m) => [s, m]));
    if (any.length === 0) return;
    const [s, m] = requests.length > 0 && this.r.chance(0.85) ? this.r.pick(requests) : this.r.pick(any);
    if (m.type === 'clarification_request' && isPendingStatus(m.metadata.status)) {
      // Answer (or skip) the bundle: usually every pending row, sometimes only this one.
      const status = this.r.chance(0.7) ? 'answered' : 'rejected';
      const rows = this.r.chance(0.75)
        ? this.liveMessages(s).filter((x) => x.type === m.type && x.metadata.pending_id === m.metadata.pending_id && isPendingStatus(x.metadata.status))
        : [m];
      for (const row of rows) {
        row.metadata = { ...row.metadata, status };
        row.updated_at = this.now();
        this.messageEvent('updated', s, row);
      }
    } else if (m.type === 'permission_request' && isPendingStatus(m.metadata.status)) {
      m.metadata = { ...m.metadata, status: this.r.chance(0.7) ? 'approved' : 'rejected' };
      m.updated_at = this.now();
      this.messageEvent('updated', s, m);
    } else {
      // An edit that changes nothing the rules read: only a newer version.
      m.updated_at = this.now();
      this.messageEvent('updated', s, m);
    }
  }

  deleteMessage() {
    const any = this.sessions.flatMap((s) => this.liveMessages(s).map((m) => [s, m]));
    if (any.length === 0) return;
    const [s, m] = this.r.pick(any);
    m.deleted = true;
    m.updated_at = this.now();
    this.messageEvent('deleted', s, m);
  }

  changeState() {
    const s = this.r.pick(this.sessions);
    s.state = this.r.pick(STATES.filter((x) => x !== s.state));
    s.updated_at = this.now();
    this.sessionEvent(s);
  }

  restart() {
    this.epoch += 1;
    this.sequence = 0;
  }

  // ---- REST snapshots, read at this point of the history ---------------------------------------

  sessionList(t) {
    // One sequence reserved for the whole read.
    const revision = this.revision();
    const sessions = [...t.sessions].sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0)).map((s) => {
      s.published = this.project(s);
      s.dirty = false;
      return {
        id: s.id,
        task_id: s.task_id,
        state: s.state,
        started_at: s.started_at,
        updated_at: s.updated_at,
        is_primary: s.is_primary,
        pending_action: s.published,
        pending_action_revision: revision,
      };
    });
    this.emit('applySessionList', [t.id, sessions]);
  }

  turnList(s) {
    this.emit('applyTurnList', [s.id, s.turns]);
  }

  messagePage(s) {
    const live = this.liveMessages(s);
    // A page is sometimes only the newest rows.
    const rows = live.length > 1 && this.r.chance(0.3) ? live.slice(live.length - this.r.range(1, live.length - 1)) : live;
    this.emit('applyMessagePage', [s.id, rows.map((m) => {
      const { message_id: id, ...rest } = this.messagePayload(m);
      return { id, ...rest };
    })]);
  }

  taskSnapshot() {
    this.counters.token += 1;
    const token = `token${this.counters.token}`;
    this.emit('beginTaskFetch', undefined, { save: token });
    this.emit('applyTaskSnapshot', [{ $saved: token }, this.tasks.map((t) => ({ id: t.id, status_summary: t.summary }))]);
  }

  restSnapshot() {
    const kind = this.r.weighted({ sessions: 3, turns: 4, messages: 4, tasks: 2 });
    if (kind === 'sessions') this.sessionList(this.r.pick(this.tasks));
    else if (kind === 'turns') this.turnList(this.r.pick(this.sessions));
    else if (kind === 'messages') this.messagePage(this.r.pick(this.sessions));
    else this.taskSnapshot();
  }

  // ---- the user's answer (SPEC §8, §13) -------------------------------------------------------------

  /** The pending rows of bundle `pendingId` of `s`, and whether they are its current turn's. */
  bundle(s, pendingId) {
    const rows = this.liveMessages(s).filter((m) => m.type === 'clarification_request' && m.metadata.pending_id === pendingId);
    const pending = rows.filter((m) => isPendingStatus(m.metadata.status));
    const turn = isInputCapable(s.state) ? this.currentTurn(s) : undefined;
    const active = pending.length > 0 && turn !== undefined && pending.every((m) => m.turn_id === turn.id);
    const winner = rows.map((m) => m.metadata.status).find((x) => x === 'answered' || x === 'rejected');
    return { pending, active, winner };
  }

  /**
   * The user answers (or skips) a bundle; the server handles it here (the reference server's
   * reply, server/src/http/actions.rs): won (200 `claimed: true`) with its writes published, lost
   * to an earlier answer (200 `claimed: false`), or the request fails (network, timeout, 503,
   * 500 after the claim, an unreadable 200); sometimes the reference client's envelope (no
   * `outcome`, no position). A bundle with pending rows that is not active is left alone (a
   * backend never makes one active again, so no 409 with pending rows is generated). The client
   * receives the pair `respondStart` / `respondReply`, the reply carrying `handledAt` (inputs
   * before it were produced before the handling).
   */
  respond() {
    const s = this.pickSession();
    const bundles = [...new Set(this.liveMessages(s).filter((m) => m.type === 'clarification_request' && m.metadata.pending_id !== undefined).map((m) => m.metadata.pending_id))];
    const active = bundles.filter((p) => this.bundle(s, p).active);
    const turn = isInputCapable(s.state) ? this.currentTurn(s) : undefined;
    if (active.length === 0 && turn !== undefined && this.r.chance(0.8)) {
      // The agent asks now (the user answers what they see).
      this.counters.pending += 1;
      const asked = `pend-${this.counters.pending}`;
      const size = this.r.range(1, 3);
      const total = this.r.chance(0.75);
      for (let i = 0; i < size; i++) {
        const metadata = { pending_id: asked, question_index: i, ...(total && { question_total: size }), status: 'pending' };
        this.messageEvent('added', s, this.newMessage(s, 'clarification_request', metadata, turn.id));
      }
      active.push(asked);
    }
    const lost = bundles.filter((p) => this.bundle(s, p).pending.length === 0 && this.bundle(s, p).winner !== undefined);
    const pendingId = active.length > 0 && this.r.chance(0.85) ? this.r.pick(active) : lost.length > 0 ? this.r.pick(lost) : undefined;
    if (pendingId === undefined) return;
    // The user opened the session: the app loaded its turns and messages.
    this.turnList(s);
    this.messagePage(s);
    this.counters.token += 1;
    const attempt = `attempt${this.counters.token}`;
    const fate = this.r.weighted({ normal: 10, network: 1, timeout: 1, retryable: 1, handledTimeout: 1, unreadable: 1, envelope: 2, nonRetryable: 1 });
    const start = { call: 'respondStart', args: [s.id, pendingId], save: attempt };
    const replyStep = (reply, handledAt) => ({ call: 'respondReply', args: [{ $saved: attempt }, reply], handledAt, pendingId, sessionId: s.id, taskId: s.task_id });
    if (fate === 'network' || fate === 'timeout' || fate === 'retryable') {
      const reply = fate === 'retryable'
        ? { status: 503, body: { outcome: 'retryable_error', success: false, claimed: true, error: { code: 'retryable_error', message: '…' } } }
        : { error: fate };
      this.out.push(start, replyStep(reply, this.out.length + 1));
      return;
    }
    const at = this.out.length;
    const { active: won, winner } = this.bundle(s, pendingId);
    const status = won ? (this.r.chance(0.7) ? 'answered' : 'rejected') : winner;
    if (won) {
      for (const row of this.bundle(s, pendingId).pending) {
        row.metadata = { ...row.metadata, status };
        row.updated_at = this.now();
        this.messageEvent('updated', s, row);
      }
    }
    const body = {
      outcome: won ? 'success' : 'conflict',
      success: true,
      claimed: won,
      status,
      response: { pending_id: pendingId, answers: [], rejected: status === 'rejected' },
      session: { id: s.id, task_id: s.task_id, pending_action: this.project(s), pending_action_revision: this.revision() },
    };
    const t = this.tasks.find((x) => x.id === s.task_id);
    if (t.summary !== null) body.status_summary = t.summary;
    let reply = { status: 200, body };
    if (fate === 'handledTimeout') reply = { error: 'timeout' };
    else if (fate === 'unreadable') reply = { status: 200 };
    else if (fate === 'nonRetryable' && won) reply = { status: 500, body: { outcome: 'non_retryable_error', success: false, claimed: true } };
    else if (fate === 'envelope') {
      delete body.outcome;
      delete body.session;
    }
    this.out.splice(at, 0, start, replyStep(reply, at + 1));
  }

  // ---- the history ------------------------------------------------------------------------------

  run() {
    this.createTask();
    const steps = this.r.range(this.o.steps[0], this.o.steps[1]);
    for (let i = 0; i < steps; i++) {
      this.now(); // every action advances the clock
      const canTask = this.tasks.length < this.maxTasks;
      const canSession = this.tasks.some((t) => t.sessions.length < t.maxSessions);
      const action = this.r.weighted({
        addMessage: 30,
        updateMessage: 10,
        deleteMessage: 5,
        turn: 14,
        state: 8,
        summary: 3,
        restart: 2,
        rest: 14,
        session: canSession ? 5 : 0,
        task: canTask ? 3 : 0,
        respond: this.o.responds,
      });
      switch (action) {
        case 'addMessage': this.addMessage(); break;
        case 'updateMessage': this.updateMessage(); break;
        case 'deleteMessage': this.deleteMessage(); break;
        case 'turn': this.turnAction(); break;
        case 'state': this.changeState(); break;
        case 'summary': this.publishSummary(this.r.pick(this.tasks)); break;
        case 'restart': this.restart(); break;
        case 'rest': this.restSnapshot(); break;
        case 'session': this.createSession(this.r.pick(this.tasks.filter((t) => t.sessions.length < t.maxSessions))); break;
        case 'task': this.createTask(); break;
        case 'respond': this.respond(); break;
        default: throw new Error(`unknown action ${action}`);
      }
      this.settle();
    }
    // A projection omitted by a message event is carried again by a later input.
    for (const s of this.sessions) {
      if (s.dirty) {
        s.updated_at = this.now();
        this.sessionEvent(s);
      }
    }
    this.settle();
    if (this.r.chance(this.o.finalReload)) {
      for (const t of this.tasks) this.sessionList(t);
      for (const s of this.sessions) {
        this.turnList(s);
        this.messagePage(s);
      }
      this.taskSnapshot();
    }
    if (this.r.chance(this.o.removeTask)) this.emit('removeTask', [this.r.pick(this.tasks).id]);
    return this.out;
  }
}

/**
 * The inputs a simulated backend emitted for `seed`, in emission order (see the module docs).
 * `options` overrides DEFAULTS (steps, tasks, sessionsPerTask, omitProjection, finalReload,
 * removeTask).
 */
export function generateHistory(seed, options = {}) {
  return new Backend(makeRng(seed), { ...DEFAULTS, ...options }).run();
}

/** The sessions and tasks a list of inputs names, and each session's task. */
export function historyEntities(inputs) {
  const sessions = [];
  const tasks = [];
  const taskOf = new Map();
  const addTask = (id) => {
    if (typeof id === 'string' && !tasks.includes(id)) tasks.push(id);
  };
  const addSession = (id, taskId) => {
    if (typeof id !== 'string') return;
    if (!sessions.includes(id)) sessions.push(id);
    if (typeof taskId === 'string') {
      taskOf.set(id, taskId);
      addTask(taskId);
    }
  };
  for (const { call, args = [] } of inputs) {
    switch (call) {
      case 'applyMessageEvent': addSession(args[1].session_id, args[1].task_id); break;
      case 'applyTurnEvent': addSession(args[0].session_id, args[0].task_id); break;
      case 'applySessionEvent': addSession(args[0].id, args[0].task_id); break;
      case 'applySessionList':
        addTask(args[0]);
        for (const s of args[1]) addSession(s.id, args[0]);
        break;
      case 'applyTurnList':
      case 'applyMessagePage':
        addSession(args[0]);
        for (const row of args[1]) addSession(row.session_id, row.task_id);
        break;
      case 'applyStatusSummaryEvent': addTask(args[0].task_id); break;
      case 'applyTaskSnapshot': for (const t of args[1]) addTask(t.id); break;
      case 'removeTask': addTask(args[0]); break;
      default: break;
    }
  }
  return { sessions, tasks, taskOf };
}
