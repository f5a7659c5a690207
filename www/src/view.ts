// Renders the page from store queries only (taskPendingAction, taskStatusSummary, pendingOwner,
// sessionPendingAction, pendingClarification, hiddenMessageIds, hasPendingPermission,
// currentTurnId). Display caches supply text and labels, never decisions. The user's text is
// plain words (words.ts); ids, wire states and revisions appear with "Details" on. Why the page
// shows what it shows is the package's devtools panel: a session's "Why?" opens it there.
import type { PendingAction } from 'task-projection';
import type { App, ReasonEntry } from './app';
import { byId, h, renderKeyed } from './dom';
import { paintSimulator } from './scenarios';
import type { Message } from './wire';
import {
  ACTION_LABEL, ACTION_TITLE, answersOf, detail, messageText, permissionTag, questionTag, reasonWords, respondNotice, sessionLabel, stateWords, turnNumbers, userText,
  type RespondNotice,
} from './words';

function badge(action: PendingAction | null | undefined, testid: string): HTMLElement | null {
  if (!action) return null;
  return h('span', { class: `badge ${action}`, 'data-testid': testid, title: ACTION_TITLE[action] }, ACTION_LABEL[action]);
}


export function paint(app: App): void {
  const { store, route } = app;
  document.body.dataset['view'] = route.taskId ? 'session' : 'list';
  document.body.dataset['ready'] = String(app.taskListLoaded);
  document.body.dataset['details'] = app.details ? 'on' : 'off';

  // Header: connection, details toggle, errors ---------------------------------------------------
  const conn = byId('connection');
  conn.dataset['state'] = app.connection;
  conn.dataset['epoch'] = app.epoch ?? '';
  const live = app.details ? `Live · epoch ${app.epoch ?? '?'}` : 'Live';
  conn.textContent = app.connection === 'live' ? live : app.connection === 'connecting' ? 'Connecting…' : 'Offline';
  const toggle = byId<HTMLButtonElement>('details-toggle');
  toggle.setAttribute('aria-pressed', String(app.details));
  toggle.onclick = () => app.setDetails(!app.details);
  const banner = byId('error-banner');
  banner.hidden = !app.error;
  banner.textContent = app.error ?? '';
  const why = app.error && app.errorDetail ? detail(app, app.errorDetail) : null;
  if (why) banner.append(why);

  // Task list ------------------------------------------------------------------------------------
  const tasks = app.taskOrder.map((id) => ({ id, task: app.task(id), action: store.taskPendingAction(id), summary: store.taskStatusSummary(id) }));
  renderKeyed(
    byId('task-list'),
    JSON.stringify([app.taskListLoaded, route.taskId, app.selecting, tasks.map((t) => [t.id, t.task?.title, t.action, t.summary?.revision])]),
    () => {
      if (!app.taskListLoaded) return [h('li', { class: 'muted' }, 'Loading tasks…')];
      if (tasks.length === 0) return [h('li', { class: 'muted' }, 'No tasks yet.')];
      return tasks.map(({ id, task, action }) =>
        h('li', {},
          h('button', {
            type: 'button',
            class: 'task',
            'data-testid': 'task-item',
            'data-task-id': id,
            'data-pending': action ?? 'none',
            'aria-current': route.taskId === id ? 'true' : null,
            'aria-busy': app.selecting === id ? 'true' : null,
            onclick: () => void app.selectTask(id),
          },
          h('span', { class: 'task-title' }, task?.title || 'Untitled task'),
          badge(action, 'task-pending'),
          app.selecting === id ? h('span', { class: 'muted small' }, 'opening…') : null),
        ),
      );
    },
  );

  // Session pane ---------------------------------------------------------------------------------
  const pane = byId('session-pane');
  if (!route.taskId) {
    renderKeyed(pane, 'empty', () => [h('p', { class: 'muted placeholder' }, 'Pick a task to see its sessions.')]);
  } else {
    paintTask(app, pane, route.taskId, route.sessionId);
  }

  paintSimulator(app);

  // The page's log of inputs and actions ------------------------------------------------------------
  // In words; the codes and wire terms stay in data-* attributes and, with Details on, a detail.
  const last = app.reasons.at(-1);
  renderKeyed(byId('last-reason'), JSON.stringify([last?.n ?? 0, app.details]), () => (last ? logLine(app, last) : ['—']));
  const lastEl = byId('last-reason');
  lastEl.dataset['reason'] = last?.reason ?? '';
  lastEl.dataset['source'] = last?.source ?? '';
  byId('reason-log').dataset['count'] = String(app.reasonCount);
  renderKeyed(byId('reason-log'), JSON.stringify([last?.n ?? 0, app.details]), () =>
    app.reasons.slice().reverse().map((r) => h('li', { 'data-reason': r.reason, 'data-source': r.source }, logLine(app, r))),
  );
}

