// task-projection/devtools in Node, in a DOM (happy-dom): `mountDevtools` (task-projection/devtools/dom)
// and `<ProjectionDevtools />` rendered by React. The panel's rows carry the store's answers ("not
// known yet" for an undefined one); a row opened shows the store's own `explain()` /
// `explainOwner()` (turn and question standings, the owner, the rejected inputs) in words with the
// codes in details lines only; looking changes nothing of the store (answers and their identity,
// version, lastReason, lastApplyReason, digest); the list re-renders once per frame whatever the
// number of changes; the production build gets one line and no exception; bad arguments are typed
// errors; the connection's state and the stream position are shown and followed; recording needs
// task-projection/trace and then starts, stops, saves a trace that replays, and answers the
// inspector's channel; unmount lets go of every subscription. Keyboard, layout, real CSS isolation
// and the 10,000-session timings are in devtools.browser.test.mjs (Chromium).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Window } from 'happy-dom';
import { ProjectionStore } from 'task-projection/development';
import { ProjectionStore as FallbackStore } from 'task-projection/fallback';
import { ProjectionStore as DefaultStore } from 'task-projection';
import { connect } from 'task-projection/connect';
import { mountDevtools as mountFromDom } from 'task-projection/devtools/dom';
import { ProjectionDevtools, mountDevtools } from 'task-projection/devtools';
import { ProjectionStoreProvider } from 'task-projection/react';
import { BUILD } from './build.mjs';
import { answersOf, manySessions, scenario } from './devtools-fixture.mjs';

const win = new Window({ url: 'http://localhost/', width: 1280, height: 800 });
const doc = win.document;
Object.assign(globalThis, { window: win, document: doc, IS_REACT_ACT_ENVIRONMENT: true });
if (globalThis.navigator === undefined) globalThis.navigator = win.navigator;
const React = await import('react');
const { createRoot } = await import('react-dom/client');
after(() => win.happyDOM.close());

const HOOK = Symbol.for('task-projection.devtools.1');
const SESSIONS = ['sess-1', 'sess-2', 'sess-3', 'sess-x', 'nobody'];
const TASKS = ['task-1', 'task-2', 'task-9', 'nothing'];
/** Lets the panel's frame run: a frame callback asked for after the panel's runs after it. */
const frame = () => new Promise((resolve) => win.requestAnimationFrame(() => win.setTimeout(resolve, 0)));
/** Waits until `check()` holds (at most `ms`): for what a timer or a channel brings. */
async function until(check, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

const panels = [];
function mount(store, options) {
  const element = doc.createElement('div');
  doc.body.append(element);
  const panel = mountDevtools(store, element, options);
  panels.push(panel);
  return panel;
}
after(() => panels.forEach((p) => p.unmount()));
const $ = (panel, selector) => panel.host.shadowRoot.querySelector(selector);
const $$ = (panel, selector) => [...panel.host.shadowRoot.querySelectorAll(selector)];
const row = (panel, id) => $(panel, `button.row[data-id="${id}"]`);
/** An element's text without its details lines (the words a person reads first). */
function words(node) {
  const copy = node.cloneNode(true);
  for (const d of copy.querySelectorAll('.details')) d.remove();
  return copy.textContent;
}
const typed = (code, field) => (e) => e.name === 'TaskProjectionError' && e.code === code && e.field === field;

describe('the panel lists what the store holds', () => {
  test('every session and task, each with its answers; an undefined answer is "not known yet", never none', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store);
    assert.equal($(panel, '.panel').hidden, true, 'closed until opened');
    assert.equal($(panel, '.toggle').getAttribute('aria-expanded'), 'false');
    panel.open();
    assert.equal($(panel, '.toggle').getAttribute('aria-expanded'), 'true');
    assert.equal($(panel, '[data-testid="count"]').textContent, '4 sessions');
    assert.deepEqual($$(panel, 'button.row').map((b) => b.dataset.id), ['sess-1', 'sess-2', 'sess-3', 'sess-x'], 'by task, then id');
    assert.equal(row(panel, 'sess-1').querySelector('.l2').textContent,
      'Waits for: your answer · Question: 2 questions shown together · Turn: turn-2 · Permission: none waits');
    assert.equal(row(panel, 'sess-2').querySelector('.l2').textContent, 'Waits for: nothing · Question: none shown · Turn: none · Permission: none waits');
    // Listed, but its turns and messages have not loaded: the store does not know its question.
    assert.equal(store.pendingClarification('sess-3'), undefined);
    assert.equal(row(panel, 'sess-3').querySelector('.l2').textContent,
      'Waits for: nothing · Question: not known yet · Turn: not known yet · Permission: not known yet');
    assert.equal(store.sessionPendingAction('sess-x'), undefined);
    assert.match(row(panel, 'sess-x').textContent, /task task-9.*Waits for: not known yet/);
    for (const id of ['sess-1', 'sess-2', 'sess-3', 'sess-x']) {
      const action = store.sessionPendingAction(id);
      assert.equal(row(panel, id).dataset.action, action === undefined ? 'unknown' : action === null ? 'nothing' : action, id);
    }
    $(panel, '#tp-tab-tasks').click();
    await frame();
    assert.equal($(panel, '#tp-tab-tasks').getAttribute('aria-selected'), 'true');
    // task-9 is only named by sess-x's event: the store holds no task-9.
    assert.deepEqual($$(panel, 'button.row').map((b) => b.dataset.id), ['task-1', 'task-2']);
    assert.equal(row(panel, 'task-1').querySelector('.l2').textContent, 'Waits for: your answer · Opens: sess-1 · Summary: held');
    assert.equal(store.pendingOwner('task-2'), undefined);
    assert.equal(row(panel, 'task-2').querySelector('.l2').textContent, 'Waits for: nothing · Opens: not known yet · Summary: held');
    assert.match(row(panel, 'task-1').querySelector('.l1').textContent, /task-1 · 3 sessions/);
    store.free();
  });

  test('the filter keeps the ids that contain its text', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store, { open: true });
    const input = $(panel, '[data-testid="filter"]');
    input.value = 'sess-';
    input.dispatchEvent(new win.Event('input'));
    await frame();
    assert.equal($(panel, '[data-testid="count"]').textContent, '4 of 4 sessions');
    input.value = '-3';
    input.dispatchEvent(new win.Event('input'));
    await frame();
    assert.deepEqual($$(panel, 'button.row').map((b) => b.dataset.id), ['sess-3']);
    assert.equal($(panel, '[data-testid="count"]').textContent, '1 of 4 sessions');
    input.value = 'zzz';
    input.dispatchEvent(new win.Event('input'));
    await frame();
    assert.equal($$(panel, 'button.row').length, 0);
    assert.match($(panel, '.empty').textContent, /No session id contains “zzz”/);
    store.free();
  });
});

