// The scripted REST + WebSocket sequence every fixture app feeds a ProjectionStore (copied into
// each app by tests/packaging/prepare.mjs; edit it here). Typed against the package's
// declarations, so the strict `tsc --noEmit` of the Next app checks it too.
import type { ProjectionStore } from 'task-projection';

export const TASK_ID = 'task-42';
export const OWNER_SESSION = 'sess-owner';
export const OTHER_SESSION = 'sess-other';
const TURN_ID = 'turn-7';

const at = (second: number) => `2026-11-29T12:00:${String(second).padStart(2, '0')}.000000000Z`;

export const QUESTIONS: Record<string, string> = {
  'q-1': 'Which database should the migration target?',
  'q-2': 'May I drop the legacy audit table?',
};

function question(id: string, index: number, revision: number) {
  return {
    message_id: id,
    session_id: OWNER_SESSION,
    task_id: TASK_ID,
    turn_id: TURN_ID,
    author_type: 'agent',
    type: 'clarification_request',
    metadata: { pending_id: 'pending-1', question_id: id, question_index: index, question_total: 2, status: 'pending' },
    created_at: at(10 + index),
    updated_at: at(10 + index),
    content: QUESTIONS[id],
    pending_action: 'clarification' as const,
    pending_action_revision: { epoch: '9', sequence: revision },
  };
}

export interface Step {
  /** What arrived, as a log line. */
  label: string;
  /** Milliseconds after the previous step (the client apps wait; the server applies at once). */
  delay: number;
  apply(store: ProjectionStore): void;
}

export const SCRIPT: readonly Step[] = [
  {
    label: 'REST GET /tasks',
    delay: 0,
    apply(store) {
      const token = store.beginTaskFetch();
      store.applyTaskSnapshot(token, [{ id: TASK_ID, status_summary: { revision: 1, updated_at: at(0) } }]);
    },
  },
  {
    label: 'REST GET /tasks/task-42/sessions',
    delay: 40,
    apply(store) {
      store.applySessionList(TASK_ID, [
        { id: OTHER_SESSION, task_id: TASK_ID, state: 'IDLE', started_at: at(1), updated_at: at(2), completed_at: null, is_primary: true, pending_action: null, pending_action_revision: { epoch: '9', sequence: 1 } },
        { id: OWNER_SESSION, task_id: TASK_ID, state: 'RUNNING', started_at: at(3), updated_at: at(4), completed_at: null, is_primary: false, pending_action: null, pending_action_revision: { epoch: '9', sequence: 1 } },
      ]);
    },
  },
  {
    label: 'REST GET /sessions/sess-owner/turns + messages',
    delay: 40,
    apply(store) {
      store.applyTurnList(OWNER_SESSION, [
        { id: TURN_ID, session_id: OWNER_SESSION, task_id: TASK_ID, started_at: at(5), completed_at: null, created_at: at(5), updated_at: at(5), metadata: {} },
      ]);
      store.applyMessagePage(OWNER_SESSION, [
        { id: 'm-1', session_id: OWNER_SESSION, turn_id: TURN_ID, type: 'message', metadata: {}, created_at: at(6), updated_at: at(6) },
      ]);
    },
  },
  {
    label: 'WS session.message.added q-1 (1 of 2)',
    delay: 40,
    apply(store) {
      store.applyMessageEvent('added', question('q-1', 0, 2));
    },
  },
  {
    label: 'WS session.message.added q-1 again (duplicate delivery)',
    delay: 40,
    apply(store) {
      store.applyMessageEvent('added', question('q-1', 0, 2));
    },
  },
  {
    label: 'WS session.message.added q-2 (2 of 2)',
    delay: 40,
    apply(store) {
      store.applyMessageEvent('added', question('q-2', 1, 3));
    },
  },
  {
    label: 'WS task.status_summary.updated (revision 2: clarification)',
    delay: 40,
    apply(store) {
      store.applyStatusSummaryEvent({ task_id: TASK_ID, status_summary: { revision: 2, updated_at: at(12), pending_action: 'clarification' } });
    },
  },
  {
    label: 'WS task.status_summary.updated (stale revision 1: ignored)',
    delay: 40,
    apply(store) {
      store.applyStatusSummaryEvent({ task_id: TASK_ID, status_summary: { revision: 1, updated_at: at(0) } });
    },
  },
  {
    label: 'WS session.updated (stale, revision 9/1: ignored)',
    delay: 40,
    apply(store) {
      store.applySessionEvent({ id: OWNER_SESSION, task_id: TASK_ID, state: 'RUNNING', pending_action: null, pending_action_revision: { epoch: '9', sequence: 1 } });
    },
  },
];

/** What the page shows once every step has been applied. */
export interface Answer {
  /** `undefined`: not known yet (the store's answer). */
  pendingAction: string | null | undefined;
  pendingId: string | null;
  questions: string[];
  owner: string | undefined;
  taskPendingAction: string | null | undefined;
}

export function answer(store: ProjectionStore): Answer {
  const bundle = store.pendingClarification(OWNER_SESSION);
  return {
    pendingAction: store.sessionPendingAction(OWNER_SESSION),
    pendingId: bundle ? bundle.pending_id : null,
    questions: bundle ? bundle.message_ids.map((id) => QUESTIONS[id] ?? id) : [],
    owner: store.pendingOwner(TASK_ID),
    taskPendingAction: store.taskPendingAction(TASK_ID),
  };
}

/** The answer every fixture must produce (the tests assert this exact text in the pages). */
export const EXPECTED: Answer = {
  pendingAction: 'clarification',
  pendingId: 'pending-1',
  questions: [QUESTIONS['q-1'] as string, QUESTIONS['q-2'] as string],
  owner: OWNER_SESSION,
  taskPendingAction: 'clarification',
};

/** Runs the whole script at once (server rendering, route handlers, Node scripts). */
export function runScript(store: ProjectionStore): Answer {
  for (const step of SCRIPT) step.apply(store);
  return answer(store);
}

/**
 * `store.explain()` of the owner session, in one line: what the development build explains, or
 * the production build's error (`development_only`). Which one an app gets is its export
 * condition's doing (`development`: next dev, the vite dev server, node --conditions=development).
 */
export function explained(store: ProjectionStore): string {
  try {
    const e = store.explain(OWNER_SESSION);
    return `${e.pending_action.value} (${e.pending_action.reason}), turn ${e.current_turn.id} (${e.current_turn.reason}), ${e.rejected.length} rejected`;
  } catch (error) {
    const { name, code, field } = error as { name?: string; code?: string; field?: string };
    return `${name} ${code} (${field})`;
  }
}

/** `explained(store)` once every step has been applied, by build. */
export const EXPLAINED = {
  development: 'clarification (authoritative_projection), turn turn-7 (newest_turn), 1 rejected',
  production: 'TaskProjectionError development_only (this)',
} as const;
