// The "Play the agent" panel: one button per simulator action of the agent or the server, grouped
// by the scenario it plays, each scenario with a sentence or two on what it shows. Shown only when
// the server mounts the simulator (`GET /api/dev/sim`). The buttons act on the task and session
// being viewed. What the user does (answer, skip, approve, deny, write to the agent) is in the
// session itself (view.ts), never here.
import type { App } from './app';
import { byId, h, renderKeyed } from './dom';
import { sessionLabel } from './words';

type Act = 'new-task' | 'reset' | 'ask' | 'ask-bundle' | 'lifecycle-turn' | 'add-reviewer' | 'detach'
  | 'ask-permission' | 'restart' | 'replay';

interface Scenario {
  id: string;
  title: string;
  text: string;
  acts: Act[];
}

/** The scenarios, in the order a first visit plays them. */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'question',
    title: 'A question',
    text: 'The agent asks one question and waits. Answer it in the form: your answer stays in the transcript under the question, and the agent carries on.',
    acts: ['ask'],
  },
  {
    id: 'bundle',
    title: 'Several questions at once',
    text: 'The agent asks three questions together. They are answered together: one Submit sends all three answers, and Skip skips all three.',
    acts: ['ask-bundle'],
  },
  {
    id: 'superseded',
    title: 'A question that was overtaken',
    text: 'Ask a question, then, without answering, send the agent a message from the session (the box below its transcript): a new turn starts, and the question becomes history and can no longer be answered. Ask again and skip the new one: the old question never comes back.',
    acts: ['ask'],
  },
  {
    id: 'lifecycle',
    title: 'A bookkeeping turn',
    text: 'Ask a question, then let the agent record a bookkeeping turn (a lifecycle record, newer than the question’s turn). Bookkeeping turns never become current, so the question stays open; the session’s “Why?” lists the turn as skipped.',
    acts: ['ask', 'lifecycle-turn'],
  },
  {
    id: 'secondary',
    title: 'A question in another session',
    text: 'A reviewer session of this task asks. Go back to the task list and click the task: the page opens the reviewer’s session with its question, not the session you had open.',
    acts: ['add-reviewer'],
  },
  {
    id: 'detached',
    title: 'The agent went away',
    text: 'Ask a question, then detach the agent, as if it crashed while waiting. The question stays answerable: your answer starts the agent again, in a new turn that begins with your answer.',
    acts: ['ask', 'detach'],
  },
  {
    id: 'permission',
    title: 'A permission',
    text: 'The agent asks before doing something risky. Approve or deny it in the session (above its transcript); the agent carries on either way.',
    acts: ['ask-permission'],
  },
  {
    id: 'restart',
    title: 'A server restart',
    text: 'Restart the server: the page notices the new server run and loads everything again; an open question stays answerable. Then replay what the page received before the restart, as if it arrived late: the page ignores what is older than what it holds, nothing on screen changes, and the status line counts what was ignored from the engine’s own log, as the session’s “Why?” lists it.',
    acts: ['restart', 'replay'],
  },
];

const LABEL: Record<Act, string> = {
  'new-task': 'New task',
  reset: 'Reset demo data',
  ask: 'Ask a question',
  'ask-bundle': 'Ask three questions',
  'lifecycle-turn': 'Record a bookkeeping turn',
  'add-reviewer': 'Add a reviewer who asks',
  detach: 'Detach the agent',
  'ask-permission': 'Ask for a permission',
  restart: 'Restart the server',
  replay: 'Replay old messages',
};

/** Runs an action on the viewed task / session. */
function run(app: App, act: Act): void {
  const { taskId, sessionId } = app.route;
  switch (act) {
    case 'new-task':
      return void app.newTask();
    case 'reset':
      return void app.resetDemo();
    case 'restart':
      return void app.restartServer();
    case 'replay':
      return void app.replayOldFrames();
    case 'add-reviewer':
      return void (taskId && app.addReviewer(taskId));
    default:
      break;
  }
  if (!sessionId) return;
  switch (act) {
    case 'ask':
      return void app.ask(sessionId, false);
    case 'ask-bundle':
      return void app.ask(sessionId, true);
    case 'lifecycle-turn':
      return void app.lifecycleTurn(sessionId);
    case 'detach':
      return void app.detach(sessionId);
    case 'ask-permission':
      return void app.askPermission(sessionId);
  }
}

export function paintSimulator(app: App): void {
  const panel = byId('sim-panel');
  panel.hidden = app.simulator !== true;
  if (app.simulator !== true) return;
  const { taskId, sessionId } = app.route;
  const busy = app.simBusy();
  const task = taskId ? app.task(taskId) : undefined;
  const target = sessionId ? `${sessionLabel(app.session(sessionId))} in “${task?.title || 'this task'}”` : null;
  const old = app.oldFrames.length;
  const enabled = (act: Act): boolean => {
    if (busy) return false;
    switch (act) {
      case 'new-task':
      case 'reset':
      case 'restart':
        return true;
      case 'replay':
        return old > 0;
      case 'add-reviewer':
        return taskId !== null;
      default:
        return sessionId !== null;
    }
  };
  const button = (act: Act) =>
    h('button', {
      type: 'button',
      class: 'sim-action',
      'data-action': act,
      disabled: !enabled(act),
      title: act === 'replay' && old === 0 ? 'Restart the server first: the page replays what it received before the restart.' : null,
      onclick: () => run(app, act),
    }, act === 'replay' && old > 0 ? `${LABEL[act]} (${old})` : LABEL[act]);
  const key = JSON.stringify([taskId, sessionId, target, busy, app.simStatus, app.simDone, old, location.href]);
  renderKeyed(panel, key, () => [
    h('h2', { id: 'sim-title' }, 'Play the agent'),
    h('p', { class: 'muted small' }, 'These buttons stand in for the agent and the server (the server’s simulator). They act on the session you have open; what you do (answer, skip, approve, deny, write to the agent) is in the session itself.'),
    h('p', { class: 'sim-target', 'data-testid': 'sim-target' }, target ? `Acting on: ${target}` : 'Open a task’s session to act in it.'),
    h('div', { class: 'sim-actions', 'data-scenario': 'panel' }, button('new-task'), button('reset')),
    h('p', {
      class: `sim-status ${app.simStatus?.kind ?? ''}`,
      role: 'status',
      'aria-live': 'polite',
      'data-testid': 'sim-status',
      'data-kind': app.simStatus?.kind ?? 'none',
      'data-done': app.simDone,
    }, app.simStatus?.text ?? ''),
    h('h3', {}, 'Scenarios'),
    h('ol', { class: 'scenarios' },
      SCENARIOS.map((s) =>
        h('li', { class: 'scenario', 'data-scenario': s.id },
          h('h4', {}, s.title),
          h('p', {}, s.text),
          h('div', { class: 'sim-actions' }, s.acts.map(button)))),
      h('li', { class: 'scenario', 'data-scenario': 'tabs' },
        h('h4', {}, 'Two tabs'),
        h('p', {}, 'Open this page in a second tab and answer a question there: it disappears here as well.'),
        h('div', { class: 'sim-actions' },
          h('a', { class: 'sim-action', href: location.href, target: '_blank', rel: 'noopener' }, 'Open a second tab')))),
    h('p', { class: 'muted small' }, 'Reset demo data deletes every task and brings back the three demo tasks.'),
  ]);
}