describe('a row opened: the store\'s explanation in words', () => {
  /** Every code of an explanation (reasons, standings, details, inputs): none may be in the words. */
  function codesOf(e) {
    const codes = new Set();
    const walk = (v, key) => {
      if (Array.isArray(v)) v.forEach((x) => walk(x, key));
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
      else if (typeof v === 'string' && ['reason', 'standing', 'detail', 'input', 'missing', 'state'].includes(key)) codes.add(v);
    };
    walk(e);
    return [...codes].filter((c) => /[_.]/.test(c) || c === c.toUpperCase());
  }

  test('a session: current turn, every question\'s standing, what it waits for, the rejected inputs (explain)', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store, { open: true });
    row(panel, 'sess-1').click();
    await frame();
    const e = store.explain('sess-1');
    const detail = $(panel, '[data-testid="detail"]');
    assert.equal(detail.querySelector('h3').dataset.id, 'sess-1');
    assert.equal(row(panel, 'sess-1').getAttribute('aria-current'), 'true');
    const why = (id) => detail.querySelector(`[data-testid="${id}"]`);
    assert.equal(why('why-current-turn').dataset.reason, e.current_turn.reason);
    assert.equal(words(why('why-current-turn')), 'Turn turn-2 is current: an open turn comes before finished ones, however recent those are.');
    assert.deepEqual([...why('why-turns').children].map((li) => [li.dataset.turnId, li.dataset.standing]), e.turns.map((t) => [t.id, t.standing]));
    assert.equal(why('why-question').dataset.reason, e.clarification.reason);
    assert.equal(words(why('why-question')), 'Question: the open question of the current turn is shown.');
    assert.deepEqual([...why('why-requests').children].map((li) => [li.dataset.messageId, li.dataset.standing]), e.requests.map((r) => [r.id, r.standing]));
    assert.match(words(detail.querySelector('[data-standing="not_current_turn"]')), /Question q-old \(turn turn-1\): not shown: from an earlier turn, overtaken/);
    assert.equal(why('why-action').dataset.reason, e.pending_action.reason);
    // The rejected input: the late frame from before the restart.
    assert.equal(e.rejected.length, 1);
    assert.equal(why('why-rejected').dataset.count, String(e.rejected.length));
    const late = detail.querySelector('[data-testid="why-rejected-list"] li');
    assert.equal(late.dataset.reason, e.rejected[0].reason);
    assert.equal(words(late), 'A session update was older than what the page already had (from before the server restarted).');
    assert.match(late.querySelector('.details').textContent, /older_revision_rejected · older_epoch · revision epoch 1 · 9 < held epoch 2 · 3/);
    // The answers, each with whether it is known, and its reason in the details line.
    const answers = [...detail.querySelectorAll('[data-testid="answers"] dd')];
    assert.deepEqual(answers.map((dd) => [dd.dataset.answer, dd.dataset.known]), [['Waits for', 'true'], ['Question', 'true'], ['Current turn', 'true'], ['Permission', 'true']]);
    // Codes go to the details lines, not into the words.
    const text = words(detail);
    for (const code of codesOf(e)) assert.ok(!text.includes(code), `"${code}" in the words: ${text}`);
    assert.ok(codesOf(e).length >= 5);
    store.free();
  });

  test('a session whose answers are not known yet says what it waits for', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store);
    panel.open({ sessionId: 'sess-3' });
    await frame();
    const e = store.explain('sess-3');
    const detail = $(panel, '[data-testid="detail"]');
    assert.deepEqual(e.missing, ['awaiting_turn_list', 'awaiting_message_page']);
    assert.equal(words(detail.querySelector('[data-testid="why-missing"]')), 'Not known yet: the store waits for its turns, then a page of its messages.');
    const question = detail.querySelector('[data-answer="Question"]');
    assert.equal(question.dataset.known, 'false');
    assert.match(words(question), /^not known yet$/);
    assert.match(words(detail.querySelector('[data-testid="why-current-turn"]')), /^Which turn is current is not known yet: /);
    store.free();
  });

  test('a task: who a click opens and why, its sessions, what it waits for (explainOwner); links open a session', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store);
    panel.open({ taskId: 'task-1' });
    await frame();
    assert.equal($(panel, '#tp-tab-tasks').getAttribute('aria-selected'), 'true');
    const e = store.explainOwner('task-1');
    const detail = $(panel, '[data-testid="detail"]');
    assert.equal(detail.querySelector('h3').dataset.id, 'task-1');
    const owner = detail.querySelector('[data-testid="why-owner"]');
    assert.equal(owner.dataset.reason, e.owner.reason);
    assert.equal(words(owner), 'Clicking the task opens sess-1: it is the session that waits for you.');
    assert.deepEqual([...detail.querySelectorAll('[data-testid="why-session-list"] li')].map((li) => li.dataset.sessionId), e.sessions.map((s) => s.id));
    assert.equal(detail.querySelector('[data-testid="why-action"]').dataset.reason, e.pending_action.reason);
    assert.equal(detail.querySelector('[data-testid="why-rejected"]').dataset.count, String(e.rejected.length));
    const text = words(detail);
    for (const code of [e.owner.reason, e.pending_action.reason, ...e.sessions.map((s) => s.state)]) assert.ok(!text.includes(code), `"${code}" in the words`);
    // A task whose sessions have not loaded: its owner is not known yet.
    panel.open({ taskId: 'task-2' });
    await frame();
    assert.equal(store.explainOwner('task-2').owner.known, false);
    assert.match(words($(panel, '[data-testid="why-owner"]')), /^Which session a click opens is not known yet: the task’s sessions have not loaded yet\.$/);
    assert.equal($(panel, '[data-answer="Opens"]').dataset.known, 'false');
    // The owner's link opens the session.
    panel.open({ taskId: 'task-1' });
    await frame();
    $(panel, '[data-testid="why-owner"] button.link').click();
    await frame();
    assert.equal($(panel, '[data-testid="detail"] h3').dataset.id, 'sess-1');
    assert.equal($(panel, '#tp-tab-sessions').getAttribute('aria-selected'), 'true');
    store.free();
  });

  test('Escape closes the explanation, then the panel', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store, { open: true });
    row(panel, 'sess-2').click();
    await frame();
    const heading = $(panel, '[data-testid="detail"] h3');
    heading.focus();
    heading.dispatchEvent(new win.KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    await frame();
    assert.match($(panel, '[data-testid="detail"]').textContent, /^Choose a session or a task/);
    assert.ok(panel.isOpen());
    row(panel, 'sess-2').dispatchEvent(new win.KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    assert.equal(panel.isOpen(), false);
    assert.equal($(panel, '.panel').hidden, true);
    store.free();
  });
});