/** A log entry in words: what it was, what became of it; the code and wire terms as a detail. */
const logLine = (app: App, r: ReasonEntry) => [`${r.what}: ${reasonWords(r.reason)}.`, detail(app, `${r.reason} · ${r.source}`)];

function paintTask(app: App, pane: HTMLElement, taskId: string, sessionId: string | null): void {
  const { store } = app;
  const task = app.task(taskId);
  const sessions = app.listedSessions(taskId);
  const tabs = sessions.map((s) => ({ id: s.id, s, action: store.sessionPendingAction(s.id) }));
  const taskAction = store.taskPendingAction(taskId);
  const owner = taskAction ? store.pendingOwner(taskId) : '';
  const summary = store.taskStatusSummary(taskId);
  const header = JSON.stringify([taskId, sessionId, task?.title, tabs.map((t) => [t.id, t.s.state, t.action, sessionLabel(t.s)]), taskAction, owner, summary?.revision, app.details]);
  if (pane.dataset['task'] !== taskId || !pane.querySelector('#session-body')) {
    pane.dataset['task'] = taskId;
    pane.dataset['renderKey'] = '';
    pane.replaceChildren(
      h('div', { id: 'task-head' }),
      h('div', { id: 'session-body' }),
    );
  }
  renderKeyed(byId('task-head'), header, () => [
    h('div', { class: 'pane-head' },
      h('button', { type: 'button', class: 'back', 'data-testid': 'back', onclick: () => app.navigate({ taskId: null, sessionId: null }) }, '← Tasks'),
      h('h2', { 'data-testid': 'task-title' }, task?.title || 'Untitled task'),
      summary ? detail(app, `revision ${String(summary.revision ?? '?')}`) : null),
    taskAction && owner && owner !== sessionId
      ? h('p', { class: 'note', 'data-testid': 'owner-hint' }, `This task is ${ACTION_TITLE[taskAction]} in `,
        h('button', { type: 'button', class: 'link', onclick: () => app.navigate({ taskId, sessionId: owner }) }, sessionLabel(app.session(owner))), '.')
      : null,
    tabs.length
      ? h('div', { role: 'tablist', 'aria-label': 'Sessions', class: 'tabs' },
        tabs.map(({ id, s, action }) =>
          h('button', {
            type: 'button',
            role: 'tab',
            id: `tab-${id}`,
            'aria-selected': String(id === sessionId),
            'aria-controls': 'session-body',
            'data-testid': 'session-tab',
            'data-session-id': id,
            'data-pending': action ?? 'none',
            onclick: () => app.navigate({ taskId, sessionId: id }),
            // The state in words is the open session's status line (once on screen); a tab
            // names the session and, with its badge, what it waits for.
            title: stateWords(s.state, action) || null,
          }, h('span', { class: 'tab-label' }, sessionLabel(s)), badge(action, 'tab-pending')),
        ))
      : h('p', { class: 'muted' }, app.sessionLists.has(taskId) ? 'This task has no sessions.' : 'Loading sessions…'),
  ]);

  const body = byId('session-body');
  if (!sessionId) {
    body.setAttribute('role', 'region');
    body.setAttribute('aria-label', 'Task');
    renderKeyed(body, `task-only:${taskAction}`, () => [
      h('p', { class: 'note', role: 'status', 'data-testid': 'task-only-note' },
        taskAction && !owner
          ? 'This task waits for you, but none of its sessions shows it right now. Pick a session.'
          : 'Pick a session.'),
    ]);
    return;
  }
  body.setAttribute('role', 'tabpanel');
  body.setAttribute('aria-labelledby', `tab-${sessionId}`);
  paintSession(app, body, sessionId);
}

