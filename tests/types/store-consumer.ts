// A TypeScript consumer of the ProjectionStore class and boundedLoad, checked by
// `tsc --noEmit -p tests/types` (never run). It uses every method with the app's own wire types,
// pins result types, and proves wrong usages are rejected (`@ts-expect-error` fails the check when
// the line below it is *not* an error).
import { ProjectionStore, boundedLoad } from 'task-projection';
// The recorder of startRecording() and replayTrace: opt-in, one import.
import { replayTrace } from 'task-projection/trace';
import type { TraceReplay, TraceReplayStep } from 'task-projection/trace';
import type {
  FrameOutcome,
  OwnerExplanation,
  Reason,
  PendingAction,
  PendingClarification,
  SelectionLoad,
  SelectionOutcome,
  SessionExplanation,
  TurnStanding,
  StoreChanges,
  TaskProjectionError,
  WireMessageEvent,
  WireSession,
  WireStatusSummary,
} from 'task-projection';

// --- helpers: exact type equality -----------------------------------------------------------------
type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
function exact<A, B>(_proof: Equal<A, B>): void {}

// --- the app's own wire types (as its API client declares them) -----------------------------------
interface AppSession {
  id: string;
  task_id: string;
  state: 'RUNNING' | 'WAITING_FOR_INPUT' | 'COMPLETED';
  started_at: string;
  updated_at: string;
  is_primary: boolean;
  pending_action: PendingAction | null;
  pending_action_revision?: { epoch: string; sequence: number };
  agent_profile_id: string;
}
interface AppTurn {
  id: string;
  session_id: string;
  task_id: string;
  started_at: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  metadata: { lifecycle_only?: boolean };
}
interface AppMessage {
  id: string;
  session_id: string;
  task_id: string;
  turn_id: string | null;
  author_type: 'agent' | 'user';
  type: string;
  content: string;
  metadata: { pending_id?: string; question_total?: number; status?: string };
  created_at: string;
  updated_at: string;
}
interface AppSummary {
  revision: number;
  updated_at: string;
  pending_action?: PendingAction;
  primary_session: { id: string } | null;
  queued_prompt_count: number;
}
interface AppTask {
  id: string;
  title: string;
  status_summary?: AppSummary | null;
  status_summary_invalidated?: boolean;
  task_pending_action: PendingAction | null;
}

declare const sessions: AppSession[];
declare const turns: AppTurn[];
declare const messages: AppMessage[];
declare const tasks: readonly AppTask[];
declare const summary: AppSummary;
declare function fetchSessions(taskId: string): Promise<AppSession[]>;

const store = new ProjectionStore();
new ProjectionStore({});

// --- REST and WebSocket input ------------------------------------------------------------------------
exact<void, ReturnType<typeof store.applySessionList>>(true);
store.applySessionList('task-1', sessions);
store.applyTurnList('sess-1', turns);
store.applyMessagePage('sess-1', messages);
const added: WireMessageEvent = {
  message_id: 'm1',
  session_id: 'sess-1',
  task_id: 'task-1',
  turn_id: 't1',
  type: 'clarification_request',
  metadata: { pending_id: 'p1', question_total: 1, status: 'pending' },
  created_at: '2026-11-29T12:00:00.000000000Z',
  updated_at: '2026-11-29T12:00:00.000000000Z',
  pending_action: 'clarification',
  pending_action_revision: { epoch: '7', sequence: 2 },
};
store.applyMessageEvent('added', added);
store.applyMessageEvent('updated', { ...added, pending_action: null });
store.applyMessageEvent('deleted', { message_id: 'm1', session_id: 'sess-1' }); // projection keys omitted
store.applyMessageEvents('added', [added, added]);
store.applyTurnEvent({ ...turns[0]!, session_id: 'sess-1' });
store.applySessionEvent({ id: 'sess-1', task_id: 'task-1', state: 'COMPLETED', pending_action: null, pending_action_revision: { epoch: '7', sequence: 3 } });
store.applySessionEvent({ session_id: 'sess-1', state: 'RUNNING' });
store.applyStatusSummaryEvent({ task_id: 'task-1', workspace_id: 'ws-1', status_summary: summary });
store.applyStatusSummaryEvent({ task_id: 'task-1', status_summary: null });
store.applyTaskUpdated({ id: 'task-1', status_summary: summary, task_pending_action: null });
store.applyTaskUpdated({ id: 'task-1' }); // no status_summary key: the held summary stays
store.removeTask('task-1');
const token = store.beginTaskFetch();
exact<number, typeof token>(true);
store.applyTaskSnapshot(token, tasks);