describe('looking changes nothing', () => {
  test('answers (and their identity), version, lastReason, lastApplyReason and digest are as before', async () => {
    const store = scenario(new ProjectionStore());
    // A query's reason as the app last left it, and an apply's.
    store.applySessionEvent({ session_id: 'sess-1', task_id: 'task-1', pending_action: null, pending_action_revision: { epoch: '1', sequence: 10 } });
    const answers = answersOf(store, SESSIONS, TASKS);
    assert.equal(store.pendingClarification('sess-3'), undefined);
    const before = { answers, version: store.version(), lastReason: store.lastReason(), lastApplyReason: store.lastApplyReason(), digest: store.digest() };
    assert.equal(before.lastReason, 'awaiting_turn_list');
    assert.equal(before.lastApplyReason, 'older_revision_rejected');
    const same = () => {
      assert.equal(store.lastReason(), before.lastReason);
      assert.equal(store.lastApplyReason(), before.lastApplyReason);
      assert.equal(store.version(), before.version);
      assert.equal(store.digest(), before.digest);
    };
    const panel = mount(store, { open: true });
    same();
    for (const id of ['sess-1', 'sess-2', 'sess-3', 'sess-x']) {
      row(panel, id).click();
      await frame();
      same();
    }
    $(panel, '#tp-tab-tasks').click();
    for (const id of ['task-1', 'task-2']) {
      row(panel, id).click();
      await frame();
      same();
    }
    await new Promise((r) => win.setTimeout(r, 1100)); // the panel's once-a-second refresh
    same();
    const after = answersOf(store, SESSIONS, TASKS);
    assert.deepEqual(after, before.answers);
    for (const key of Object.keys(after)) {
      after[key].forEach((answer, i) => assert.ok(Object.is(answer, before.answers[key][i]), `${key}[${i}] is the same object`));
    }
    // The hook itself: lastReason put back, even when `read` throws; a nested call is given the same ids.
    store.pendingOwner('task-2');
    const reason = store.lastReason();
    assert.throws(() => store[HOOK](() => {
      store.sessionPendingAction('sess-1');
      throw new Error('read failed');
    }), /read failed/);
    assert.equal(store.lastReason(), reason);
    store[HOOK]((outer) => store[HOOK]((inner) => assert.equal(inner, outer)));
    assert.equal(store.lastReason(), reason);
    assert.throws(() => store[HOOK](5), typed('invalid_type', 'read'));
    store.free();
  });

  test('the hook lists what the store holds: every id, and each session\'s task', () => {
    const store = scenario(new ProjectionStore());
    const held = store[HOOK]((h) => h);
    assert.deepEqual([...held.tasks].sort(), ['task-1', 'task-2']);
    const pairs = held.sessions.map((id, i) => [id, held.sessionTasks[i]]).sort();
    assert.deepEqual(pairs, [['sess-1', 'task-1'], ['sess-2', 'task-1'], ['sess-3', 'task-1'], ['sess-x', 'task-9']]);
    store.free();
  });
});