function paintSession(app: App, body: HTMLElement, sessionId: string): void {
  const { store } = app;
  const messages = app.transcript(sessionId);
  const hidden = new Set(store.hiddenMessageIds(sessionId));
  const bundle = store.pendingClarification(sessionId);
  const currentTurn = store.currentTurnId(sessionId);
  const permission = store.hasPendingPermission(sessionId);
  const action = store.sessionPendingAction(sessionId);
  const session = app.session(sessionId);
  const loaded = app.loadedSessions.has(sessionId);
  const bundleKey = bundle ? `${bundle.pending_id}:${bundle.message_ids.join(',')}` : '';

  if (body.dataset['session'] !== sessionId) {
    body.dataset['session'] = sessionId;
    body.dataset['renderKey'] = '';
    body.replaceChildren(
      h('div', { id: 'session-status', class: 'session-status', 'data-testid': 'session-view', 'data-session-id': sessionId }),
      h('ol', { id: 'transcript', class: 'transcript', role: 'log', 'aria-label': 'Transcript', 'data-testid': 'transcript' }),
      h('div', { id: 'overlay-slot' }),
      h('div', { id: 'composer-slot' }),
    );
  }
  // The message box, once the server says it plays the agent (built once: what you typed stays).
  const composerSlot = byId('composer-slot');
  if (app.simulator && !composerSlot.firstChild) composerSlot.append(composer(app, sessionId));
  else if (!app.simulator && composerSlot.firstChild) composerSlot.replaceChildren();
  const status = byId('session-status');
  status.dataset['pending'] = action ?? 'none';
  status.dataset['currentTurn'] = currentTurn ?? '';
  const yours = app.yourStatus?.sessionId === sessionId ? app.yourStatus : null;
  renderKeyed(status, JSON.stringify([session?.state, action, currentTurn, permission, app.details, app.simulator, app.simBusy(), yours]), () => [
    h('div', { class: 'status-line' },
      h('span', { 'data-testid': 'session-state', 'data-state': String(session?.state ?? ''), class: 'state' }, stateWords(session?.state, action) || 'Loading…'),
      detail(app, `state ${String(session?.state ?? '?')} · ${currentTurn === undefined ? 'turns not loaded' : currentTurn === null ? 'no current turn' : `current turn ${currentTurn}`}`),
      // The package's devtools panel, opened on this session: the engine's reasons, in words.
      h('button', {
        type: 'button', class: 'why-button', 'data-testid': 'why-button', 'aria-haspopup': 'dialog',
        title: 'Why the page shows this session as it does (the engine’s reasons, in the devtools panel)',
        onclick: () => app.why({ sessionId }),
      }, 'Why?')),
    permission
      ? h('div', { class: 'permission-banner', role: 'status', 'data-testid': 'permission-banner' },
        h('p', {}, 'The agent asks for your permission (see the transcript).'),
        app.simulator ? h('div', { class: 'actions' }, permissionButtons(app, sessionId)) : null,
        yours && yours.what === 'permission' && yours.kind !== 'info'
          ? h('p', { class: `notice ${yours.kind}`, role: 'status', 'data-testid': 'permission-notice' }, yours.text)
          : null)
      : null,
  ]);

  const sendNotice = body.querySelector<HTMLElement>('[data-testid="composer-notice"]');
  if (sendNotice) {
    setNotice(sendNotice, yours && yours.what === 'prompt' ? yours : null);
    body.querySelector<HTMLElement>('[data-testid="composer"]')!.dataset['sent'] = String(app.promptsSent);
    body.querySelector<HTMLButtonElement>('[data-testid="prompt-send"]')!.disabled = app.simBusy();
  }

  const turnNumber = turnNumbers(messages);
  const transcriptKey = JSON.stringify([loaded, currentTurn, [...hidden], messages.map((m) => [m.id, m.updated_at, m.metadata?.status]), app.details, app.givenVersion, bundle?.pending_id]);
  renderKeyed(byId('transcript'), transcriptKey, () => {
    if (!loaded && messages.length === 0) return [h('li', { class: 'muted' }, 'Loading transcript…')];
    if (messages.length === 0) return [h('li', { class: 'muted' }, 'No messages yet.')];
    let lastTurn: string | null | undefined;
    const rows: HTMLElement[] = [];
    for (const m of messages) {
      if (hidden.has(m.id)) continue; // the overlay renders these
      const turn = m.turn_id ?? null;
      if (turn !== lastTurn) {
        lastTurn = turn;
        const label = turn ? `Turn ${turnNumber.get(turn) ?? '?'}${turn === currentTurn ? ' · current' : ''}` : 'Outside any turn';
        rows.push(h('li', { class: 'turn-sep', 'aria-hidden': 'true' }, label, turn ? detail(app, turn) : null));
      }
      rows.push(messageRow(app, m, sessionId));
    }
    return rows;
  });

  const slot = byId('overlay-slot');
  const opened = renderKeyed(slot, bundleKey, () => (bundle && bundle.pending_id ? [overlay(app, sessionId, bundle.pending_id, bundle.message_ids)] : []));
  if (opened && bundle) revealQuestion(slot);
  // Your answer to the shown bundle, as the store holds it (`respondState`): in flight (the
  // question shows as being sent, its buttons off), or open again after a failure (what failed,
  // and "Try again").
  const pendingId = bundle?.pending_id ?? null;
  const phase = pendingId ? store.respondState(sessionId, pendingId)?.phase : undefined;
  const notice = pendingId ? respondNotice(app.given.get(pendingId), phase) : null;
  const dialog = slot.querySelector<HTMLElement>('[data-testid="question-overlay"]');
  if (dialog) {
    dialog.dataset['respond'] = phase ?? 'none';
    dialog.setAttribute('aria-busy', String(phase === 'in_flight'));
  }
  const noticeEl = slot.querySelector<HTMLElement>('[data-testid="overlay-notice"]');
  if (noticeEl) {
    noticeEl.textContent = notice?.text ?? '';
    noticeEl.className = `notice ${notice?.kind ?? ''}`;
    noticeEl.dataset['kind'] = notice?.kind ?? '';
    noticeEl.dataset['code'] = notice?.code ?? '';
    if (notice && app.details) noticeEl.append(' ', detail(app, notice.code) ?? '');
  }
  for (const b of slot.querySelectorAll('button')) b.disabled = phase === 'in_flight';
  for (const t of slot.querySelectorAll('textarea')) t.readOnly = phase === 'in_flight';
  const retry = slot.querySelector<HTMLElement>('[data-testid="retry"]');
  if (retry) retry.hidden = !notice?.retry;
  // What became of an answer outlives its bundle ("Answer delivered.", "Already answered
  // elsewhere", "no longer open"): the newest, under the status, in the session it was given in only.
  let settled: RespondNotice | null = null;
  for (const [id, given] of app.given) {
    if (given.sessionId !== sessionId || id === pendingId) continue;
    const n = respondNotice(given, store.respondState(sessionId, id)?.phase);
    if (n?.kind === 'info') settled = n;
  }
  let stale = status.querySelector<HTMLElement>('[data-testid="respond-notice"]');
  if (settled) {
    if (!stale) status.append((stale = h('p', { 'data-testid': 'respond-notice', role: 'status' })));
    stale.className = `notice ${settled.kind}`;
    stale.textContent = settled.text;
    stale.dataset['code'] = settled.code;
    if (app.details) stale.append(' ', detail(app, settled.code) ?? '');
  } else stale?.remove();
}

