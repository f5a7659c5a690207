// A TypeScript consumer of the built package, checked by `tsc --noEmit -p tests/types` (never
// run). It imports `task-projection/rules` by name (the stateless functions' module), uses every export with correctly typed arguments,
// pins each result type to docs/js-api.md, and proves wrong usages are rejected
// (`@ts-expect-error` fails the check when the line below it is *not* an error).
import init, {
  canReplaceRevision,
  compareRevisions,
  currentTurnId,
  effectiveTaskPendingAction,
  findPendingClarification,
  hasPendingPermission,
  initSync,
  isNewerStatusSummary,
  mergeFetchedStatusSummary,
  mergePendingProjection,
  normalizeEndPolicy,
  normalizeStartPolicy,
  pendingClarificationBundle,
  resolveTaskSessionId,
  selectionOutcome,
  sessionPendingAction,
  taskPendingAction,
  visibleTranscriptMessages,
  visibleTurnHistory,
} from 'task-projection/rules';
import type { PendingAction } from 'task-projection/rules';
import { ProjectionStore } from 'task-projection';

// --- helpers: exact type equality -----------------------------------------------------------------
type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
function exact<A, B>(_proof: Equal<A, B>): void {}

// --- the caller's own wire objects (extra fields must survive in the result types) ----------------
interface ChatMessage {
  id: string;
  session_id: string;
  task_id: string;
  turn_id?: string | null;
  author_type: 'agent' | 'user';
  type: string;
  content: string;
  metadata?: { pending_id?: string; question_total?: number; status?: string } | null;
  created_at: string;
}
interface Turn {
  id: string;
  session_id: string;
  task_id: string;
  started_at: string;
  created_at: string;
  updated_at: string;
  completed_at?: string | null;
  prompt: string;
}
interface Session {
  id: string;
  task_id: string;
  state: 'RUNNING' | 'WAITING_FOR_INPUT' | 'COMPLETED';
  started_at: string;
  updated_at: string;
  is_primary?: boolean;
  pending_action: PendingAction | null;
  pending_action_revision?: { epoch: string; sequence: number };
}
interface Summary {
  revision: number;
  updated_at: string;
  pending_action?: PendingAction;
  queued_prompt_count: number;
}

declare const messages: ChatMessage[];
declare const turns: Turn[];
declare const sessions: Session[];
declare const summary: Summary;
const task = { id: 'task-1', status_summary: summary, task_pending_action: null };

// --- init: a no-op on the node entry, fetches the .wasm on the default entry ---------------------
const wasmExports = await init();
exact<typeof wasmExports.memory, WebAssembly.Memory>(true);
initSync({ module: new Uint8Array() });
// (init's and initSync's parameter types are wasm-bindgen's: `WebAssembly.Module` is an empty
// interface in lib.dom, so they accept almost any value; nothing to prove there.)

// --- §2 current turn --------------------------------------------------------------------------------
const turnId = currentTurnId(turns, 'RUNNING');
exact<typeof turnId, string | null | undefined>(true);
currentTurnId(undefined);
currentTurnId(null, null);
// @ts-expect-error sessionState is a state string
currentTurnId(turns, 5);
// @ts-expect-error turns is an array
currentTurnId('turn-1');

const history = visibleTurnHistory(turns);
exact<typeof history, Turn[]>(true);
history[0]?.prompt.toUpperCase(); // the caller's own objects, own fields typed
// @ts-expect-error turns must be turn objects
visibleTurnHistory([1, 2, 3]);

// --- §3 discovery ----------------------------------------------------------------------------------
const scope = { currentTurnId: turnId, pendingAction: sessions[0]?.pending_action ?? null };
const request = findPendingClarification(messages, scope);
exact<typeof request, ChatMessage | null>(true);
request?.content.trim();
findPendingClarification(messages); // legacy scan
findPendingClarification(messages, {}); // explicit empty scope
findPendingClarification(messages, null);
// @ts-expect-error messages is an array
findPendingClarification(42);
// @ts-expect-error pendingAction is "clarification" | "permission" | null
findPendingClarification(messages, { pendingAction: 'question' });
// @ts-expect-error the scope uses camelCase keys
findPendingClarification(messages, { current_turn_id: 'turn-1' });

const bundle = pendingClarificationBundle(messages, scope);
exact<typeof bundle, ChatMessage[]>(true);
// @ts-expect-error not nullable: the bundle is always an array
const noBundle: null = pendingClarificationBundle(messages);

const transcript = visibleTranscriptMessages(messages, scope);
exact<typeof transcript, ChatMessage[]>(true);

const blocked = hasPendingPermission(messages);
exact<typeof blocked, boolean>(true);
// @ts-expect-error boolean, not a string
const blockedText: string = hasPendingPermission(messages);

// --- §4 pending action ----------------------------------------------------------------------------
const sessionAction = sessionPendingAction({ session: sessions[0], turns, messages });
exact<typeof sessionAction, PendingAction | null>(true);
exact<PendingAction, 'clarification' | 'permission'>(true);
sessionPendingAction({ session: { id: 'sess-1', state: 'RUNNING' }, turns: undefined, messages });
sessionPendingAction({ turns, messages }); // session absent: state unknown

const taskAction = taskPendingAction(sessions);
exact<typeof taskAction, PendingAction | null>(true);
// @ts-expect-error may be null: narrow first
const mustAct: PendingAction = taskPendingAction(sessions);