describe('rendering', () => {
  test('many changes in one turn: one render in the next frame; none while closed', async () => {
    const store = scenario(new ProjectionStore());
    // No once-a-second refresh here: the renders counted are the notifications'.
    let renders = 0;
    const hook = store[HOOK];
    store[HOOK] = function counted(read) {
      renders += 1;
      return hook.call(this, read);
    };
    const { setInterval } = win;
    win.setInterval = () => 0;
    const panel = mount(store, { open: true });
    win.setInterval = setInterval;
    await frame();
    renders = 0;
    for (let i = 0; i < 50; i++) {
      store.applySessionList(`task-${i + 10}`, [{ id: `new-${i}`, task_id: `task-${i + 10}`, state: 'RUNNING', pending_action: null, pending_action_revision: { epoch: '2', sequence: 1 } }]);
    }
    assert.equal(renders, 0, 'nothing before the frame');
    await frame();
    assert.equal(renders, 1, 'one render for 50 changes');
    assert.equal($(panel, '[data-testid="count"]').textContent, '54 sessions');
    panel.close();
    renders = 0;
    store.applySessionList('task-99', [{ id: 'late', task_id: 'task-99', state: 'RUNNING', pending_action: null, pending_action_revision: { epoch: '2', sequence: 1 } }]);
    await frame();
    assert.equal(renders, 0, 'a closed panel renders nothing');
    panel.open();
    assert.equal($(panel, '[data-testid="count"]').textContent, '55 sessions', 'opened: up to date');
    store.free();
  });

  test('a large store: only the rows in view are in the DOM; scrolling draws the others', async () => {
    const store = manySessions(new ProjectionStore(), 10_000);
    const t0 = performance.now();
    const panel = mount(store, { open: true });
    const opened = performance.now() - t0;
    assert.equal($(panel, '[data-testid="count"]').textContent, '10,000 sessions');
    const drawn = $$(panel, 'button.row');
    assert.ok(drawn.length > 0 && drawn.length < 60, `${drawn.length} rows in the DOM`);
    assert.equal($(panel, 'ul.rows').style.height, `${10_000 * 52}px`);
    const scroller = $(panel, '.scroller');
    scroller.scrollTop = 5000 * 52;
    scroller.dispatchEvent(new win.Event('scroll'));
    await frame();
    const ids = $$(panel, 'button.row').map((b) => b.dataset.id);
    assert.ok(ids.includes('bulk-sess-05000'), ids.join(', '));
    assert.ok($$(panel, 'button.row').length < 60);
    assert.equal(row(panel, 'bulk-sess-05000').closest('li').getAttribute('aria-posinset'), '5001');
    assert.equal(row(panel, 'bulk-sess-05000').closest('li').getAttribute('aria-setsize'), '10000');
    assert.equal(row(panel, 'bulk-sess-05000').dataset.action, 'permission');
    console.log(`# happy-dom: a 10,000-session store opened in ${opened.toFixed(0)} ms`);
    store.free();
  });
});