/**
 * Approve / Deny: your answer to the session's pending permission. The demo server takes it
 * through its simulator (it has no permission endpoint of its own), so without `--simulator` the
 * banner only says what is asked.
 */
/**
 * The session's message box: what you write to the agent starts a new turn with it (the open
 * turns complete, so an open question becomes history). Built once per session view, so what you
 * typed survives repaints; its notice line says how the sending went.
 */
function composer(app: App, sessionId: string): HTMLElement {
  const input = h('input', {
    type: 'text', id: 'prompt-input', 'data-testid': 'prompt-input', maxlength: 500, value: 'Something else first, please.',
  });
  return h('form', {
    class: 'composer', 'data-testid': 'composer', 'aria-label': 'Message the agent',
    onsubmit: ((e: Event) => {
      e.preventDefault();
      const text = input.value.trim();
      if (text) void app.sendPrompt(sessionId, text);
    }) as EventListener,
  },
  h('label', { for: 'prompt-input' }, 'Message the agent'),
  h('div', { class: 'composer-row actions' }, input, h('button', { type: 'submit', class: 'primary', 'data-testid': 'prompt-send' }, 'Send')),
  h('p', { class: 'notice', role: 'status', 'data-testid': 'composer-notice', hidden: true }));
}

/** Shows `status` (or nothing) in a notice line. */
function setNotice(el: HTMLElement, status: { kind: string; text: string } | null): void {
  el.hidden = status === null;
  el.className = `notice ${status?.kind ?? ''}`;
  if (el.textContent !== (status?.text ?? '')) el.textContent = status?.text ?? '';
}

