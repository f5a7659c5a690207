// The inspector (/inspect/): a trace (docs/trace-format.md) opened from a file or pasted, or
// streamed live from a demo page that records its store (`/?record`: the devtools panel's recording
// answers on a BroadcastChannel). It shows the timeline of the store's inputs, the answers recorded after each
// step, and `explain` / `explainOwner` of a store replayed up to the selected step (each trace line
// applied to a fresh store through the package's public methods, as js/replay.js does), beside
// `replayTrace`'s verdict for every step. It decides nothing: the answers are the trace's, the
// explanations and the verdict the package's, worded as the devtools panel words them.
import init, { ProjectionStore, type OwnerExplanation, type Reason, type SessionExplanation } from 'task-projection';
import { replayTrace, type TraceReplay } from 'task-projection/trace';
import { CHANNEL, type TraceMessage } from './channel';
import { byId, h } from './dom';
import { OWNER_WHY, QUESTION_WHY, REQUEST_STANDING, TURN_STANDING, TURN_WHY, words } from '/pkg/devtools-words.js';
import { isRecord } from './wire';

type Answers = Record<string, unknown>;
interface StepLine {
  step: number | string;
  us: number | string;
  call: string;
  args: unknown[];
  reason?: string;
  ticket?: string;
  token?: unknown;
  reload?: unknown;
  navigation?: unknown;
  answers: { sessions?: Record<string, Answers>; tasks?: Record<string, Answers> };
}
interface Trace {
  source: string;
  header: Record<string, unknown>;
  steps: StepLine[];
  replay: TraceReplay;
}

/** A store with the trace's first `at + 1` steps applied (the tickets `beginSelection` gave, by
 * the recorded ones; the refused steps' errors). */
interface Cursor { store: ProjectionStore; at: number; tickets: Map<string, string>; errors: Map<number, string> }

const CALLS = new Set([
  'applySessionList', 'applyTurnList', 'applyMessagePage', 'beginTaskFetch', 'applyTaskSnapshot',
  'applyMessageEvent', 'applyMessageEvents', 'applyTurnEvent', 'applySessionEvent',
  'applyStatusSummaryEvent', 'applyTaskUpdated', 'removeTask', 'applyFrame', 'beginSelection',
  'setActiveTask', 'settleSelection',
]);

let trace: Trace | null = null;
let selected = -1;
let sessionChoice: string | null = null;
let taskChoice: string | null = null;
/** The step whose changed ids the pickers last took. */
let picked = -1;
/** The step the timeline last scrolled to. */
let scrolledTo = -1;
let cursor: Cursor | null = null;
let channel: BroadcastChannel | null = null;
let liveSource: string | null = null;

// ---- loading --------------------------------------------------------------------------------

function parse(text: string, source: string): Trace {
  // The package checks the trace first (a typed error names the bad line), and replays it.
  const replay = replayTrace(text);
  const lines = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown);
  const [header, ...steps] = lines;
  return { source, header: isRecord(header) ? header : {}, steps: steps as StepLine[], replay };
}

function load(text: string, source: string, keep = false): void {
  const error = byId('inspect-error');
  let next: Trace;
  try {
    next = parse(text, source);
  } catch (e) {
    error.hidden = false;
    const code = isRecord(e) && typeof e['code'] === 'string' ? `${e['code']}: ` : '';
    error.textContent = `Could not open ${source}: ${code}${e instanceof Error ? e.message : String(e)}`;
    return;
  }
  error.hidden = true;
  const last = trace ? trace.steps.length - 1 : -1;
  const following = !keep || selected === last;
  trace = next;
  cursor?.store.free();
  cursor = null;
  scrolledTo = -1;
  if (following || selected >= next.steps.length) selected = next.steps.length - 1;
  render();
}