describe('the production build', () => {
  const stores = [['task-projection/fallback', FallbackStore]];
  if (BUILD === 'production') stores.push(['task-projection', DefaultStore]);
  for (const [entry, Store] of stores) {
    test(`${entry}: one line says the panel needs the development build; nothing throws`, async () => {
      const store = scenario(new Store());
      store.applyStreamPosition({ stream: 'st-1', offset: 12 });
      const reason = store.lastReason();
      const panel = mount(store);
      panel.open({ sessionId: 'sess-1' });
      await frame();
      const notice = $(panel, '.notice');
      assert.equal(notice.hidden, false);
      assert.match(notice.textContent, /needs the development build of task-projection: import "task-projection\/development"/);
      assert.equal($(panel, '.body').hidden, true, 'no list');
      assert.equal($$(panel, 'button.row').length, 0);
      assert.match($(panel, '[data-testid="stream"]').textContent, /at 12/, 'the stream position works in production');
      assert.equal(store.lastReason(), reason);
      await new Promise((r) => win.setTimeout(r, 1100));
      panel.unmount();
      store.free();
    });
  }
});

describe('bad arguments', () => {
  test('typed errors, nothing added to the page', () => {
    const store = new ProjectionStore();
    const element = doc.createElement('div');
    const count = () => doc.querySelectorAll('task-projection-devtools').length;
    const n = count();
    assert.throws(() => mountDevtools(null, element), typed('invalid_type', 'store'));
    assert.throws(() => mountFromDom({ subscribe() {}, version() {} }, element), typed('invalid_type', 'store'));
    assert.throws(() => mountDevtools(store, {}), typed('invalid_type', 'element'));
    assert.throws(() => mountDevtools(store, 'body'), typed('invalid_type', 'element'));
    assert.throws(() => mountDevtools(store, element, 5), typed('invalid_type', 'options'));
    assert.throws(() => mountDevtools(store, element, { connection: {} }), typed('invalid_type', 'options.connection'));
    assert.throws(() => mountDevtools(store, element, { inspectorUrl: 5 }), typed('invalid_type', 'options.inspectorUrl'));
    assert.throws(() => mountDevtools(store, element, { open: 'yes' }), typed('invalid_type', 'options.open'));
    assert.throws(() => mountDevtools(store, element, { record: 1 }), typed('invalid_type', 'options.record'));
    assert.equal(count(), n);
    const panel = mount(store);
    assert.throws(() => panel.open({ id: 'sess-1' }), typed('invalid_type', 'target'));
    assert.equal(mountFromDom, mountDevtools, 'one implementation');
    store.free();
  });

  test('a disposed store: the panel says so and throws nothing', async () => {
    const store = scenario(new ProjectionStore());
    const panel = mount(store, { open: true });
    store.free();
    panel.open({ sessionId: 'sess-1' });
    await frame();
    assert.match($(panel, '.notice').textContent, /The store was disposed/);
    panel.unmount();
  });
});