function permissionButtons(app: App, sessionId: string): HTMLElement[] {
  const busy = app.simBusy();
  return [
    h('button', { type: 'button', class: 'primary', 'data-testid': 'approve', disabled: busy, onclick: () => void app.resolvePermission(sessionId, true) }, 'Approve'),
    h('button', { type: 'button', class: 'secondary', 'data-testid': 'deny', disabled: busy, onclick: () => void app.resolvePermission(sessionId, false) }, 'Deny'),
  ];
}

/**
 * A question that just appeared (or opened with its session) is scrolled into view when it is
 * not already: on a phone it sits below the transcript, often a screen or more down.
 */
function revealQuestion(slot: HTMLElement): void {
  requestAnimationFrame(() => {
    const dialog = slot.querySelector<HTMLElement>('[role="dialog"]');
    if (!dialog) return;
    const box = dialog.getBoundingClientRect();
    const top = document.querySelector('.bar')?.getBoundingClientRect().bottom ?? 0;
    if (box.top < top || box.bottom > window.innerHeight) dialog.scrollIntoView({ block: box.height > window.innerHeight - top ? 'start' : 'center' });
  });
}

/** The answer you gave to a question row: the server's copy of the response when its row
 * carries one, else what this page sent (display cache). */
function givenAnswer(app: App, m: Message): string | null {
  const md = m.metadata ?? {};
  const questionId = typeof md.question_id === 'string' ? md.question_id : null;
  if (typeof md.answer === 'string') return md.answer;
  if (!questionId) return null;
  const fromServer = answersOf(md['response']).get(questionId);
  if (fromServer !== undefined) return fromServer;
  const pendingId = typeof md.pending_id === 'string' ? md.pending_id : null;
  return (pendingId && app.givenAnswers(pendingId)?.get(questionId)) ?? null;
}