function storeAt(k: number): Cursor {
  if (!trace) throw new Error('no trace');
  if (!cursor || cursor.at > k) {
    cursor?.store.free();
    cursor = { store: new ProjectionStore(), at: -1, tickets: new Map(), errors: new Map() };
  }
  const c = cursor;
  while (c.at < k) {
    const i = ++c.at;
    const step = trace.steps[i];
    if (!step || !CALLS.has(step.call)) continue;
    const args = step.args.slice();
    if (step.call === 'settleSelection' && typeof args[0] === 'string') args[0] = c.tickets.get(args[0]) ?? args[0];
    try {
      const method = (c.store as unknown as Record<string, (...a: unknown[]) => unknown>)[step.call];
      const result = method?.apply(c.store, args);
      if (step.call === 'beginSelection' && typeof step.ticket === 'string' && isRecord(result) && typeof result['ticket'] === 'string') {
        c.tickets.set(step.ticket, result['ticket']);
      }
    } catch (e) {
      c.errors.set(i, isRecord(e) && typeof e['code'] === 'string' ? `${e['code']}: ${String(e['message'])}` : String(e));
    }
  }
  return c;
}

/** The answers recorded up to step `k` (each id's last written), and those written at `k`. */
function answersAt(k: number): { sessions: Map<string, Answers>; tasks: Map<string, Answers>; changed: Set<string> } {
  const sessions = new Map<string, Answers>();
  const tasks = new Map<string, Answers>();
  const changed = new Set<string>();
  for (let i = 0; i <= k; i++) {
    const a = trace?.steps[i]?.answers ?? {};
    for (const [id, v] of Object.entries(a.sessions ?? {})) {
      sessions.set(id, v);
      if (i === k) changed.add(`s:${id}`);
    }
    for (const [id, v] of Object.entries(a.tasks ?? {})) {
      tasks.set(id, v);
      if (i === k) changed.add(`t:${id}`);
    }
  }
  return { sessions, tasks, changed };
}

// ---- words ----------------------------------------------------------------------------------

/** The ids a step names (display only): its string arguments and the rows' task/session ids. */
function idsOf(step: StepLine): string {
  const ids = new Set<string>();
  const parts: string[] = [];
  for (const a of step.args) {
    if (typeof a === 'string') ids.add(a);
    else if (Array.isArray(a)) parts.push(`${a.length} row${a.length === 1 ? '' : 's'}`);
    else if (isRecord(a)) {
      for (const k of ['task_id', 'session_id', 'id']) if (typeof a[k] === 'string') ids.add(a[k] as string);
      if (isRecord(a['payload']) && typeof a['payload']['epoch'] === 'string') parts.push(`epoch ${a['payload']['epoch']}`);
    }
  }
  return [...ids, ...parts].join(' · ');
}

const ms = (us: number | string, from: number) => `+${((Number(us) - from) / 1000).toFixed(1)} ms`;

