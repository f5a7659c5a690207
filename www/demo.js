// Demo page: loads the package's browser entry (the `default` export condition), then renders what
// the engine decides after each step of the scripted stream in ./story.js.
import init, * as api from '/pkg/index.js';
import { STEPS, replay } from './story.js';

const $ = (id) => document.getElementById(id);
let step = 0;
let previousFacts = new Map();

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const actionLabel = (a) => (a === undefined ? 'unknown' : a === null ? 'clean' : a);
const revLabel = (r) => (r ? `(${r.epoch}, ${r.sequence})` : '—');
const turnLabel = (id) => (id === undefined ? 'unknown (turns not loaded)' : id === null ? 'none' : id);
const actionClass = (a) => (a === 'clarification' ? 'pending-clarification' : a === 'permission' ? 'pending-permission' : '');

/** One fact row; highlighted when its text differs from the previous step's. */
function fact(facts, key, label, value, fn, cls = '') {
  const text = typeof value === 'string' ? value : value.textContent;
  const changed = step > 0 && previousFacts.has(key) && previousFacts.get(key) !== text;
  facts.set(key, text);
  return [
    el('dt', {}, label),
    el('dd', { class: `${changed ? 'changed ' : ''}${cls}`.trim(), 'data-fact': key }, value, fn ? el('code', { class: 'fn' }, fn) : null),
  ];
}

function renderSteps() {
  $('steps').replaceChildren(
    ...STEPS.map((s, i) =>
      el('li', {}, el('button', { type: 'button', 'aria-current': i === step ? 'step' : 'false', onclick: () => go(i) }, `${i + 1}. ${s.title}`)),
    ),
  );
  $('steps').querySelector('[aria-current="step"]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

function render() {
  const { decisions: d, notes } = replay(api, step);
  const facts = new Map();
  const current = STEPS[step];

  $('counter').textContent = `${step + 1} / ${STEPS.length}`;
  $('prev').disabled = step === 0;
  $('next').disabled = step === STEPS.length - 1;
  renderSteps();
  $('event-title').textContent = `Step ${step + 1}: ${current.title}`;
  $('event-text').textContent = current.text;
  $('event-json').textContent = JSON.stringify(current.event(), null, 2);

  const ownerText = d.owner === '' ? 'task only (no session is opened)' : d.owner;
  const summaryText = d.summary
    ? `r${d.summary.revision}, pending_action: ${d.summary.pending_action ?? 'omitted (clean)'}`
    : 'none (dropped)';
  $('task-facts').replaceChildren(
    ...fact(facts, 'task-action', 'Task pending action', actionLabel(d.taskAction), 'effectiveTaskPendingAction(task)', actionClass(d.taskAction)),
    ...fact(facts, 'task-from-sessions', 'From the sessions’ projections', actionLabel(d.taskActionFromSessions), 'taskPendingAction(sessions)', actionClass(d.taskActionFromSessions)),
    ...fact(facts, 'owner', 'Clicking the task opens', ownerText, `resolveTaskSessionId({ task, sessions, preferredSessionId: "${d.preferredSessionId}" })`),
    ...fact(facts, 'summary', 'Status summary held', summaryText, 'isNewerStatusSummary / mergeFetchedStatusSummary'),
  );
  $('notes').replaceChildren(...notes.map((n) => el('li', {}, n)));

  $('sessions').replaceChildren(
    ...d.sessions.map((s) => {
      const dl = el('dl', { class: 'facts' });
      dl.append(
        ...fact(facts, `${s.id}-state`, 'State', s.state),
        ...fact(facts, `${s.id}-projection`, 'Projection held', `${actionLabel(s.projection.action)} at ${revLabel(s.projection.revision)}`, 'mergePendingProjection(held, incoming)', actionClass(s.projection.action)),
        ...fact(facts, `${s.id}-rows`, 'From its rows', actionLabel(s.fromRows), 'sessionPendingAction({ session, turns, messages })', actionClass(s.fromRows)),
        ...fact(facts, `${s.id}-turn`, 'Current turn', turnLabel(s.currentTurn), 'currentTurnId(turns, state)'),
        ...fact(facts, `${s.id}-history`, 'Turn history', s.turnHistory.join(' → ') || '—', 'visibleTurnHistory(turns)'),
        ...fact(facts, `${s.id}-request`, 'Pending question', s.request ? s.request.id : 'none', 'findPendingClarification(messages, scope)'),
        ...fact(facts, `${s.id}-permission`, 'Blocked on permission', s.permission ? 'yes' : 'no', 'hasPendingPermission(messages)', s.permission ? 'pending-permission' : ''),
      );
      const overlay = s.bundle.length
        ? el('div', { class: 'overlay', 'data-fact': `${s.id}-bundle` },
            el('strong', {}, `Clarification overlay (${s.bundle.length})`),
            el('code', { class: 'fn' }, ' pendingClarificationBundle(messages, scope)'),
            el('ol', {}, s.bundle.map((m) => el('li', {}, m.content ?? m.id, ' ', el('span', { class: 'tag' }, m.id)))))
        : s.request
          ? el('p', { class: 'overlay', 'data-fact': `${s.id}-bundle` }, `Question ${s.request.id} is pending, but its bundle is incomplete (question_total ${s.request.metadata?.question_total}): no overlay yet.`)
          : null;
      facts.set(`${s.id}-bundle`, s.bundle.map((m) => m.id).join(','));
      return el('section', { class: 'card', 'aria-label': `Session ${s.id}` },
        el('h2', {}, s.id, s.primary ? el('span', { class: 'tag' }, 'primary') : null, d.owner === s.id ? el('span', { class: 'tag owner' }, 'opens on click') : null),
        dl,
        overlay,
        el('h3', {}, 'Transcript ', el('code', { class: 'fn' }, 'visibleTranscriptMessages(messages, scope)')),
        el('ul', { class: 'transcript' },
          s.transcript.map((m) => el('li', {}, el('span', { class: 'kind' }, `${m.type}${m.metadata?.status ? ` · ${m.metadata.status}` : ''} · `), m.content ?? m.id))),
      );
    }),
  );
  previousFacts = facts;
}

function go(n) {
  const target = Math.max(0, Math.min(STEPS.length - 1, n));
  if (target !== step + 1) {
    // Highlight changes relative to the step before the one shown, however we got there.
    step = Math.max(0, target - 1);
    previousFacts = new Map();
    render();
  }
  step = target;
  render();
  history.replaceState(null, '', `#step-${step + 1}`);
}

async function main() {
  $('prev').addEventListener('click', () => go(step - 1));
  $('next').addEventListener('click', () => go(step + 1));
  $('reset').addEventListener('click', () => go(0));
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLElement && e.target.closest('input, textarea')) return;
    if (e.key === 'ArrowRight') go(step + 1);
    if (e.key === 'ArrowLeft') go(step - 1);
  });
  try {
    await init();
  } catch (err) {
    const box = $('load-error');
    box.hidden = false;
    box.textContent = `Could not load the package from /pkg/ (${err.message}). Run \`npm start\` (it builds pkg/ first).`;
    throw err;
  }
  const fromHash = Number(location.hash.match(/^#step-(\d+)$/)?.[1]);
  go(Number.isInteger(fromHash) && fromHash >= 1 ? fromHash - 1 : 0);
  document.body.dataset.ready = 'true';
}

main().catch((err) => {
  console.error(err);
  const box = $('load-error');
  box.hidden = false;
  if (!box.textContent) box.textContent = `Error: ${err.message}`;
});