// --- queries -------------------------------------------------------------------------------------------
const action = store.sessionPendingAction('sess-1');
exact<PendingAction | null | undefined, typeof action>(true);
const current = store.currentTurnId('sess-1');
exact<string | null | undefined, typeof current>(true);
const bundle = store.pendingClarification('sess-1');
exact<PendingClarification | null | undefined, typeof bundle>(true);
if (bundle) {
  exact<string | null, typeof bundle.pending_id>(true);
  exact<string[], typeof bundle.message_ids>(true);
}
const hidden = store.hiddenMessageIds('sess-1');
exact<readonly string[] | undefined, typeof hidden>(true);
// undefined: not known yet (SPEC §11)
const visible = messages.filter((m) => !(hidden ?? []).includes(m.id));
exact<AppMessage[], typeof visible>(true);
exact<boolean | undefined, ReturnType<typeof store.hasPendingPermission>>(true);
exact<PendingAction | null | undefined, ReturnType<typeof store.taskPendingAction>>(true);
const held = store.taskStatusSummary('task-1');
exact<WireStatusSummary | null | undefined, typeof held>(true);
const owner = store.pendingOwner('task-1');
exact<string | undefined, typeof owner>(true);
store.pendingOwner('task-1', 'sess-1');
store.pendingOwner('task-1', null);
exact<Reason, ReturnType<typeof store.lastReason>>(true);
exact<Reason, ReturnType<typeof store.lastApplyReason>>(true);
const why: Reason = store.lastReason();
if (why === 'older_revision_rejected') console.log('stale');
// @ts-expect-error not a reason code
if (why === 'no_such_reason') console.log('never');

// --- explanations ----------------------------------------------------------------------------------
const explained = store.explain('sess-1');
exact<SessionExplanation, typeof explained>(true);
exact<Reason, typeof explained.current_turn.reason>(true);
const standing: TurnStanding | undefined = explained.turns[0]?.standing;
if (standing === 'lifecycle_skipped') console.log('a lifecycle turn');
// @ts-expect-error not a standing
if (standing === 'skipped') console.log('never');
for (const r of explained.rejected) console.log(r.input, r.reason, r.detail, r.revision, r.held);
const ownerWhy = store.explainOwner('task-1', 'sess-1');
exact<OwnerExplanation, typeof ownerWhy>(true);
exact<string | null, typeof ownerWhy.owner.session_id>(true);
// @ts-expect-error a session id is a string
store.explain(42);

// --- frames ------------------------------------------------------------------------------------------
declare const socketText: string;
const outcome = store.applyFrame(socketText);
exact<FrameOutcome, typeof outcome>(true);
exact<'all' | 'sessions' | null, typeof outcome.refetch>(true);
if (outcome.refetch === 'sessions' && outcome.taskId) store.applySessionList(outcome.taskId, sessions);
store.applyFrame({ type: 'server.hello', payload: { epoch: '3' } });
exact<number | null, typeof outcome.offset>(true);
exact<string | null | undefined, typeof outcome.stream>(true);
const resumed: Reason = 'resumed';
if (outcome.reason === resumed && outcome.refetch === null) console.log('resumed at', outcome.offset, 'of', outcome.stream);
store.applyFrame({ type: 'session.message.added', payload: {}, offset: 12 });
store.applyFrame({ type: 'task.stalled', payload: {}, offset: null });
// @ts-expect-error an offset is a number
store.applyFrame({ type: 'task.stalled', payload: {}, offset: '12' });
// @ts-expect-error a frame has a type
store.applyFrame({ payload: {} });

// --- selection --------------------------------------------------------------------------------------------
async function openTask(taskId: string, remembered: string | null): Promise<string | null> {
  store.setActiveTask(taskId);
  const { ticket, reload } = store.beginSelection(taskId, { preferredSessionId: remembered });
  exact<string, typeof ticket>(true);
  exact<boolean, typeof reload>(true);
  const load = reload ? fetchSessions(taskId) : Promise.resolve(sessions);
  const outcome = await boundedLoad(load, 5_000);
  exact<SelectionLoad, typeof outcome>(true);
  const settled = store.settleSelection(ticket, outcome);
  exact<SelectionOutcome, typeof settled>(true);
  switch (settled.kind) {
    case 'session':
      return settled.sessionId;
    case 'task_only':
      return null;
    case 'inert':
      return null;
  }
}
void openTask('task-1', null);
store.beginSelection('task-1');
store.beginSelection('task-1', null);
store.setActiveTask(null);
declare const ticket: string;
store.settleSelection(ticket, { sessions });
store.settleSelection(ticket, { error: new Error('HTTP 503') });
store.settleSelection(ticket, { error: 'timeout', timedOut: true });
store.settleSelection(ticket, { aborted: true });
exact<Promise<SelectionLoad>, ReturnType<typeof boundedLoad>>(true);