function value(v: unknown): string {
  if (v === undefined) return 'unknown';
  if (v === null) return 'none';
  if (isRecord(v) && typeof v['pending_id'] === 'string') {
    const n = Array.isArray(v['message_ids']) ? v['message_ids'].length : 0;
    return `${v['pending_id']} (${n} question${n === 1 ? '' : 's'})`;
  }
  if (isRecord(v) && 'revision' in v) return `revision ${String(v['revision'])}`;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const SESSION_FIELDS = ['pendingAction', 'currentTurn', 'clarification', 'permission'];
const TASK_FIELDS = ['pendingAction', 'pendingOwner', 'summary'];

function answerCard(kind: 'session' | 'task', id: string, a: Answers, changed: boolean): HTMLElement {
  const fields = kind === 'session' ? SESSION_FIELDS : TASK_FIELDS;
  return h('section', {
    class: `answer-card${changed ? ' changed' : ''}`, 'data-testid': `answers-${kind}`, 'data-id': id,
    'data-answers': JSON.stringify(a), 'data-changed': changed ? 'true' : 'false',
  },
  h('h4', {}, h('code', {}, id), changed ? h('span', { class: 'chip' }, 'changed here') : null),
  h('dl', {}, fields.flatMap((f) => [
    h('dt', {}, f),
    h('dd', {}, value(a[f]), ' ', h('code', { class: 'why' }, String(a[`${f}Why`] ?? ''))),
  ])));
}

// ---- explain --------------------------------------------------------------------------------

const code = (r: Reason | string) => h('code', { class: 'why' }, r);

function sessionExplain(e: SessionExplanation): HTMLElement[] {
  const out: (HTMLElement | null)[] = [
    h('p', { 'data-testid': 'explain-current-turn', 'data-reason': e.current_turn.reason },
      h('strong', {}, 'Current turn: '), e.current_turn.known ? (e.current_turn.id ?? 'none') : 'unknown', ' — ',
      words(TURN_WHY, e.current_turn.reason), ' ', code(e.current_turn.reason)),
    h('p', { 'data-testid': 'explain-pending', 'data-reason': e.pending_action.reason },
      h('strong', {}, 'Pending action: '), e.pending_action.value ?? 'none', ' ', code(e.pending_action.reason)),
    h('p', { 'data-testid': 'explain-question', 'data-reason': e.clarification.reason },
      h('strong', {}, 'Question: '), e.clarification.pending_id ?? 'none', ' — ', words(QUESTION_WHY, e.clarification.reason), ' ',
      code(e.clarification.reason)),
    h('p', { 'data-testid': 'explain-permission', 'data-reason': e.permission.reason },
      h('strong', {}, 'Permission: '), e.permission.pending ? 'pending' : 'none', ' ', code(e.permission.reason)),
    e.turns.length ? h('ul', { class: 'why-list' }, e.turns.map((t) =>
      h('li', { 'data-standing': t.standing }, h('code', {}, t.id), `: ${TURN_STANDING[t.standing]}`))) : null,
    e.requests.length ? h('ul', { class: 'why-list' }, e.requests.map((r) =>
      h('li', { 'data-standing': r.standing }, h('code', {}, r.pending_id ?? r.id), `: ${REQUEST_STANDING[r.standing]}`))) : null,
    h('p', {}, h('strong', {}, 'Rejected inputs: '), String(e.rejected.length)),
    h('details', {}, h('summary', {}, 'explain() as JSON'), h('pre', { 'data-testid': 'explain-json' }, JSON.stringify(e, null, 1))),
  ];
  return out.filter((x): x is HTMLElement => x !== null);
}

function ownerExplain(e: OwnerExplanation): HTMLElement[] {
  return [
    h('p', { 'data-testid': 'explain-owner', 'data-reason': e.owner.reason },
      h('strong', {}, 'Clicking the task opens: '), e.owner.session_id ?? 'the task itself', ' — ', words(OWNER_WHY, e.owner.reason), ' ',
      code(e.owner.reason)),
    h('p', {}, h('strong', {}, 'Pending action: '), e.pending_action.value ?? 'none', ' ', code(e.pending_action.reason)),
    h('details', {}, h('summary', {}, 'explainOwner() as JSON'), h('pre', { 'data-testid': 'explain-owner-json' }, JSON.stringify(e, null, 1))),
  ];
}

function picker(label: string, testid: string, ids: string[], chosen: string | null, pick: (id: string) => void): HTMLElement {
  return h('label', { class: 'picker' }, `${label} `,
    h('select', { 'data-testid': testid, onchange: (ev: Event) => pick((ev.target as HTMLSelectElement).value) },
      ids.map((id) => {
        const o = h('option', { value: id }, id);
        o.selected = id === chosen;
        return o;
      })));
}

// ---- rendering ------------------------------------------------------------------------------

function select(i: number, scroll = false): void {
  selected = i;
  render();
  if (scroll) byId('step-detail').scrollIntoView({ block: 'start' });
}

function render(): void {
  const summary = byId('trace-summary');
  const timeline = byId('timeline');
  const detail = byId('step-detail');
  if (!trace) {
    summary.textContent = 'No trace open.';
    timeline.replaceChildren();
    detail.replaceChildren(h('p', { class: 'muted' }, 'Open a trace file, paste one, or attach to a demo page that records.'));
    return;
  }
  const t = trace;
  const complete = t.replay.complete;
  const differing = t.replay.steps.filter((s) => !s.same).length;
  summary.dataset['steps'] = String(t.steps.length);
  summary.dataset['complete'] = String(complete);
  summary.dataset['same'] = String(t.replay.same);
  summary.replaceChildren(
    h('strong', {}, t.source), ` · ${t.steps.length} step${t.steps.length === 1 ? '' : 's'} · engine ${String(t.header['engine'])} · `,
    complete ? 'complete' : `incomplete (${t.header['fresh'] === true ? '' : 'not fresh, '}${String(t.header['dropped'])} dropped)`,
    ' · ', t.replay.same ? 'this engine gives the recorded answers at every step' : `this engine differs at ${differing} step${differing === 1 ? '' : 's'}`,
  );

  const from = Number(t.steps[0]?.us ?? 0);
  timeline.replaceChildren(...t.steps.map((s, i) => {
    const same = t.replay.steps[i]?.same ?? false;
    return h('li', {},
      h('button', {
        type: 'button', class: 'step-row', 'data-testid': 'step-row', 'data-index': i, 'data-step': String(s.step), 'data-call': s.call,
        'data-reason': s.reason ?? '', 'aria-current': i === selected ? 'true' : false, onclick: () => select(i, true),
      },
      h('span', { class: 'step-n' }, `#${String(s.step)}`),
      h('span', { class: 'step-t' }, ms(s.us, from)),
      h('span', { class: 'step-call' }, s.call),
      h('span', { class: 'step-ids' }, idsOf(s)),
      h('span', { class: 'step-reason' }, s.reason ?? ''),
      h('span', { class: `step-same${same ? '' : ' bad'}`, title: same ? 'replayed: same answers' : 'replayed: different answers' }, same ? '✓' : '≠')));
  }));
  // The selected row in view inside the timeline's box (the page itself does not move).
  const row = timeline.querySelector('[aria-current="true"]');
  const box = timeline.parentElement;
  if (row && box && scrolledTo !== selected) {
    scrolledTo = selected;
    const r = row.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    if (r.top < b.top) box.scrollTop += r.top - b.top;
    else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
  }

  const step = t.steps[selected];
  if (!step) {
    detail.replaceChildren(h('p', { class: 'muted' }, 'The trace has no step.'));
    return;
  }
  const { sessions, tasks, changed } = answersAt(selected);
  const c = storeAt(selected);
  const replayed = t.replay.steps[selected];
  const sessionIds = [...sessions.keys()];
  const taskIds = [...tasks.keys()];
  const changedSession = sessionIds.find((id) => changed.has(`s:${id}`));
  const changedTask = taskIds.find((id) => changed.has(`t:${id}`));
  // A newly selected step explains the ids it changed; a choice made in the pickers stays.
  if (picked !== selected) {
    picked = selected;
    sessionChoice = changedSession ?? sessionChoice;
    taskChoice = changedTask ?? taskChoice;
  }
  if (!sessionChoice || !sessions.has(sessionChoice)) sessionChoice = sessionIds[0] ?? null;
  if (!taskChoice || !tasks.has(taskChoice)) taskChoice = taskIds[0] ?? null;
  const result = step.call === 'beginTaskFetch' ? { token: step.token } : step.call === 'beginSelection' ? { ticket: step.ticket, reload: step.reload }
    : step.call === 'settleSelection' ? { navigation: step.navigation } : null;

  detail.replaceChildren(
    h('div', { class: 'detail-head' },
      h('h2', { 'data-testid': 'step-title', 'data-step': String(step.step) }, `Step ${String(step.step)}: ${step.call}`),
      h('span', { class: 'nav' },
        h('button', { type: 'button', class: 'toggle', 'data-testid': 'prev-step', disabled: selected <= 0, onclick: () => select(selected - 1) }, '‹ Prev'),
        h('button', { type: 'button', class: 'toggle', 'data-testid': 'next-step', disabled: selected >= t.steps.length - 1, onclick: () => select(selected + 1) }, 'Next ›'))),
    h('p', {}, h('strong', {}, 'Reason: '), step.reason ? code(step.reason) : 'none (this call has no reason)',
      replayed && !replayed.same ? h('span', { class: 'bad' }, ` — replayed: ${replayed.reason ?? 'none'}${replayed.error ? `, refused (${replayed.error})` : ''}`) : null,
      c.errors.has(selected) ? h('span', { class: 'bad' }, ` — refused on replay: ${c.errors.get(selected) ?? ''}`) : null),
    h('details', { class: 'args' }, h('summary', {}, 'Arguments', result ? ' and result' : ''),
      h('pre', { 'data-testid': 'step-args' }, JSON.stringify(step.args, null, 1)),
      result ? h('pre', {}, JSON.stringify(result, null, 1)) : null),
    h('h3', {}, 'Answers after this step'),
    h('p', { class: 'muted small' }, 'As recorded: each id’s last answers written up to this step.'),
    h('div', { class: 'answers' },
      sessionIds.map((id) => answerCard('session', id, sessions.get(id) ?? {}, changed.has(`s:${id}`))),
      taskIds.map((id) => answerCard('task', id, tasks.get(id) ?? {}, changed.has(`t:${id}`)))),
    h('h3', {}, 'Explain at this step'),
    h('p', { class: 'muted small' }, `A store replayed up to step ${String(step.step)}, asked now.`),
    h('div', { class: 'explain', 'data-testid': 'explain-session-panel', 'data-id': sessionChoice ?? '' },
      sessionIds.length ? picker('Session', 'explain-session', sessionIds, sessionChoice, (id) => { sessionChoice = id; render(); }) : null,
      ...(sessionChoice ? sessionExplain(c.store.explain(sessionChoice)) : [h('p', { class: 'muted' }, 'No session yet.')])),
    h('div', { class: 'explain', 'data-testid': 'explain-task-panel', 'data-id': taskChoice ?? '' },
      taskIds.length ? picker('Task', 'explain-task', taskIds, taskChoice, (id) => { taskChoice = id; render(); }) : null,
      ...(taskChoice ? ownerExplain(c.store.explainOwner(taskChoice)) : [h('p', { class: 'muted' }, 'No task yet.')])),
  );
}

// ---- sources --------------------------------------------------------------------------------

function attach(): void {
  const status = byId('live-status');
  if (typeof BroadcastChannel !== 'function') {
    status.textContent = 'This browser has no BroadcastChannel.';
    return;
  }
  if (!channel) {
    channel = new BroadcastChannel(CHANNEL);
    channel.onmessage = (ev: MessageEvent<TraceMessage>) => {
      const m = ev.data;
      if (m?.type !== 'trace' || typeof m.text !== 'string') return;
      const same = liveSource === m.source;
      liveSource = m.source;
      status.dataset['state'] = 'attached';
      status.textContent = `Attached to the demo page ${m.source}: updated ${new Date().toLocaleTimeString()}.`;
      load(m.text, `live: ${m.source}`, same);
    };
  }
  status.dataset['state'] = 'waiting';
  status.replaceChildren('Waiting for a demo page that records… (open ', h('a', { href: '/?record', target: '_blank' }, 'the demo with ?record'), ')');
  channel.postMessage({ type: 'attach' } satisfies TraceMessage);
}

async function main(): Promise<void> {
  try {
    await init();
  } catch (e) {
    const error = byId('inspect-error');
    error.hidden = false;
    error.textContent = `Could not load the engine (/pkg/): ${e instanceof Error ? e.message : String(e)}`;
    document.body.dataset['ready'] = 'error';
    return;
  }
  byId<HTMLInputElement>('trace-file').addEventListener('change', (ev) => {
    const file = (ev.target as HTMLInputElement).files?.[0];
    if (file) void file.text().then((text) => load(text, file.name));
  });
  byId('trace-paste-open').addEventListener('click', () => load(byId<HTMLTextAreaElement>('trace-paste').value, 'pasted trace'));
  byId('attach').addEventListener('click', attach);
  render();
  document.body.dataset['ready'] = 'true';
  if (location.hash === '#live') attach();
}

void main();