function messageRow(app: App, m: Message, sessionId: string): HTMLElement {
  const type = String(m.type ?? 'message');
  let status = m.metadata?.status || 'pending';
  if (type === 'clarification_request' && status === 'pending' && typeof m.metadata?.pending_id === 'string') {
    // The row the page holds still says pending, but the store settled its bundle by your
    // respond's reply (no event has come): answered or skipped, as the reply said.
    status = app.settledAs(sessionId, m.metadata.pending_id) ?? status;
  }
  if (type === 'clarification_request') {
    // Not in the open bundle: history only, never answerable here.
    const answer = status === 'answered' ? givenAnswer(app, m) : null;
    return h('li', { class: 'msg question history', 'data-testid': 'history-question', 'data-message-id': m.id, 'data-status': status },
      h('span', { class: 'who' }, 'The agent asked'),
      h('p', {}, messageText(m)),
      answer !== null
        ? h('p', { class: 'answer', 'data-testid': 'your-answer' }, h('span', { class: 'who' }, 'Your answer'), h('span', { class: 'answer-text' }, answer))
        : h('span', { class: 'tag', 'data-testid': 'question-tag' }, questionTag(status)),
      detail(app, `${status} · bundle ${String(m.metadata?.pending_id ?? '?')} · ${m.id}`));
  }
  if (type === 'permission_request') {
    const tag = permissionTag(status);
    return h('li', { class: 'msg permission-row', 'data-testid': 'permission-row', 'data-message-id': m.id, 'data-status': status },
      h('span', { class: 'who' }, 'The agent asked for a permission'),
      h('p', {}, messageText(m) || 'May I go ahead?'),
      tag ? h('span', { class: `tag ${status}`, 'data-testid': 'permission-tag' }, tag) : null,
      detail(app, `${status} · ${m.id}`));
  }
  const mine = m.author_type === 'user';
  const resumed = mine && typeof m.metadata?.['response_to'] === 'string';
  return h('li', { class: `msg ${mine ? 'user' : 'agent'}`, 'data-testid': 'message', 'data-message-id': m.id },
    h('span', { class: 'who' }, resumed ? 'Your answer (the agent resumed with it)' : mine ? 'You' : 'Agent'),
    h('p', {}, mine ? userText(m) : messageText(m)),
    detail(app, `${type} · ${m.id}`));
}

function overlay(app: App, sessionId: string, pendingId: string, ids: readonly string[]): HTMLElement {
  const questions = ids.map((id, i) => ({ id, m: app.message(sessionId, id), i }));
  const form = h('form', {
    class: 'question-form',
    onsubmit: (ev: Event) => {
      ev.preventDefault();
      const answers = questions.map(({ id, m }) => ({
        question_id: String(m?.metadata?.question_id ?? id),
        answer: (form.querySelector<HTMLTextAreaElement>(`[data-message-id="${CSS.escape(id)}"]`)?.value ?? '').trim(),
      }));
      void app.respond(sessionId, pendingId, { answers });
    },
  },
  ids.length > 1 ? h('p', { class: 'muted small' }, `Answer all ${ids.length}: Submit sends them together; Skip skips them all.`) : null,
  questions.map(({ id, m, i }) =>
    h('div', { class: 'field' },
      h('label', { for: `answer-${i}` }, messageText(m) || `Question ${i + 1}`),
      h('textarea', { id: `answer-${i}`, rows: 2, required: true, 'data-testid': 'answer-input', 'data-message-id': id }))),
  h('p', { class: 'notice', 'data-testid': 'overlay-notice', role: 'status', 'aria-live': 'polite' }),
  h('div', { class: 'actions' },
    // After a failure: the same answer (or skip) again, a new attempt.
    h('button', { type: 'button', class: 'secondary', 'data-testid': 'retry', hidden: true, onclick: () => void app.retry(pendingId) }, 'Try again'),
    h('button', { type: 'button', class: 'secondary', 'data-testid': 'skip', onclick: () => void app.respond(sessionId, pendingId, { reject: true }) }, 'Skip'),
    h('button', { type: 'submit', class: 'primary', 'data-testid': 'submit' }, 'Submit')));
  return h('section', { class: 'overlay', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'overlay-title', 'data-testid': 'question-overlay', 'data-pending-id': pendingId },
    h('h3', { id: 'overlay-title' }, ids.length > 1 ? `The agent asks ${ids.length} questions` : 'The agent asks'),
    form);
}