describe('connection and stream position', () => {
  test('connect()\'s state and the store\'s stream offset, followed as they change', async () => {
    const store = scenario(new ProjectionStore());
    const sockets = [];
    class FakeSocket {
      constructor(url) {
        this.url = url;
        sockets.push(this);
      }
      close() {}
    }
    const link = connect('ws://server/api/v1/ws', store, { refetch() {}, WebSocket: FakeSocket, random: () => 1, minDelayMs: 60_000 });
    // (Before the REST state is applied, where the store stands in the stream is not known.)
    const panel = mount(store, { connection: link, open: true });
    const connection = () => $(panel, '[data-testid="connection"] strong');
    assert.equal(connection().textContent, 'connecting…');
    assert.match($(panel, '[data-testid="stream"]').textContent, /position not known yet/);
    sockets[0].onopen({});
    await frame();
    assert.equal(connection().dataset.state, 'open');
    assert.equal(connection().textContent, 'open');
    sockets[0].onmessage({ data: JSON.stringify({ type: 'server.hello', payload: { epoch: '2', started_at: '2026-12-01T09:00:00Z', stream: 'st-1', offset: 40 } }) });
    store.applyStreamPosition({ stream: 'st-1', offset: 40 }); // the refetch's REST state
    sockets[0].onmessage({ data: JSON.stringify({ type: 'task.stalled', payload: { task_id: 'task-1' }, offset: 41 }) });
    // The offset moves without a store notification: the once-a-second refresh shows it.
    assert.ok(await until(() => /Event stream: at 41/.test(words($(panel, '[data-testid="stream"]')))), words($(panel, '[data-testid="stream"]')));
    assert.match($(panel, '[data-testid="stream"] .details').textContent, /stream "st-1" · offset 41/);
    sockets[0].onclose({ code: 1006 });
    await frame();
    assert.equal(connection().dataset.state, 'waiting');
    assert.equal(connection().textContent, 'closed, retrying soon');
    link.close();
    await frame();
    assert.equal(connection().textContent, 'closed');
    panel.unmount();
    store.free();
  });

  test('without a connection it says so', () => {
    const store = new ProjectionStore();
    const panel = mount(store, { open: true });
    assert.equal(words($(panel, '[data-testid="connection"]')), 'Connection: not given to the panel');
    store.free();
  });
});

describe('unmount', () => {
  test('lets go of the store subscription, the connection listener and the timers; removes the host', async () => {
    const store = scenario(new ProjectionStore());
    let storeListeners = 0;
    const subscribe = store.subscribe;
    store.subscribe = function counted(listener) {
      storeListeners += 1;
      const stop = subscribe.call(this, listener);
      let live = true;
      return () => {
        if (live) storeListeners -= 1;
        live = false;
        stop();
      };
    };
    let connectionListeners = 0;
    const connection = {
      state: () => 'open',
      subscribe: () => {
        connectionListeners += 1;
        return () => { connectionListeners -= 1; };
      },
    };
    const intervals = new Set();
    const { setInterval, clearInterval } = win;
    win.setInterval = (f, ms) => {
      const id = setInterval.call(win, f, ms);
      intervals.add(id);
      return id;
    };
    win.clearInterval = (id) => {
      intervals.delete(id);
      clearInterval.call(win, id);
    };
    try {
      const element = doc.createElement('div');
      doc.body.append(element);
      const panel = mountDevtools(store, element, { connection });
      assert.equal(element.querySelector('task-projection-devtools'), panel.host);
      assert.deepEqual([storeListeners, connectionListeners, intervals.size], [0, 0, 0], 'nothing while closed');
      panel.toggle();
      assert.deepEqual([storeListeners, connectionListeners, intervals.size], [1, 1, 1], 'open: one of each');
      panel.close();
      assert.deepEqual([storeListeners, connectionListeners, intervals.size], [0, 0, 0]);
      panel.open();
      panel.unmount();
      assert.deepEqual([storeListeners, connectionListeners, intervals.size], [0, 0, 0], 'unmounted: none');
      assert.equal(element.querySelector('task-projection-devtools'), null);
      panel.unmount(); // twice: no-op
      panel.open();
      assert.equal(panel.isOpen(), false, 'an unmounted panel stays closed');
      assert.equal(storeListeners, 0);
    } finally {
      win.setInterval = setInterval;
      win.clearInterval = clearInterval;
    }
    store.free();
  });
});

describe('isolation', () => {
  test('the panel lives in its own shadow root: no element or style of it in the page', () => {
    const store = scenario(new ProjectionStore());
    const styles = doc.querySelectorAll('style, link').length;
    const panel = mount(store, { open: true });
    assert.equal(panel.host.localName, 'task-projection-devtools');
    assert.ok(panel.host.shadowRoot, 'an open shadow root');
    assert.equal(doc.querySelectorAll('style, link').length, styles, 'no style added to the page');
    assert.equal(doc.querySelectorAll('.row, .panel, .toggle, [role="dialog"]').length, 0, 'nothing of the panel in the page\'s tree');
    // Its styles: one constructed stylesheet adopted by the shadow root (no <style> element, no
    // style attribute written as text: a CSP without 'unsafe-inline' for styles allows both).
    assert.equal(panel.host.shadowRoot.adoptedStyleSheets.length, 1);
    assert.ok(panel.host.shadowRoot.adoptedStyleSheets[0].cssRules.length > 10);
    assert.equal(panel.host.shadowRoot.querySelectorAll('style').length, 0);
    assert.match(panel.host.getAttribute('style'), /all: initial !important/);
    assert.equal(panel.host.children.length, 0);
    store.free();
  });
});