const effective = effectiveTaskPendingAction(task);
exact<typeof effective, PendingAction | null>(true);
// @ts-expect-error task_pending_action is a PendingAction or null
effectiveTaskPendingAction({ task_pending_action: 'blocked' });

// --- §5 revisions ------------------------------------------------------------------------------------
const order = compareRevisions({ epoch: '10', sequence: 1 }, { epoch: '9', sequence: 5 });
exact<typeof order, -1 | 0 | 1>(true);
// @ts-expect-error the result is -1 | 0 | 1
const two: 2 = compareRevisions({ epoch: '1', sequence: 1 }, { epoch: '1', sequence: 2 });
// @ts-expect-error epochs are decimal strings of any length, never numbers
compareRevisions({ epoch: 7, sequence: 1 }, { epoch: '7', sequence: 1 });

const replace = canReplaceRevision(sessions[0]?.pending_action_revision, { epoch: '8', sequence: 1 });
exact<typeof replace, boolean>(true);
canReplaceRevision(null, undefined);

const merged = mergePendingProjection(
  { pending_action: null, pending_action_revision: { epoch: '7', sequence: 1 } },
  { pending_action: 'clarification', pending_action_revision: { epoch: '7', sequence: 2 } },
);
const mergedAction: PendingAction | null | undefined = merged.pending_action;
mergePendingProjection(sessions[0], {}); // a session is a projection
// @ts-expect-error pending_action is a PendingAction or null
mergePendingProjection(null, { pending_action: 'blocked' });

// --- §6 owner resolution ------------------------------------------------------------------------------
const owner = resolveTaskSessionId({ task, sessions, preferredSessionId: 'sess-main' });
exact<typeof owner, string>(true);
resolveTaskSessionId({ task, sessions });
// @ts-expect-error sessions is required
resolveTaskSessionId({ task });

const outcome = selectionOutcome({ taskAtStart: task, taskNow: task, sessions, loadFailed: false });
if (outcome.kind === 'session') {
  const id: string = outcome.sessionId;
  void id;
} else {
  const kind: 'task_only' | 'inert' = outcome.kind;
  void kind;
}
// @ts-expect-error sessionId exists only once narrowed to kind "session"
void outcome.sessionId;
selectionOutcome({ taskAtStart: task, taskNow: null });
// @ts-expect-error taskAtStart is required
selectionOutcome({ taskNow: task });

// --- §7 summaries --------------------------------------------------------------------------------------
const newer = isNewerStatusSummary({ revision: 5, updated_at: '' }, summary);
exact<typeof newer, boolean>(true);
isNewerStatusSummary(summary, null);
// @ts-expect-error a summary revision is a number
isNewerStatusSummary({ revision: '5' }, summary);

const kept = mergeFetchedStatusSummary({
  held: summary,
  taskPresentAtFetchStart: true,
  fetchStartRevision: 4,
  response: { id: 'task-1', status_summary: summary, status_summary_invalidated: false },
});
exact<typeof kept, Summary | null>(true);
kept?.queued_prompt_count.toFixed(); // the caller's own summary type survives
// @ts-expect-error taskPresentAtFetchStart is required
mergeFetchedStatusSummary({ held: summary, response: {} });

// --- §10 policies --------------------------------------------------------------------------------------
const start = normalizeStartPolicy(' new ');
exact<typeof start, 'reuse' | 'new'>(true);
normalizeStartPolicy(undefined);
normalizeStartPolicy({ any: 'value' });
// @ts-expect-error may be "reuse": narrow before assigning to "new"
const alwaysNew: 'new' = normalizeStartPolicy('new');
if (start === 'new') {
  const isNew: 'new' = start;
  void isNew;
}
const end = normalizeEndPolicy(' park ');
exact<typeof end, 'complete' | 'park'>(true);
// @ts-expect-error may be "complete"
const alwaysPark: 'park' = normalizeEndPolicy('park');

// --- errors --------------------------------------------------------------------------------------------
try {
  compareRevisions({ epoch: 'abc', sequence: 1 }, { epoch: '1', sequence: 1 });
} catch (err) {
  if (err instanceof Error && 'code' in err) {
    const code: unknown = err.code;
    void code;
  }
}

void [bundle, transcript, blocked, blockedText, noBundle, mustAct, two, mergedAction, owner, newer, kept, alwaysNew, alwaysPark, effective, sessionAction, replace, order, wasmExports, history, request];
export {};

// --- the two modules ----------------------------------------------------------------------------
// The store's module carries no stateless function, and the rules' module no store.
// @ts-expect-error currentTurnId lives in task-projection/rules
import { currentTurnId as notInStore } from 'task-projection';
// @ts-expect-error ProjectionStore lives in task-projection
import { ProjectionStore as notInRules } from 'task-projection/rules';
void notInStore;
void notInRules;
// Their wire types are one shape: a value of one module's type is accepted by the other's.
const rulesAction: PendingAction | null = taskPendingAction([]);
const storeAction: ReturnType<ProjectionStore['taskPendingAction']> = rulesAction;
void storeAction;
// The loader loads the rules' module with the same backends.
import { loadTaskProjectionRules } from 'task-projection/loader';
export async function viaLoader(): Promise<void> {
  const loaded = await loadTaskProjectionRules({ backends: ['wasm', 'js'] });
  exact<PendingAction | null, ReturnType<typeof loaded.taskPendingAction>>(true);
  exact<'wasm' | 'mvp' | 'js', typeof loaded.backend>(true);
  // @ts-expect-error the rules' module has no store
  void loaded.ProjectionStore;
}
