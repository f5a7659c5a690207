// "Replay old messages": the frames the page received before a server restart, sent back through
// the simulator, and what the store did with each as it arrives again. The status line counts by
// the store's own outcome of each frame (`applyFrame`'s reason), in the terms of the "Why?" panel:
// a late update ignored is one the store rejected, about a session (`explain(sessionId)` lists it)
// or about a task's summary (`explainOwner(taskId)` lists it); a frame the store took as a copy of
// what it holds ("unchanged": a turn event carries no revision) is already known, not ignored.
import type { FrameOutcome } from 'task-projection';
import { isRecord } from './wire';

/** The reasons the store records in its rejection log (`explain().rejected`): src/store/rejections.rs. */
const REJECTED = new Set<string>([
  'older_revision_rejected', 'older_update_carries_no_projection', 'older_state_ignored',
  'deleted_message_stays_deleted', 'task_mismatch_rejected', 'task_removed',
]);

/** A replayed frame back from the server: what the store did with it, and what it was about. */
export interface Replayed { type: string; reason: string; sessionId: string | null; taskId: string | null }

/** What the replay came to: frames sent, back, and the store's outcomes grouped as the status says them. */
export interface ReplayTally {
  sent: number;
  back: number;
  /** Rejected, about a session: session id → count (what `explain(sessionId).rejected` gained). */
  ignoredBySession: Map<string, number>;
  /** Rejected, about a task's summary (no session): task id → count (`explainOwner(taskId).rejected`). */
  ignoredSummaries: Map<string, number>;
  /** Not rejected: the store's reason → count (`unchanged`: already held). */
  other: Map<string, number>;
}

/** The frame's session and task, as the store files a rejection of it. */
export function aboutOf(type: string, payload: Record<string, unknown>): { sessionId: string | null; taskId: string | null } {
  const str = (k: string) => (typeof payload[k] === 'string' ? (payload[k] as string) : null);
  const taskId = str('task_id');
  if (type === 'task.status_summary.updated' || type.startsWith('task.')) return { sessionId: null, taskId: taskId ?? str('id') };
  const sessionId = str('session_id') ?? (type.startsWith('session.') && !type.startsWith('session.message.') ? str('id') : null);
  return { sessionId, taskId };
}

/** Waits for replayed frames to come back through the page's socket. */
export class ReplayWatch {
  private readonly waiting = new Map<string, number>();
  private left: number;
  private readonly back: Replayed[] = [];
  private finish: (() => void) | null = null;
  readonly done: Promise<void>;

  constructor(frames: readonly string[], timeoutMs: number) {
    for (const f of frames) this.waiting.set(f, (this.waiting.get(f) ?? 0) + 1);
    this.left = frames.length;
    this.done = new Promise<void>((resolve) => {
      this.finish = resolve;
      if (this.left === 0) resolve();
      else setTimeout(resolve, timeoutMs);
    });
  }

  /** A frame the page's socket delivered: counted (true) when it is one of the replayed ones. */
  take(data: unknown, outcome: FrameOutcome, frame: unknown): boolean {
    if (typeof data !== 'string') return false;
    const n = this.waiting.get(data);
    if (!n) return false;
    if (n === 1) this.waiting.delete(data);
    else this.waiting.set(data, n - 1);
    const payload = isRecord(frame) && isRecord(frame['payload']) ? frame['payload'] : {};
    this.back.push({ type: outcome.type, reason: outcome.reason, ...aboutOf(outcome.type, payload) });
    if (--this.left === 0) this.finish?.();
    return true;
  }

  tally(sent: number): ReplayTally {
    const t: ReplayTally = { sent, back: this.back.length, ignoredBySession: new Map(), ignoredSummaries: new Map(), other: new Map() };
    const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    for (const r of this.back) {
      if (!REJECTED.has(r.reason)) add(t.other, r.reason);
      else if (r.sessionId) add(t.ignoredBySession, r.sessionId);
      else add(t.ignoredSummaries, r.taskId ?? '');
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
  const other = [...t.other].map(([reason, n]) => `${n} ${n === 1 ? 'was' : 'were'} ${words(reason)}`);
  const lost = t.sent - t.back;
  return [
    `The server sent ${t.sent} old ${t.sent === 1 ? 'message' : 'messages'} again.`,
    `Late updates ignored: ${parts.length ? parts.join('; ') : 'none'}.`,
    other.length ? `The rest: ${other.join('; ')}.` : '',
    lost > 0 ? `${lost} did not come back to this page.` : '',
  ].filter(Boolean).join(' ');
}