describe('recording', () => {
  test('without task-projection/trace: one line, no buttons', async () => {
    assert.equal(typeof globalThis[Symbol.for('task-projection.recorder.1')], 'undefined', 'this test runs before the import below');
    const store = scenario(new ProjectionStore());
    const panel = mount(store, { open: true, inspectorUrl: '/inspect/#live' });
    assert.equal(words($(panel, '[data-testid="recording"]')), "Recording needs import 'task-projection/trace' in the app.");
    assert.equal($(panel, '[data-testid="record"]').hidden, true);
    assert.equal($(panel, '[data-testid="open-inspector"]').hidden, true);
    // `record: true` without the recorder: the same line, nothing thrown, nothing recorded.
    const asked = mount(store, { open: true, record: true });
    assert.equal(words($(asked, '[data-testid="recording"]')), "Recording needs import 'task-projection/trace' in the app.");
    store.free();
  });

  test('record: true starts recording at mount: a fresh trace from the first input, stopped on unmount', async () => {
    const { replayTrace } = await import('task-projection/trace');
    const store = new ProjectionStore();
    const inspector = new BroadcastChannel('task-projection-trace');
    const received = [];
    inspector.onmessage = (event) => received.push(event.data);
    try {
      const panel = mount(store, { record: true, inspectorUrl: '/inspect/#live' });
      assert.equal(panel.isOpen(), false, 'recording, still closed');
      assert.throws(() => store.startRecording(), (e) => e.code === 'invalid_value', 'the store records already');
      scenario(store);
      inspector.postMessage({ type: 'attach' });
      assert.ok(await until(() => received.length >= 1), 'a closed panel answers the inspector too');
      const header = JSON.parse(received[0].text.split('\n')[0]);
      assert.equal(header.fresh, true, 'from the store\'s first input');
      const replay = replayTrace(received[0].text);
      assert.equal(replay.same, true);
      assert.equal(replay.steps[0].call, 'beginTaskFetch');
      panel.open();
      await frame();
      assert.equal(words($(panel, '[data-testid="recording"]')), 'Recording every input the store takes.');
      assert.equal($(panel, '[data-testid="record"]').textContent, 'Stop recording');
      assert.equal($(panel, '[data-testid="open-inspector"]').disabled, false);
      panel.unmount();
      assert.equal(store.stopRecording(), null, 'the panel\'s recording ends with it');
    } finally {
      inspector.close();
    }
    store.free();
  });

  test('start, stop, save a trace that replays; the inspector\'s channel; open in the inspector', async () => {
    const { replayTrace } = await import('task-projection/trace');
    const store = new ProjectionStore();
    const opened = [];
    win.open = (url, target) => opened.push([url, target]);
    const saved = [];
    win.URL.createObjectURL = (blob) => {
      saved.push(blob);
      return 'blob:trace';
    };
    win.URL.revokeObjectURL = () => {};
    const clicks = [];
    const click = win.HTMLAnchorElement.prototype.click;
    win.HTMLAnchorElement.prototype.click = function recorded() {
      clicks.push([this.getAttribute('href'), this.getAttribute('download')]);
    };
    const inspector = new BroadcastChannel('task-projection-trace');
    const received = [];
    inspector.onmessage = (event) => received.push(event.data);
    const steps = (text) => JSON.parse(text.split('\n')[0]).steps;
    try {
      const panel = mount(store, { open: true, inspectorUrl: '/inspect/#live' });
      const record = $(panel, '[data-testid="record"]');
      assert.equal(record.textContent, 'Start recording');
      assert.equal($(panel, '[data-testid="save-trace"]').disabled, true);
      assert.equal($(panel, '[data-testid="open-inspector"]').disabled, true);
      record.click(); // before the store's first input: a fresh trace
      assert.equal(record.textContent, 'Stop recording');
      assert.equal(record.getAttribute('aria-pressed'), 'true');
      scenario(store);
      // The inspector attaches and is sent the trace so far, then again after a change.
      inspector.postMessage({ type: 'attach' });
      assert.ok(await until(() => received.length >= 1));
      assert.equal(received.length, 1);
      assert.equal(received[0].type, 'trace');
      assert.match(received[0].source, /^devtools-/);
      const first = replayTrace(received[0].text);
      assert.equal(first.same, true);
      assert.deepEqual(first.steps.slice(0, 3).map((s) => s.call), ['beginTaskFetch', 'applyTaskSnapshot', 'applySessionList']);
      const n = steps(received[0].text);
      assert.ok(n >= 8, `${n} steps`);
      store.applyTurnList('sess-3', [{ id: 'turn-5', started_at: '2026-12-01T09:00:07Z', created_at: '2026-12-01T09:00:07Z', completed_at: null }]);
      assert.ok(await until(() => received.length >= 2), 'sent again after the change');
      await new Promise((r) => setTimeout(r, 300)); // (and once: one change, one trace)
      assert.equal(received.length, 2);
      assert.equal(steps(received[1].text), n + 1);
      assert.equal(replayTrace(received[1].text).same, true, 'the joined segments replay as one recording');
      $(panel, '[data-testid="open-inspector"]').click();
      assert.deepEqual(opened, [['/inspect/#live', '_blank']]);
      $(panel, '[data-testid="save-trace"]').click();
      assert.equal(clicks.length, 1);
      assert.equal(clicks[0][0], 'blob:trace');
      assert.match(clicks[0][1], /^task-projection-.*\.ndjson$/);
      assert.equal(steps(await saved[0].text()), n + 1, 'the trace so far; the recording goes on');
      store.applyMessagePage('sess-3', []);
      record.click(); // stop
      await frame();
      assert.equal(record.textContent, 'Start recording');
      assert.equal(words($(panel, '[data-testid="recording"]')), `Stopped: the trace holds ${n + 2} steps.`);
      assert.ok(await until(() => received.length >= 3), 'the stopped trace sent to the inspector');
      assert.equal(steps(received[2].text), n + 2);
      $(panel, '[data-testid="save-trace"]').click();
      const text = await saved.at(-1).text();
      assert.equal(saved.at(-1).type, 'application/x-ndjson');
      const replay = replayTrace(text);
      assert.equal(replay.same, true);
      assert.deepEqual(replay.steps.slice(-2).map((s) => s.call), ['applyTurnList', 'applyMessagePage']);
      assert.equal(store.stopRecording(), null, 'the panel\'s recording is stopped');
      // A store the app records already: the panel says so, and leaves that recording alone.
      store.startRecording();
      record.click();
      assert.match(words($(panel, '[data-testid="recording"]')), /The store is recording already/);
      assert.notEqual(store.stopRecording(), null, 'the app\'s recording untouched');
      panel.unmount();
    } finally {
      inspector.close();
      win.HTMLAnchorElement.prototype.click = click;
    }
    store.free();
  });
});

