// The scripted event stream the demo replays, and the client state it builds by asking the engine
// at every step. Pure module (no DOM): `replay(api, n)` applies steps 0..n with the real package
// functions passed in as `api`, and returns the state plus what the engine decided at step n.

const TASK = 'task-1';
const MAIN = 'sess-main';
const REVIEW = 'sess-review';
const t = (hhmmss, frac = '000000000') => `2025-06-01T${hhmmss}.${frac}Z`;
const rev = (epoch, sequence) => ({ epoch, sequence });

function turn(id, session, started, completed = null) {
  return {
    id, session_id: session, task_id: TASK, started_at: started, created_at: started,
    updated_at: completed ?? started, completed_at: completed,
  };
}
function message(id, session, turnId, type, created, extra = {}) {
  return {
    id, session_id: session, task_id: TASK, turn_id: turnId, author_type: type.endsWith('_request') ? 'agent' : 'user',
    type, created_at: created, updated_at: created, ...extra,
  };
}
function question(id, turnId, created, pendingId, index, total, content) {
  return message(id, REVIEW, turnId, 'clarification_request', created, {
    content,
    metadata: { pending_id: pendingId, question_id: id, question_index: index, question_total: total, status: 'pending' },
  });
}
/** A WebSocket session.message.* event: the message (with message_id) plus the session projection. */
function wsMessage(kind, msg, pendingAction, revision) {
  const { id, ...fields } = msg;
  const data = { message_id: id, ...fields };
  if (pendingAction !== undefined) {
    data.pending_action = pendingAction;
    data.pending_action_revision = revision;
  }
  return { event: `session.message.${kind}`, data };
}
function summary(revision, pendingAction, updatedAt) {
  const s = { revision, updated_at: updatedAt, primary_session: MAIN, queued_prompt_count: 0 };
  if (pendingAction) s.pending_action = pendingAction;
  return s;
}
function session(id, isPrimary, started, pendingAction, revision) {
  return {
    id, task_id: TASK, state: 'RUNNING', started_at: started, updated_at: started, is_primary: isPrimary,
    pending_action: pendingAction, pending_action_revision: revision,
  };
}

const q1 = question('q-1', 'turn-r1', t('09:06:00', '000000001'), 'pend-1', 0, 2, 'Which database should the migration target?');
const q2 = question('q-2', 'turn-r1', t('09:06:00', '000000002'), 'pend-1', 1, 2, 'Keep the old tables as a backup?');
const q3 = question('q-3', 'turn-r2', t('09:20:00'), 'pend-2', 0, 1, 'Also rename the index?');
const answered = (m) => ({ ...m, updated_at: t('09:10:00'), metadata: { ...m.metadata, status: 'answered' } });
const skipped = (m) => ({ ...m, updated_at: t('09:21:00'), metadata: { ...m.metadata, status: 'rejected' } });
const prompt1 = message('m-1', MAIN, 'turn-m1', 'user_message', t('09:00:01', '500000000'), { content: 'Migrate the orders table.' });
const permission = message('perm-1', MAIN, 'turn-m2', 'permission_request', t('09:31:00'), {
  content: 'Run `DROP TABLE legacy_orders`?', metadata: { status: 'pending' },
});

/** The REST snapshot taken at boot, and the same endpoint's delayed answer (requested at boot). */
function restSnapshot() {
  return {
    task: { id: TASK, title: 'Migrate orders to Postgres', status_summary: summary(1, null, t('09:05:30')), status_summary_invalidated: false, task_pending_action: null },
    sessions: [session(REVIEW, false, t('09:05:00'), null, rev('7', 1)), session(MAIN, true, t('09:00:00'), null, rev('7', 1))],
  };
}

