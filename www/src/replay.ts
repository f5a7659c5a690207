// "Replay old messages": the frames the page received before a server restart, sent back through
// the simulator, and what the store did with them, counted from the store itself. The late updates
// it ignored are the entries its log of rejected inputs gained during the replay: the log the
// devtools panel lists (`explain(sessionId).rejected` for a session, `explainOwner(taskId).rejected`
// for a task, newest first), filed by the session (or, for a task's summary, the task) the store
// filed them under. The rest are counted by `applyFrame`'s outcome of each frame ("unchanged": a
// turn event carries no revision, so a copy of a turn held is already known, not ignored). The
// page keeps no list of which reasons are rejections: the store's log says which inputs it rejected.
import type { FrameOutcome, ProjectionStore, RejectedInput } from 'task-projection';

/** How many rejected inputs the store's log keeps, store-wide (src/store/rejections.rs). */
export const LOG_SIZE = 64;

/** The store's log as the panel shows it: each session's entries, and each task's entries about
 * no session (its summary), newest first. */
export interface LogView { sessions: Map<string, RejectedInput[]>; tasks: Map<string, RejectedInput[]> }

/** Reads the log for these sessions and tasks (the development build's `explain`; empty without it). */
export function readLog(store: ProjectionStore, sessions: Iterable<string>, tasks: Iterable<string>): LogView {
  const view: LogView = { sessions: new Map(), tasks: new Map() };
  try {
    for (const id of sessions) view.sessions.set(id, store.explain(id).rejected);
    for (const id of tasks) view.tasks.set(id, store.explainOwner(id).rejected.filter((r) => r.session_id === null));
  } catch {
    // the production build explains nothing: no log to count from
  }
  return view;
}

const same = (a: RejectedInput | undefined, b: RejectedInput | undefined) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The entries of `after` that `before` did not have. The log grows at its front (newest first)
 * and, once full, loses its oldest entries: `after` is the new entries followed by the start of
 * `before`, so the new ones are those before the longest tail of `after` that is a start of
 * `before`.
 */
export function added(before: readonly RejectedInput[], after: readonly RejectedInput[]): RejectedInput[] {
  for (let k = Math.min(before.length, after.length); k > 0; k--) {
    let match = true;
    for (let i = 0; i < k && match; i++) match = same(after[after.length - k + i], before[i]);
    if (match) return after.slice(0, after.length - k);
  }
  return after.slice();
}

/** What the replay came to: frames sent, back, the late updates the store logged, and the rest. */
export interface ReplayTally {
  sent: number;
  back: number;
  /** Logged during the replay, about a session: session id → count (what `explain(sessionId).rejected` gained). */
  ignoredBySession: Map<string, number>;
  /** Logged during the replay, about a task's summary: task id → count (`explainOwner(taskId).rejected`). */
  ignoredSummaries: Map<string, number>;
  /** Logged during the replay, about a task but neither a session nor its summary: task id → count. */
  ignoredByTask: Map<string, number>;
  /** The log gained as many entries as it keeps: there may have been more. */
  atLeast: boolean;
  /** The other frames, by the store's outcome of each (`unchanged`: already held). */
  other: Map<string, number>;
}

/** Waits for replayed frames to come back through the page's socket, and reads the store's log before and after. */
export class ReplayWatch {
  private readonly waiting = new Map<string, number>();
  private left: number;
  private readonly outcomes: string[] = [];
  private finish: (() => void) | null = null;
  private readonly before: LogView;
  readonly done: Promise<void>;

  constructor(frames: readonly string[], timeoutMs: number, private readonly log: () => LogView) {
    this.before = log();
    for (const f of frames) this.waiting.set(f, (this.waiting.get(f) ?? 0) + 1);
    this.left = frames.length;
    this.done = new Promise<void>((resolve) => {
      this.finish = resolve;
      if (this.left === 0) resolve();
      else setTimeout(resolve, timeoutMs);
    });
  }

  /** A frame the page's socket delivered: counted (true) when it is one of the replayed ones. */
  take(data: unknown, outcome: FrameOutcome): boolean {
    if (typeof data !== 'string') return false;
    const n = this.waiting.get(data);
    if (!n) return false;
    if (n === 1) this.waiting.delete(data);
    else this.waiting.set(data, n - 1);
    this.outcomes.push(outcome.reason);
    if (--this.left === 0) this.finish?.();
    return true;
  }

  tally(sent: number): ReplayTally {
    const after = this.log();
    const t: ReplayTally = {
      sent, back: this.outcomes.length, ignoredBySession: new Map(), ignoredSummaries: new Map(), ignoredByTask: new Map(), atLeast: false, other: new Map(),
    };
    const add = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
    // The reasons of the entries logged: those outcomes are the ignored frames, the others the rest.
    const logged = new Map<string, number>();
    let total = 0;
    for (const [id, now] of after.sessions) {
      const fresh = added(this.before.sessions.get(id) ?? [], now);
      if (fresh.length) add(t.ignoredBySession, id, fresh.length);
      for (const r of fresh) add(logged, r.reason);
      total += fresh.length;
    }
    for (const [id, now] of after.tasks) {
      for (const r of added(this.before.tasks.get(id) ?? [], now)) {
        add(r.input === 'task.status_summary.updated' ? t.ignoredSummaries : t.ignoredByTask, id);
        add(logged, r.reason);
        total += 1;
      }
    }
    t.atLeast = total >= LOG_SIZE;
    for (const reason of this.outcomes) {
      const n = logged.get(reason) ?? 0;
      if (n > 0) logged.set(reason, n - 1);
      else add(t.other, reason);
    }
    return t;
  }
}

/** The status line: counts in words, sessions and tasks by their short labels. */
export function replayText(
  t: ReplayTally, names: { session(id: string): string; task(id: string): string }, words: (reason: string) => string,
): string {
  const parts: string[] = [];
  for (const [id, n] of t.ignoredBySession) parts.push(`${n} about ${names.session(id)}`);
  for (const [id, n] of t.ignoredSummaries) parts.push(`${n} about the summary of ${names.task(id)}`);
  for (const [id, n] of t.ignoredByTask) parts.push(`${n} about ${names.task(id)}`);
  const other = [...t.other].map(([reason, n]) => `${n} ${n === 1 ? 'was' : 'were'} ${words(reason)}`);
  const lost = t.sent - t.back;
  return [
    `The server sent ${t.sent} old ${t.sent === 1 ? 'message' : 'messages'} again.`,
    `Late updates ignored: ${parts.length ? `${t.atLeast ? 'at least ' : ''}${parts.join('; ')}` : 'none'}.`,
    t.atLeast ? `(The engine keeps its last ${LOG_SIZE}.)` : '',
    other.length ? `The rest: ${other.join('; ')}.` : '',
    lost > 0 ? `${lost} did not come back to this page.` : '',
  ].filter(Boolean).join(' ');
}