describe('<ProjectionDevtools /> (task-projection/devtools, React)', () => {
  const { createElement: h, StrictMode, act } = React;

  test('under a provider (StrictMode): one panel on document.body; gone on unmount', async () => {
    const store = scenario(new ProjectionStore());
    const container = doc.createElement('div');
    doc.body.append(container);
    const root = createRoot(container);
    await act(async () => {
      root.render(h(StrictMode, null, h(ProjectionStoreProvider, { store }, h('p', null, 'app'), h(ProjectionDevtools, { defaultOpen: true }))));
    });
    const hosts = doc.body.querySelectorAll(':scope > task-projection-devtools');
    assert.equal(hosts.length, 1, 'one panel after StrictMode\'s double mount');
    assert.equal(container.querySelector('task-projection-devtools'), null, 'rendered nothing in place');
    const shadow = hosts[0].shadowRoot;
    assert.equal(shadow.querySelector('.panel').hidden, false, 'defaultOpen');
    assert.equal(shadow.querySelectorAll('button.row').length, 4);
    await act(async () => root.unmount());
    assert.equal(doc.body.querySelectorAll(':scope > task-projection-devtools').length, 0);
    store.free();
  });

  test('the store prop, without a provider; without either a typed error', async () => {
    const store = scenario(new ProjectionStore());
    const container = doc.createElement('div');
    const root = createRoot(container);
    await act(async () => root.render(h(ProjectionDevtools, { store })));
    assert.equal(doc.body.querySelectorAll(':scope > task-projection-devtools').length, 1);
    await act(async () => root.unmount());
    assert.equal(doc.body.querySelectorAll(':scope > task-projection-devtools').length, 0);
    const errors = [];
    class Boundary extends React.Component {
      constructor(props) {
        super(props);
        this.state = { error: null };
      }
      static getDerivedStateFromError(error) {
        return { error };
      }
      componentDidCatch(error) {
        errors.push(error);
      }
      render() {
        return this.state.error ? null : this.props.children;
      }
    }
    const bare = createRoot(doc.createElement('div'), { onCaughtError: () => {} });
    await act(async () => bare.render(h(Boundary, null, h(ProjectionDevtools))));
    assert.equal(errors.length, 1);
    assert.ok(typed('invalid_type', 'store')(errors[0]), String(errors[0]));
    await act(async () => bare.unmount());
    store.free();
  });
});