export const STEPS = [
  {
    title: 'Boot: REST snapshot',
    text: 'The client loads the task, its two sessions (newest first: the review session, then the primary) and their turns and messages. Nothing is pending. The user last looked at the primary session.',
    event: () => ({ request: 'GET /tasks/task-1, /tasks/task-1/task-sessions, turns, messages', response: restSnapshot() }),
    apply(s) {
      const snap = restSnapshot();
      s.task = snap.task;
      s.summary = snap.task.status_summary;
      s.sessions = snap.sessions;
      s.turns = {
        [MAIN]: [turn('turn-m1', MAIN, t('09:00:01'), t('09:02:00'))],
        [REVIEW]: [turn('turn-r1', REVIEW, t('09:05:01'))],
      };
      s.messages = {
        [MAIN]: [prompt1],
        [REVIEW]: [message('r-1', REVIEW, 'turn-r1', 'user_message', t('09:05:01', '500000000'), { content: 'Review the migration plan.' })],
      };
      s.preferredSessionId = MAIN;
      s.notes.push('Held summary r1 (clean); both sessions clean at revision (7, 1).');
    },
  },
  {
    title: 'Question 1 of 2 arrives (review session)',
    text: 'The agent in the secondary session asks a two-question clarification. Only the first question has arrived, so the bundle is not actionable yet: no overlay.',
    event: () => wsMessage('added', q1, 'clarification', rev('7', 2)),
    apply(s, api) {
      applyMessageEvent(s, api, wsMessage('added', q1, 'clarification', rev('7', 2)));
    },
  },
  {
    title: 'Question 2 of 2 arrives',
    text: 'The second question completes the bundle (question_total 2): the overlay shows both, and the transcript hides them.',
    event: () => wsMessage('added', q2, 'clarification', rev('7', 3)),
    apply(s, api) {
      applyMessageEvent(s, api, wsMessage('added', q2, 'clarification', rev('7', 3)));
    },
  },
  {
    title: 'Live status summary r2: clarification',
    text: 'task.status_summary.updated with a newer revision replaces the held summary. The task now needs the user, and the owner of the question is the secondary session, not the remembered primary.',
    event: () => ({ event: 'task.status_summary.updated', data: { task_id: TASK, workspace_id: 'ws-1', status_summary: summary(2, 'clarification', t('09:06:01')) } }),
    apply(s, api) {
      applyLiveSummary(s, api, summary(2, 'clarification', t('09:06:01')));
    },
  },
  {
    title: 'Delayed REST snapshot (requested at boot)',
    text: 'The task-list request issued at boot (summary r1, sessions at (7, 1), nothing pending) answers only now. The engine keeps the newer live summary and the newer session projections.',
    event: () => ({ request: 'GET /tasks (issued at boot, answered now)', response: restSnapshot() }),
    apply(s, api) {
      const snap = restSnapshot();
      const kept = api.mergeFetchedStatusSummary({
        held: s.summary, taskPresentAtFetchStart: true, fetchStartRevision: 1, response: snap.task,
      });
      s.notes.push(`mergeFetchedStatusSummary → ${kept === s.summary ? 'held summary kept' : kept === null ? 'summary dropped' : 'response summary taken'} (r${kept?.revision ?? '—'})`);
      s.summary = kept;
      s.task = { ...snap.task, status_summary: kept };
      for (const incoming of snap.sessions) applySessionSnapshot(s, api, incoming);
    },
  },
  {
    title: 'The user answers both questions',
    text: 'Both rows become answered; the session projection goes clean at (7, 5) and the summary r3 drops pending_action. The questions stay in the transcript as history.',
    event: () => [wsMessage('updated', answered(q1), 'clarification', rev('7', 4)), wsMessage('updated', answered(q2), null, rev('7', 5)), { event: 'task.status_summary.updated', data: { task_id: TASK, workspace_id: 'ws-1', status_summary: summary(3, null, t('09:10:01')) } }],
    apply(s, api) {
      applyMessageEvent(s, api, wsMessage('updated', answered(q1), 'clarification', rev('7', 4)));
      applyMessageEvent(s, api, wsMessage('updated', answered(q2), null, rev('7', 5)));
      applyLiveSummary(s, api, summary(3, null, t('09:10:01')));
    },
  },
  {
    title: 'A newer question, in a new turn',
    text: 'The user sends another prompt to the review session (turn r2); the agent asks one more question.',
    event: () => [{ event: 'session.turn.started', data: turn('turn-r2', REVIEW, t('09:19:00')) }, wsMessage('added', q3, 'clarification', rev('7', 6)), { event: 'task.status_summary.updated', data: { task_id: TASK, workspace_id: 'ws-1', status_summary: summary(4, 'clarification', t('09:20:01')) } }],
    apply(s, api) {
      s.turns[REVIEW] = s.turns[REVIEW].map((x) => (x.id === 'turn-r1' ? { ...x, completed_at: t('09:18:00') } : x));
      s.turns[REVIEW].push(turn('turn-r2', REVIEW, t('09:19:00')));
      applyMessageEvent(s, api, wsMessage('added', q3, 'clarification', rev('7', 6)));
      applyLiveSummary(s, api, summary(4, 'clarification', t('09:20:01')));
    },
  },
  {
    title: 'The user skips the newer question',
    text: 'Skip rejects the bundle: the row becomes rejected, the projection goes clean at (7, 7), the summary r5 is clean. Nothing is pending anywhere.',
    event: () => [wsMessage('updated', skipped(q3), null, rev('7', 7)), { event: 'task.status_summary.updated', data: { task_id: TASK, workspace_id: 'ws-1', status_summary: summary(5, null, t('09:21:01')) } }],
    apply(s, api) {
      applyMessageEvent(s, api, wsMessage('updated', skipped(q3), null, rev('7', 7)));
      applyLiveSummary(s, api, summary(5, null, t('09:21:01')));
    },
  },
  {
    title: 'Server restart: epoch 8',
    text: 'The server restarted and bumped its epoch; its sequence counter starts again at 1. The primary session asks for a permission at (8, 1): accepted, because epoch 8 is newer than 7 whatever the sequence.',
    event: () => [{ event: 'session.turn.started', data: turn('turn-m2', MAIN, t('09:30:00')) }, wsMessage('added', permission, 'permission', rev('8', 1)), { event: 'task.status_summary.updated', data: { task_id: TASK, workspace_id: 'ws-1', status_summary: summary(6, 'permission', t('09:31:01')) } }],
    apply(s, api) {
      s.turns[MAIN].push(turn('turn-m2', MAIN, t('09:30:00')));
      applyMessageEvent(s, api, wsMessage('added', permission, 'permission', rev('8', 1)));
      applyLiveSummary(s, api, summary(6, 'permission', t('09:31:01')));
    },
  },
  {
    title: 'A late event from before the restart',
    text: 'An update sent by the old process just before it stopped, at (7, 8) with the primary session clean, arrives last. Taking it would hide the pending permission; its revision is older than the held (8, 1), so the projection is not touched.',
    event: () => lateEvent(),
    apply(s, api) {
      applyMessageEvent(s, api, lateEvent());
    },
  },
];