// --- notification, lifecycle, errors -----------------------------------------------------------------
const unsubscribe = store.subscribe((changes) => {
  exact<StoreChanges, typeof changes>(true);
  exact<string[], typeof changes.sessions>(true);
  exact<string[], typeof changes.tasks>(true);
});
exact<() => void, typeof unsubscribe>(true);
unsubscribe();
exact<number, ReturnType<typeof store.version>>(true);
exact<string, ReturnType<typeof store.digest>>(true);
try {
  store.applyMessageEvent('added', added);
} catch (e) {
  const error = e as TaskProjectionError;
  exact<'invalid_type' | 'invalid_value' | 'invalid_revision' | 'malformed_epoch' | 'unreadable_value' | 'disposed' | 'not_initialized' | 'recording_unavailable' | 'development_only' | 'unsupported_version', typeof error.code>(true);
  exact<unknown, typeof error.cause>(true);
  exact<string, typeof error.field>(true);
}
// Snapshots (SPEC §12)
const snapshot = store.dehydrate({ tasks: ['task-1'] });
exact<1, typeof snapshot.version>(true);
exact<PendingAction | null | undefined, NonNullable<typeof snapshot.answers.sessions[string]>['sessionPendingAction']>(true);
const copy: ProjectionStore = ProjectionStore.hydrate(JSON.stringify(snapshot), { restored: true });
exact<boolean, ReturnType<typeof copy.restored>>(true);
exact<{ stream: string; offset: number } | null, ReturnType<typeof copy.streamPosition>>(true);
copy.applyStreamPosition({ stream: 'st-1', offset: 4 });
copy.free();
store.dispose();
store.free();

// --- wrong usages are rejected --------------------------------------------------------------------------
// @ts-expect-error an unknown event kind
store.applyMessageEvent('created', added);
// @ts-expect-error a message event needs its session_id
store.applyMessageEvent('added', { message_id: 'm1' });
// @ts-expect-error an unknown pending action
store.applyMessageEvent('added', { ...added, pending_action: 'approval' });
// @ts-expect-error a revision epoch is a decimal string, not a number
store.applyMessageEvent('added', { ...added, pending_action_revision: { epoch: 7, sequence: 1 } });
// @ts-expect-error the session list is an array
store.applySessionList('task-1', sessions[0]!);
// @ts-expect-error ids are strings
store.sessionPendingAction(7);
// @ts-expect-error the preferred session is an option object, not a positional string
store.beginSelection('task-1', 'sess-1');
// @ts-expect-error a settle outcome is { sessions } | { error } | { aborted: true }
store.settleSelection(ticket, { loaded: true });
// @ts-expect-error the token comes from beginTaskFetch()
store.applyTaskSnapshot('1', tasks);
// @ts-expect-error a task snapshot item needs its id
store.applyTaskSnapshot(token, [{ title: 'x' }]);
// @ts-expect-error boundedLoad takes a promise
void boundedLoad(sessions, 1000);
// @ts-expect-error boundedLoad needs a timeout
void boundedLoad(fetchSessions('task-1'));
// @ts-expect-error listeners receive { tasks, sessions }, not a version
store.subscribe((version: number) => version);
// @ts-expect-error queries return a nullable action
const notNull: PendingAction = store.sessionPendingAction('sess-1');
void notNull;
// @ts-expect-error hidden ids are read-only
store.hiddenMessageIds('sess-1').push('m9');

// --- recording ---------------------------------------------------------------------------------------
store.startRecording();
store.startRecording({ maxBytes: 64 * 1024 });
// @ts-expect-error maxBytes is a number
store.startRecording({ maxBytes: '64k' });
// @ts-expect-error no other option
store.startRecording({ bytes: 1024 });
const recorded = store.stopRecording();
exact<string | null, typeof recorded>(true);
if (recorded !== null) {
  const replayed = replayTrace(recorded);
  exact<TraceReplay, typeof replayed>(true);
  exact<boolean, typeof replayed.same>(true);
  const first: TraceReplayStep | undefined = replayed.steps[0];
  if (first && !first.same) console.log(first.call, first.reason, first.recordedReason, first.answers, first.recorded, first.error);
}
// @ts-expect-error a trace is text
replayTrace({ lines: [] });
// replayTrace is not the store module's: it comes with the recorder.
// @ts-expect-error no replayTrace in task-projection
import('task-projection').then((m) => m.replayTrace);