function lateEvent() {
  return wsMessage('updated', { ...prompt1, updated_at: t('09:25:00') }, null, rev('7', 8));
}

const revText = (r) => (r ? `(${r.epoch}, ${r.sequence})` : '—');
const actionText = (a) => (a === undefined ? 'unknown' : a === null ? 'clean' : a);

/** session.message.added|updated: upsert the row, then merge the projection it carries. */
function applyMessageEvent(s, api, { event, data }) {
  const { message_id: id, pending_action, pending_action_revision, ...fields } = data;
  const sessionId = fields.session_id;
  const list = s.messages[sessionId];
  const row = { id, ...fields };
  const at = list.findIndex((m) => m.id === id);
  if (at === -1) list.push(row);
  else list[at] = row;
  // Omitted projection keys mean "keep what you have"; null means clean.
  const incoming = {};
  if ('pending_action' in data) {
    incoming.pending_action = pending_action;
    incoming.pending_action_revision = pending_action_revision;
  }
  mergeProjection(s, api, sessionId, incoming, `${event} ${id}`);
}

function mergeProjection(s, api, sessionId, incoming, why) {
  const index = s.sessions.findIndex((x) => x.id === sessionId);
  const held = s.sessions[index];
  const accepted = api.canReplaceRevision(held.pending_action_revision, incoming.pending_action_revision);
  const merged = api.mergePendingProjection(held, incoming);
  s.sessions[index] = { ...held, ...merged };
  s.notes.push(
    `${why}: ${sessionId} ${actionText(held.pending_action)} ${revText(held.pending_action_revision)} + incoming ${actionText(incoming.pending_action)} ${revText(incoming.pending_action_revision)} → ` +
      `${accepted ? 'accepted' : 'rejected (older)'}: ${actionText(merged.pending_action)} ${revText(merged.pending_action_revision)}`,
  );
}

function applySessionSnapshot(s, api, incoming) {
  const index = s.sessions.findIndex((x) => x.id === incoming.id);
  const held = s.sessions[index];
  const merged = api.mergePendingProjection(held, incoming);
  // Other fields (state, ...) update from the snapshot; only the pending fields obey the revision.
  s.sessions[index] = { ...incoming, ...merged };
  s.notes.push(
    `REST ${incoming.id} ${actionText(incoming.pending_action)} ${revText(incoming.pending_action_revision)} vs held ${actionText(held.pending_action)} ${revText(held.pending_action_revision)} → ${actionText(merged.pending_action)} ${revText(merged.pending_action_revision)}`,
  );
}

function applyLiveSummary(s, api, incoming) {
  const replace = api.isNewerStatusSummary(incoming, s.summary);
  s.notes.push(`isNewerStatusSummary(r${incoming.revision}, held r${s.summary?.revision ?? '—'}) → ${replace ? 'replaced' : 'kept'}`);
  if (replace) {
    s.summary = incoming;
    s.task = { ...s.task, status_summary: incoming };
  }
}

/** What the engine decides for the state after a step. */
export function decide(s, api) {
  const sessions = s.sessions.map((sess) => {
    const turns = s.turns[sess.id];
    const messages = s.messages[sess.id];
    const currentTurn = api.currentTurnId(turns, sess.state);
    const scope = { currentTurnId: currentTurn, pendingAction: sess.pending_action };
    const request = api.findPendingClarification(messages, scope);
    const bundle = api.pendingClarificationBundle(messages, scope);
    const transcript = api.visibleTranscriptMessages(messages, scope);
    return {
      id: sess.id,
      primary: sess.is_primary === true,
      state: sess.state,
      projection: { action: sess.pending_action, revision: sess.pending_action_revision },
      fromRows: api.sessionPendingAction({ session: sess, turns, messages }),
      currentTurn,
      turnHistory: api.visibleTurnHistory(turns).map((x) => x.id),
      request,
      bundle,
      transcript,
      permission: api.hasPendingPermission(messages),
    };
  });
  return {
    sessions,
    summary: s.summary,
    taskAction: api.effectiveTaskPendingAction(s.task),
    taskActionFromSessions: api.taskPendingAction(s.sessions),
    owner: api.resolveTaskSessionId({ task: s.task, sessions: s.sessions, preferredSessionId: s.preferredSessionId }),
    preferredSessionId: s.preferredSessionId,
  };
}

/** Replays steps 0..n and returns { state, decisions, notes (of step n) }. */
export function replay(api, n) {
  const s = { task: null, summary: null, sessions: [], turns: {}, messages: {}, notes: [], preferredSessionId: null };
  for (let i = 0; i <= n; i++) {
    s.notes = [];
    STEPS[i].apply(s, api);
  }
  return { state: s, decisions: decide(s, api), notes: s.notes };
}
