// End-to-end: the demo page (www/dist) against the real reference server (docs/server-api.md).
// Every scenario is played by clicking the page's own controls (its "Play the agent" panel, which
// calls the server's simulator); the tests drive nothing through the simulator themselves, they
// read REST state (and, for the replay, listen on a WebSocket of their own) to check what the page
// shows. Each test starts its own server on a throwaway SQLite file (`--port 0 --simulator`);
// the scenarios run at 1280×800 and at 390×844. Why the page shows what it shows is the package's
// devtools panel (its shadow root; Playwright's locators pierce it), checked against the store's
// own explain() / explainOwner(). Screenshots: tests/artifacts/e2e/*.png.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  answerPermission, assertBadgesWhole, assertNoOverflow, assertPanelControlsWhole, assertPlainWords, browserSuite, closePanel, connectFrames, connectionLine, devtools,
  eventually, newTaskOpened, openDemo, overlay, pageState, play, route, screenshot, sendPrompt, sessionTab, taskItem, why, assertWhyMatches, ARTIFACTS,
} from './harness.mjs';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const VIEWPORTS = [['desktop', DESKTOP], ['phone 390x844', PHONE]];

// A server and a browser context per test, both torn down after it, pass or fail.
const { setup, cleanups } = browserSuite();

/** The demo page with its "Play the agent" panel (the server has the simulator). */
async function openPlayable(context, url, hash = '') {
  const demo = await openDemo(context, url, hash);
  await demo.page.getByTestId('sim-panel').waitFor({ state: 'visible' });
  return demo;
}

/** Back to the task list: the phone's back button, or the header's link. */
async function toList(page) {
  if (await page.getByTestId('back').isVisible()) await page.getByTestId('back').click();
  else await page.getByRole('link', { name: 'task-projection' }).click();
}

/** Opens the task's pending owner via a click on the task (the selection machine). */
async function clickTask(page, taskId) {
  if (await page.getByTestId('back').isVisible()) await page.getByTestId('back').click();
  await taskItem(page, taskId).click();
}

/** "New task": a task whose main session is working; the page opens that session. */
async function newTask(page) {
  await play(page, 'new-task');
  return newTaskOpened(page);
}

/** The open question's dialog, once it is there. */
async function question(page, count = 1) {
  return eventually(async () => {
    const { overlay: shown } = await pageState(page);
    assert.ok(shown, 'a question is shown');
    assert.equal(shown.questions.length, count);
    return shown;
  }, { message: 'the question appears' });
}

/** The question is on screen (the page scrolled to it: on a phone it sits below the transcript). */
async function assertQuestionInView(page, viewport) {
  await eventually(async () => {
    const box = await overlay(page).boundingBox();
    assert.ok(box, 'the question has a box');
    assert.ok(box.y >= 0 && box.y < viewport.height - 120, `question at y=${Math.round(box.y)} of a ${viewport.height}px viewport`);
  }, { message: 'the page scrolls to the question' });
}

/** The agent panel's buttons: the agent's and the server's actions only (what you do is in the session). */
const AGENT_AND_SERVER = [
  'New task', 'Reset demo data', 'Ask a question', 'Ask three questions', 'Record a bookkeeping turn',
  'Add a reviewer who asks', 'Detach the agent', 'Ask for a permission', 'Restart the server', 'Replay old messages',
];

for (const [label, viewport] of VIEWPORTS) {
  test(`the landing page says what the engine decides; the agent panel holds only the agent's and the server's actions (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    await play(page, 'reset');
    await eventually(async () => assert.equal(Object.keys((await pageState(page)).tasks).length, 3), { message: 'the demo tasks' });

    // Two sentences, on screen before anything is clicked, above the task list: what is decided
    // (the live question, the session to open) and what late, repeated or reordered updates never do.
    const intro = page.getByTestId('intro');
    const text = (await intro.innerText()).replace(/\s+/g, ' ').trim();
    assert.equal(text.match(/[.!?](\s|$)/g)?.length, 2, `two sentences: ${text}`);
    for (const words of [/question/, /live/, /waits for your answer/, /which of a task's sessions to open/, /late, twice or out of order/,
      /overtaken/, /nothing needs you while something does/]) {
      assert.match(text, words);
    }
    const box = await intro.boundingBox();
    const list = await page.getByTestId('task-list').boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width && box.y + box.height <= viewport.height, `the sentences are in view: ${JSON.stringify(box)}`);
    assert.ok(list && box.y + box.height <= list.y, 'above the task list');
    assert.equal(await page.getByTestId('sim-panel').isVisible(), true);
    await assertPlainWords(page);
    if (viewport === PHONE) await assertNoOverflow(page);
    await screenshot(page, `landing-${viewport.width}`);

    // The agent panel: the agent's and the server's actions, none of yours (Approve, Deny,
    // Submit, Skip are in the session). "Open a second tab" is a link, for the two-tab scenario.
    const buttons = await page.getByTestId('sim-panel').locator('button').evaluateAll((bs) => bs.map((b) => b.textContent.replace(/ \(\d+\)$/, '')));
    assert.deepEqual([...new Set(buttons)].sort(), [...AGENT_AND_SERVER].sort());
    assert.equal(await page.getByTestId('sim-panel').locator('[data-action="approve"], [data-action="deny"]').count(), 0);

    // A task opened: the sentences leave the way for the task (they are the landing page's).
    const [deploy] = (await server.get('/api/v1/tasks')).tasks;
    await taskItem(page, deploy.id).click();
    await page.getByTestId('permission-banner').waitFor({ state: 'visible' });
    assert.equal(await intro.isVisible(), false);
    // The permission is answered in the session (its banner): Approve and Deny are there.
    const banner = page.getByTestId('permission-banner');
    assert.deepEqual(await banner.getByRole('button').allTextContents(), ['Approve', 'Deny']);
    await toList(page);
    await intro.waitFor({ state: 'visible' });
    assert.deepEqual(problems, []);
  });

  test(`the devtools panel explains the session that waits (keyboard, the session's Why?); looking changes nothing; Open in inspector attaches (${label})`, async () => {
    const { server, context } = await setup(viewport);
    // `?record`: the panel records from the page's first input, so the inspector has a trace.
    const { page, problems } = await openPlayable(context, server.url, '?record');
    const { taskId, sessionId } = await newTask(page);
    await play(page, 'ask', 'question');
    const asked = await question(page);
    await eventually(async () => assert.equal((await pageState(page)).sessionPending, 'clarification'));

    // What the store answers before anyone looks (the objects kept, to compare identities).
    const look = () => page.evaluate(({ t, s }) => {
      const store = window.demo.store;
      const lastReason = store.lastReason(); // first: the queries below set it
      const answers = {
        action: store.sessionPendingAction(s), question: store.pendingClarification(s), turn: store.currentTurnId(s),
        permission: store.hasPendingPermission(s), hidden: store.hiddenMessageIds(s), task: store.taskPendingAction(t), owner: store.pendingOwner(t),
        summary: store.taskStatusSummary(t),
      };
      const before = window.__answers;
      window.__answers = answers;
      return {
        version: store.version(), lastReason, json: JSON.stringify(answers),
        same: before ? Object.keys(answers).filter((k) => answers[k] !== before[k]) : null,
        // What these queries left as the last reason (what the next look should find).
        leftReason: store.lastReason(),
      };
    }, { t: taskId, s: sessionId });
    const before = await look();

    // Keyboard: Tab to the panel's toggle (the page's last control), Enter opens it.
    assert.equal(await devtools(page, '.panel').isVisible(), false, 'closed at first');
    const focusedInPanel = () => page.evaluate(() => {
      const host = document.activeElement;
      if (host?.localName !== 'task-projection-devtools') return null;
      const el = host.shadowRoot.activeElement;
      return el ? { cls: el.className, testid: el.dataset.testid ?? '', id: el.dataset.id ?? el.id ?? '', action: el.dataset.action ?? '', tag: el.localName } : null;
    });
    await page.evaluate(() => document.activeElement?.blur());
    let tabs = 0;
    while ((await focusedInPanel())?.cls !== 'toggle') {
      assert.ok(++tabs < 150, 'Tab reaches the panel\'s toggle');
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await devtools(page, '.panel').waitFor();
    assert.equal(await page.evaluate(() => window.demo.devtools.isOpen()), true);
    assert.deepEqual(await focusedInPanel().then((f) => f.id), 'tp-tab-sessions', 'the focus in the panel: its Sessions tab');
    // The list, by keyboard: to the first row, then down to the session that waits for an answer.
    await page.keyboard.press('Tab'); // the filter
    await page.keyboard.press('Tab'); // the first row
    for (let i = 0; (await focusedInPanel()).action !== 'clarification'; i++) {
      assert.ok(i < 20, 'a row waits for an answer');
      await page.keyboard.press('ArrowDown');
    }
    assert.equal((await focusedInPanel()).id, sessionId, 'the row of the session that waits is the page\'s session');
    await page.keyboard.press('Enter');
    assert.deepEqual(await focusedInPanel().then((f) => [f.tag, f.id]), ['h3', sessionId], 'its explanation, focused');

    // The panel says where the store stands in the server's event stream: the page hands the
    // store the position its REST read stood at (GET /tasks), and frames move it on.
    const position = await page.evaluate(() => window.demo.store.streamPosition());
    assert.ok(position && typeof position.offset === 'number', `the store knows its stream position: ${JSON.stringify(position)}`);
    assert.match(await devtools(page, '[data-testid="stream"]').innerText(), /^Event stream: at [\d,]+/);

    // The explanation's words are the store's explain(sessionId).
    const explain = await page.evaluate((s) => window.demo.store.explain(s), sessionId);
    const shown = await page.evaluate(() => {
      const root = document.querySelector('task-projection-devtools').shadowRoot.querySelector('[data-testid="detail"]');
      const words = (el) => {
        if (!el) return null;
        const copy = el.cloneNode(true);
        for (const d of copy.querySelectorAll('.details')) d.remove();
        return copy.textContent;
      };
      const h3 = root.querySelector('h3');
      return {
        heading: h3 ? { kind: h3.dataset.kind, id: h3.dataset.id } : null,
        answers: Object.fromEntries([...root.querySelectorAll('[data-answer]')].map((dd) => [dd.dataset.answer, words(dd)])),
        currentTurn: root.querySelector('[data-testid="why-current-turn"]')?.dataset.reason ?? null,
        question: root.querySelector('[data-testid="why-question"]')?.dataset.reason ?? null,
        turns: [...root.querySelectorAll('[data-testid="why-turns"] li')].map((e) => [e.dataset.turnId, e.dataset.standing]),
        requests: [...root.querySelectorAll('[data-testid="why-requests"] li')].map((e) => [e.dataset.messageId, e.dataset.standing]),
        rejected: [...root.querySelectorAll('[data-testid="why-rejected-list"] li')].map((e) => [e.dataset.input, e.dataset.reason]),
        rejectedCount: Number(root.querySelector('[data-testid="why-rejected"]')?.dataset.count ?? NaN),
        questionText: words(root.querySelector('[data-testid="why-question"]')),
        rejectedText: words(root.querySelector('[data-testid="why-rejected"]')),
        text: words(root),
      };
    });
    assert.equal(explain.pending_action.value, 'clarification');
    assert.equal(explain.clarification.pending_id, asked.pendingId);
    assertWhyMatches({ explain, explainOwner: null, shown });
    assert.equal(shown.answers['Waits for'], 'your answer');
    assert.equal(shown.answers['Current turn'], explain.current_turn.id, 'the current turn');
    assert.equal(shown.answers.Question, '1 question shown', 'the question shown');
    assert.equal(shown.answers.Permission, 'none waits');
    assert.equal(shown.questionText, 'Question: the open question of the current turn is shown.');
    assert.equal(shown.rejectedCount, explain.rejected.length, 'the rejected inputs the store lists');
    assert.equal(shown.rejectedText, `Late updates ignored: ${explain.rejected.length || 'none'}.`);
    await assertPlainWords(page); // the open panel too, outside its details lines

    // At 1280×800 and 390×844: the panel inside the viewport, nothing wider than it.
    const layout = await page.evaluate(() => {
      const root = document.querySelector('task-projection-devtools').shadowRoot;
      const box = (el) => {
        const r = el.getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, visible: el.getClientRects().length > 0 };
      };
      const over = (el) => el.scrollWidth - el.clientWidth;
      return {
        panel: box(root.querySelector('.panel')), list: box(root.querySelector('.list-pane')), detail: box(root.querySelector('.detail')),
        overflow: { panel: over(root.querySelector('.panel')), detail: over(root.querySelector('.detail')), body: over(root.querySelector('[data-testid="detail"]')) },
        view: { width: innerWidth, height: innerHeight },
      };
    });
    const inside = (b) => b.left >= -0.5 && b.right <= layout.view.width + 0.5 && b.top >= -0.5 && b.bottom <= layout.view.height + 0.5;
    assert.ok(inside(layout.panel), `the panel inside the viewport: ${JSON.stringify(layout)}`);
    assert.ok(inside(layout.detail), `the explanation inside the viewport: ${JSON.stringify(layout)}`);
    for (const [what, px] of Object.entries(layout.overflow)) assert.ok(px <= 0, `${what}: ${px}px wider than its box`);
    if (viewport === PHONE) {
      assert.equal(Math.round(layout.panel.width), PHONE.width, 'a full-width sheet');
      assert.equal(layout.list.visible, false, 'the explanation in place of the list');
    }
    await assertNoOverflow(page);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `devtools-panel-${viewport.width}.png`) });

    // Escape: back to the row; Escape again: closed, the focus back on the toggle.
    await page.keyboard.press('Escape');
    assert.equal((await focusedInPanel()).id, sessionId, 'Escape: back on the row');
    await page.keyboard.press('Escape');
    await devtools(page, '.panel').waitFor({ state: 'hidden' });
    assert.equal(await page.evaluate(() => window.demo.devtools.isOpen()), false);
    assert.equal((await focusedInPanel())?.cls, 'toggle', 'the focus back on the toggle');

    // The session's "Why?" opens the panel on it at once.
    await page.getByTestId('why-button').click();
    await devtools(page, `h3[data-kind="session"][data-id="${sessionId}"]`).waitFor();
    assert.deepEqual(await focusedInPanel().then((f) => [f.tag, f.id]), ['h3', sessionId]);
    assert.deepEqual(await devtools(page, '[data-answer="Waits for"]').evaluate((dd) => dd.firstChild.textContent), 'your answer');
    await closePanel(page);

    // Looking changed nothing: the version, the last reason, every answer (the same objects).
    const after = await look();
    assert.equal(after.version, before.version, 'store.version()');
    assert.equal(after.lastReason, before.leftReason, 'store.lastReason(): as the test\'s own queries left it');
    assert.equal(after.json, before.json);
    assert.deepEqual(after.same, [], 'every answer the same object as before');

    // "Open in inspector": the inspector (/inspect/) opens, attaches to this page's recording and
    // shows its trace, the question included.
    await page.getByTestId('why-button').click();
    await devtools(page, '[data-testid="recording"]').filter({ hasText: 'Recording every input the store takes.' }).waitFor();
    const [inspector] = await Promise.all([context.waitForEvent('page'), devtools(page, '[data-testid="open-inspector"]').click()]);
    await inspector.locator('body[data-ready="true"]').waitFor();
    assert.equal(new URL(inspector.url()).pathname, '/inspect/');
    await eventually(async () => assert.equal(await inspector.getByTestId('live-status').getAttribute('data-state'), 'attached'), { message: 'the inspector attaches' });
    const summary = inspector.getByTestId('trace-summary');
    await eventually(async () => {
      assert.ok(Number(await summary.getAttribute('data-steps')) > 0);
      assert.equal(await summary.getAttribute('data-complete'), 'true');
      assert.equal(await summary.getAttribute('data-same'), 'true');
      const card = await inspector.locator(`[data-testid="answers-session"][data-id="${sessionId}"]`).getAttribute('data-answers');
      assert.equal(JSON.parse(card).clarification?.pending_id, asked.pendingId);
    }, { message: 'the trace reaches the inspector' });
    await assertNoOverflow(inspector);
    await inspector.screenshot({ path: path.join(ARTIFACTS, `devtools-inspector-${viewport.width}.png`) });
    await inspector.close();
    assert.deepEqual(problems, []);
  });

  test(`every badge is whole, inside its tab and the viewport; a session's state shows once (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    await play(page, 'reset');
    const tasks = await eventually(async () => {
      const { tasks: list } = await server.get('/api/v1/tasks');
      assert.equal(list.length, 3);
      assert.deepEqual(Object.values((await pageState(page)).tasks), ['permission', 'clarification', 'clarification']);
      return list;
    }, { message: 'the demo tasks' });
    assert.equal(await assertBadgesWhole(page), 3, 'the task list\'s three badges');
    assert.deepEqual((await assertPanelControlsWhole(page)).map((c) => c.text), ['Projection'], 'the devtools panel\'s toggle');

    // Each demo task opened by a click (its pending owner): the tab's badge is whole, and the
    // session's state ("Waiting for your answer / permission") is said once, in its status line.
    for (const task of tasks) {
      await clickTask(page, task.id);
      const pending = await eventually(async () => {
        const s = await pageState(page);
        const r = await route(page);
        assert.equal(r.taskId, task.id);
        assert.equal(s.session, r.sessionId);
        assert.ok(s.session && s.sessionPending !== 'none', `a waiting session opened: ${JSON.stringify(s)}`);
        assert.equal(s.tabs[s.session], s.sessionPending);
        return s.sessionPending;
      }, { message: `${task.title} opens` });
      const badges = await assertBadgesWhole(page);
      assert.ok(badges >= 1, `${task.title}: its tab's badge (${badges})`);
      assert.deepEqual((await assertPanelControlsWhole(page)).map((c) => c.text), ['Projection', 'Why?'], 'the panel\'s toggle and the session\'s Why?');
      const words = pending === 'permission' ? 'Waiting for your permission' : 'Waiting for your answer';
      const main = await page.locator('main').innerText();
      assert.equal(main.split(words).length - 1, 1, `"${words}" once in:\n${main}`);
      assert.equal(await page.getByTestId('session-state').innerText(), words);
      await assertPlainWords(page);
      await screenshot(page, `badges-${task.title.toLowerCase().replace(/\W+/g, '-')}-${viewport.width}`);
    }

    // More sessions than a row of tabs holds: two more reviewers ask in the open task. Every tab
    // and its badge stay whole and on screen (the tabs wrap; they scrolled away before).
    await play(page, 'add-reviewer', 'secondary');
    await play(page, 'add-reviewer', 'secondary');
    await eventually(async () => {
      const { tabs } = await pageState(page);
      assert.ok(Object.keys(tabs).length >= 3, JSON.stringify(tabs));
      assert.ok(Object.values(tabs).filter((p) => p !== 'none').length >= 3, JSON.stringify(tabs));
    }, { message: 'the reviewers ask' });
    assert.ok(await assertBadgesWhole(page) >= 3);
    assert.equal((await assertPanelControlsWhole(page)).length, 2);
    const tabsInView = await page.locator('[role="tab"]').evaluateAll((tabs) => tabs.every((t) => {
      const r = t.getBoundingClientRect();
      return r.left >= 0 && r.right <= window.innerWidth && t.scrollWidth <= t.clientWidth;
    }));
    assert.ok(tabsInView, 'every tab inside the viewport, its text not cut');
    if (viewport === PHONE) await assertNoOverflow(page);
    await screenshot(page, `badges-many-sessions-${viewport.width}`);
    assert.deepEqual(problems, []);
  });

  test(`a question overtaken by a new turn never comes back: skip, later turns, reload (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    const { taskId, sessionId } = await newTask(page);

    // The agent asks; the user starts a new turn instead of answering: the question is history.
    await play(page, 'ask', 'superseded');
    const old = await question(page);
    if (viewport === PHONE) await assertQuestionInView(page, viewport);
    await sendPrompt(page);
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.deepEqual(s.history.map((q) => [q.text, q.status, q.shown]), [[old.questions[0], 'pending', 'No longer answerable']]);
      assert.equal(s.tasks[taskId], 'none');
    }, { message: 'the overtaken question is history' });

    // The new turn asks: only its question is answerable; the old one stays inert history.
    await play(page, 'ask', 'superseded');
    const fresh = await question(page);
    assert.notEqual(fresh.pendingId, old.pendingId);
    await eventually(async () => {
      const s = await pageState(page);
      assert.deepEqual(s.history.map((q) => q.text), [old.questions[0]]);
      assert.equal(s.answerFields, 1, 'only the current question has an answer field');
      assert.equal(s.tasks[taskId], 'clarification');
    });
    // Why: the store says the new question is the bundle of the current turn and the old one is
    // from an overtaken turn; the panel says the same in words.
    await eventually(async () => {
      const w = await why(page);
      assert.equal(w.explain.clarification.reason, 'active_bundle');
      assert.equal(w.explain.clarification.pending_id, fresh.pendingId);
      const standing = Object.fromEntries(w.explain.requests.map((r) => [r.pending_id, r.standing]));
      assert.equal(standing[fresh.pendingId], 'in_bundle');
      assert.equal(standing[old.pendingId], 'not_current_turn');
      assert.equal(w.explain.turns.filter((t) => t.standing === 'current').length, 1);
      assert.equal(w.explain.turns[0].standing, 'current');
      assertWhyMatches(w);
      assert.match(w.shown.text, /from an earlier turn, overtaken/);
    }, { message: 'the devtools panel explains the overtaken question' });

    // Skip it. The agent continues and completes its turn: the older pending question must not
    // resurface (a legacy "last pending question" scan would bring it back).
    await overlay(page).getByRole('button', { name: 'Skip' }).click();
    const clear = async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null, 'no question overlay');
      assert.equal(s.answerFields, 0);
      assert.equal(s.tasks[taskId], 'none');
      assert.equal(s.sessionPending, 'none');
      assert.deepEqual(s.history.map((q) => [q.text, q.status, q.shown]), [
        [old.questions[0], 'pending', 'No longer answerable'],
        [fresh.questions[0], 'rejected', 'Skipped'],
      ]);
    };
    await eventually(async () => {
      await clear();
      assert.equal((await pageState(page)).sessionWords, 'Idle', 'the agent completed its turn after the skip');
      assert.equal(await page.getByTestId('message').filter({ hasText: 'Questions skipped; continuing with my best guess.' }).count(), 1);
    }, { message: 'after Skip' });

    // The server agrees: the overtaken bundle is a conflict, nothing to answer.
    const late = await server.post(`/api/v1/clarification/${old.pendingId}/respond`, { answers: [{ question_id: 'q1', answer: 'yes' }] });
    assert.equal(late.status, 409, JSON.stringify(late.body));

    // A later turn runs: still nothing re-arms.
    await sendPrompt(page);
    await eventually(async () => assert.equal((await pageState(page)).sessionWords, 'Working'));
    await clear();
    await assertPlainWords(page);

    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    await eventually(async () => {
      assert.equal((await pageState(page)).session, sessionId, 'the reload reopens the same session');
      await clear();
    }, { message: 'after reload' });
    await screenshot(page, `superseded-question-after-reload-${viewport.width}`);
    assert.deepEqual(problems, []);
  });

  test(`a bookkeeping (lifecycle) turn never takes the question's place (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    const { sessionId } = await newTask(page);
    await play(page, 'ask', 'lifecycle');
    const asked = await question(page);
    const turnsBefore = (await server.get(`/api/v1/task-sessions/${sessionId}/turns`)).turns.length;
    await play(page, 'lifecycle-turn', 'lifecycle');
    await eventually(async () => {
      const turns = (await server.get(`/api/v1/task-sessions/${sessionId}/turns`)).turns;
      assert.equal(turns.length, turnsBefore + 1);
      assert.equal(turns.at(-1).metadata?.lifecycle_only, true, 'the newest turn is a lifecycle record');
      const w = await why(page);
      const lifecycle = w.explain.turns.filter((t) => t.standing === 'lifecycle_skipped');
      assert.deepEqual(lifecycle.map((t) => t.id), [turns.at(-1).id]);
      assert.equal(w.explain.clarification.pending_id, asked.pendingId, 'the question stays current');
      assert.equal(w.explain.turns[0].standing, 'current');
      assertWhyMatches(w);
      assert.match(w.shown.text, /skipped: a bookkeeping record, never current/);
    }, { message: 'the lifecycle turn is skipped' });
    assert.equal((await pageState(page)).overlay?.pendingId, asked.pendingId, 'the question is still on screen');
    await assertPlainWords(page);
    await screenshot(page, `lifecycle-turn-skipped-${viewport.width}`);
    assert.deepEqual(problems, []);
  });

  test(`clicking a task opens the secondary session that owns its only question (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    // A clean task: the page opens its main session (and remembers it).
    const { taskId, sessionId: primary } = await newTask(page);

    await play(page, 'add-reviewer', 'secondary');
    const secondary = await eventually(async () => {
      const s = await pageState(page);
      const others = Object.keys(s.tabs).filter((id) => id !== primary);
      assert.equal(others.length, 1, 'a reviewer tab');
      assert.equal(s.tabs[others[0]], 'clarification');
      assert.equal(s.tabs[primary], 'none');
      assert.equal(s.session, primary, 'the page stays where it was');
      return others[0];
    }, { message: 'the reviewer asks' });
    await page.getByTestId('owner-hint').waitFor();

    await toList(page);
    await eventually(async () => assert.equal(await taskItem(page, taskId).getAttribute('data-pending'), 'clarification'));
    await taskItem(page, taskId).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.session, secondary, 'the question owner, not the remembered main session');
      assert.equal(await sessionTab(page, secondary).getAttribute('aria-selected'), 'true');
      assert.deepEqual(s.overlay?.questions, ['Mention the breaking change in the notes?', 'Link the migration guide?']);
    });
    await overlay(page).getByLabel('Mention the breaking change in the notes?').waitFor();
    if (viewport === PHONE) {
      await assertNoOverflow(page);
      await assertQuestionInView(page, viewport);
    }
    await assertPlainWords(page);
    await screenshot(page, `secondary-owner-${viewport.width}`);
    await eventually(async () => {
      const w = await why(page, { task: true });
      assert.deepEqual(w.explainOwner.owner, { session_id: secondary, known: true, reason: 'pending_owner' });
      assert.equal(w.explainOwner.pending_action.value, 'clarification');
      assert.deepEqual(w.explainOwner.sessions.map((x) => [x.id, x.pending_action]).sort(), [[primary, null], [secondary, 'clarification']].sort());
      assertWhyMatches(w);
      assert.match(w.shown.text, /it is the session that waits for you/);
    }, { message: 'the devtools panel explains the owner' });
    assert.deepEqual(problems, []);
  });

  test(`a detached question stays answerable and the answer resumes the session (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    const { taskId, sessionId } = await newTask(page);
    await play(page, 'ask', 'detached');
    const asked = await question(page);
    await play(page, 'detach', 'detached');
    await eventually(async () => {
      const rows = (await server.get(`/api/v1/task-sessions/${sessionId}/messages`)).messages;
      assert.equal(rows.find((m) => m.type === 'clarification_request')?.metadata.agent_disconnected, true, 'detached');
      assert.equal((await pageState(page)).overlay?.pendingId, asked.pendingId, 'still answerable');
    });

    await overlay(page).getByLabel(asked.questions[0]).fill('No, tonight at 22:00');
    await overlay(page).getByRole('button', { name: 'Submit' }).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => [q.status, q.shown]), [['answered', 'answer: No, tonight at 22:00']], 'your answer under the question');
    });
    // Resumed: the agent runs a successor turn that starts with the answer (as text, not the
    // respond body's JSON), continues, then completes it.
    await eventually(async () => {
      const turns = (await server.get(`/api/v1/task-sessions/${sessionId}/turns`)).turns;
      assert.equal(turns.length, 2, 'a successor turn');
      // The interrupted turn was closed before the successor ran, and the successor completed:
      // nothing is left open, so the session rests (not stuck working on the old turn).
      assert.ok(turns.every((t) => t.completed_at), 'both turns completed');
      const session = (await server.get(`/api/v1/tasks/${taskId}/task-sessions`)).sessions.find((x) => x.id === sessionId);
      assert.equal(session.state, 'IDLE');
      const resumed = page.getByTestId('message').filter({ hasText: 'Your answer (the agent resumed with it)' });
      assert.equal(await resumed.count(), 1);
      assert.equal(await resumed.locator('p').textContent(), 'No, tonight at 22:00');
      assert.equal(await page.getByTestId('message').filter({ hasText: 'Thanks, continuing with your answers.' }).count(), 1);
      const s = await pageState(page);
      assert.equal(s.sessionPending, 'none');
      assert.equal(s.sessionWords, 'Idle');
    }, { message: 'the answer resumes the session' });
    await assertPlainWords(page);
    await screenshot(page, `detached-question-answered-${viewport.width}`);

    // The notice belongs to the session the answer was given in: another task's session does not
    // show it (it did: "Answer delivered." appeared in whatever session was open next).
    assert.equal((await page.getByTestId('respond-notice').innerText()).trim(), 'Answer delivered.');
    const other = await newTask(page);
    assert.notEqual(other.taskId, taskId);
    assert.equal(await page.getByTestId('respond-notice').count(), 0, 'no notice from another session');
    await clickTask(page, taskId);
    await eventually(async () => assert.equal((await pageState(page)).session, sessionId));
    assert.equal((await page.getByTestId('respond-notice').innerText()).trim(), 'Answer delivered.', 'still shown where it was given');
    assert.deepEqual(problems, []);
  });

  test(`a server restart's new epoch wins over replayed old-epoch frames (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    const { taskId, sessionId } = await newTask(page);
    const epoch1 = (await server.get('/healthz')).epoch;
    await eventually(async () => assert.equal((await pageState(page)).epoch, epoch1));
    await play(page, 'ask', 'question');
    const asked = await question(page);

    await play(page, 'restart', 'restart');
    const epoch2 = (await server.get('/healthz')).epoch;
    assert.ok(BigInt(epoch2) > BigInt(epoch1), `epoch ${epoch1} -> ${epoch2}`);
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.epoch, epoch2, 'the page saw the new server.hello');
      // The question is still current after the restart (its waiter is gone: detached, answerable).
      assert.equal(s.overlay?.pendingId, asked.pendingId);
    });

    // Answer it in the new epoch: clean at a new-epoch revision.
    await overlay(page).getByLabel(asked.questions[0]).fill('Yes');
    await overlay(page).getByRole('button', { name: 'Submit' }).click();
    // Settled: the respond call returned, the agent's continuation arrived, and the page shows
    // the server's session state and whole transcript.
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.equal(s.tasks[taskId], 'none');
      assert.equal(await page.getByTestId('respond-notice').textContent(), 'Answer delivered.');
      const [session] = (await server.get(`/api/v1/tasks/${taskId}/task-sessions`)).sessions;
      assert.equal(s.sessionState, session.state);
      const messages = (await server.get(`/api/v1/task-sessions/${sessionId}/messages`)).messages;
      assert.deepEqual(s.transcript, messages.map((m) => m.id));
      assert.equal(messages.at(-1).content, 'Thanks, continuing with your answers.');
    }, { message: 'the page converges after the answer' });
    const before = await pageState(page);
    const reasonsBefore = Number(await page.getByTestId('reason-log').getAttribute('data-count'));
    // What the store's log held before the replay (the status line and the panel count from it).
    const logBefore = await page.evaluate(({ sessionId, taskId }) => ({
      session: window.demo.store.explain(sessionId).rejected.length,
      summaries: window.demo.store.explainOwner(taskId).rejected.filter((r) => r.input === 'task.status_summary.updated').length,
    }), { sessionId, taskId });

    // Delayed frames from the old epoch arrive (the page replays what it received before the
    // restart): the store rejects them, nothing changes on screen. A client of the test's own
    // sees exactly what was replayed.
    const replay = page.getByTestId('sim-panel').locator('[data-scenario="restart"] [data-action="replay"]');
    const count = Number(/\((\d+)\)/.exec(await replay.innerText())?.[1]);
    assert.ok(count > 0, `old frames kept: ${await replay.innerText()}`);
    const client = await connectFrames(server.url);
    cleanups.push(async () => client.close());
    await eventually(() => assert.ok(client.events().some((f) => f.type === 'server.hello')));
    await play(page, 'replay', 'restart');
    const replayed = await eventually(() => {
      const frames = client.events().filter((f) => f.type !== 'server.hello');
      assert.equal(frames.length, count);
      return frames;
    }, { message: 'the replayed frames' });
    const old = replayed.filter((f) => f.payload.pending_action_revision?.epoch === epoch1);
    assert.ok(old.some((f) => f.type === 'session.message.added' && f.payload.pending_action === 'clarification'), 'the question as it was asked');
    assert.ok(replayed.every((f) => f.payload.pending_action_revision === undefined || f.payload.pending_action_revision.epoch === epoch1));
    await eventually(async () => {
      const n = Number(await page.getByTestId('reason-log').getAttribute('data-count'));
      assert.ok(n >= reasonsBefore + count + 1, `${n - reasonsBefore - 1} of ${count} frames handled`);
    }, { message: 'the replayed frames reached the page' });
    // The log says it in words; each line keeps its code and wire source in data-* attributes.
    const log = await page.getByTestId('reason-log').locator('li').evaluateAll((lis) => lis.map((li) => `${li.dataset.reason} ${li.dataset.source}`));
    const handled = log.slice(0, count + 3);
    for (const frame of old) {
      const id = frame.payload.message_id ?? frame.payload.session_id ?? frame.payload.id;
      assert.ok(
        handled.some((l) => /^(older_revision_rejected|older_update_carries_no_projection) /.test(l) && l.includes(`${frame.type} ${id}`)),
        `${frame.type} ${id} (epoch ${epoch1}) rejected:\n${handled.join('\n')}`,
      );
    }
    assert.deepEqual(await pageState(page), before, 'page state unchanged by old-epoch frames');
    await assertPlainWords(page);

    // The status line counts from the store itself: the late updates ignored are what the store's
    // log of rejected inputs gained (what the devtools panel lists): about the session (its
    // explanation lists them), about the task's summary (the task's explanation lists it); the rest
    // by the store's outcome of each frame (a turn event carries no revision: a copy of a turn held
    // is "already known", not ignored). It said "Replayed 5 old messages" beside "Late updates
    // ignored: 4".
    const status = await page.getByTestId('sim-status').innerText();
    const tally = await page.evaluate(() => {
      const t = window.demo.lastReplay;
      return {
        sent: t.sent, back: t.back, atLeast: t.atLeast, bySession: Object.fromEntries(t.ignoredBySession),
        summaries: Object.fromEntries(t.ignoredSummaries), byTask: Object.fromEntries(t.ignoredByTask), other: Object.fromEntries(t.other),
      };
    });
    assert.equal(tally.sent, count);
    assert.equal(tally.back, count, 'every replayed frame came back to the page');
    assert.equal(tally.atLeast, false);
    assert.deepEqual(tally.byTask, {});
    const logAfter = await page.evaluate(({ sessionId, taskId }) => ({
      session: window.demo.store.explain(sessionId).rejected.length,
      summaries: window.demo.store.explainOwner(taskId).rejected.filter((r) => r.input === 'task.status_summary.updated').length,
      task: window.demo.store.explainOwner(taskId).rejected.length,
    }), { sessionId, taskId });
    assert.deepEqual(Object.keys(tally.bySession), [sessionId], 'every ignored frame was about the one session');
    assert.equal(tally.bySession[sessionId], logAfter.session - logBefore.session, 'the status counts what the store logged for the session');
    assert.equal(tally.summaries[taskId] ?? 0, logAfter.summaries - logBefore.summaries, 'and for the task\'s summary');
    const ignored = tally.bySession[sessionId] + (tally.summaries[taskId] ?? 0);
    assert.equal(ignored + Object.values(tally.other).reduce((a, b) => a + b, 0), count, 'every frame accounted for');
    assert.ok(Object.keys(tally.other).every((reason) => reason === 'unchanged'), JSON.stringify(tally.other));
    // The store's outcome of each replayed frame (the page's log) agrees: as many rejections.
    const rejections = handled.filter((l) => /^(older_revision_rejected|older_update_carries_no_projection|older_state_ignored|deleted_message_stays_deleted|task_mismatch_rejected|task_removed) /.test(l));
    assert.equal(rejections.length, ignored, `the frames the store rejected:\n${handled.join('\n')}`);
    assert.match(status, new RegExp(`^The server sent ${count} old messages again\\. `), status);
    assert.match(status, new RegExp(`Late updates ignored: ${tally.bySession[sessionId]} about `), status);
    if (tally.summaries[taskId]) assert.match(status, new RegExp(`; ${tally.summaries[taskId]} about the summary of `), status);
    if (tally.other.unchanged) assert.match(status, new RegExp(`The rest: ${tally.other.unchanged} (was|were) already known`), status);
    // Why: the store lists the replayed inputs as rejected, from before the restart, each with
    // the old-epoch revision it carried and the new-epoch one held; the panel, opened by the
    // session's "Why?", says so in words.
    const w = await why(page);
    const fromBefore = w.explain.rejected.filter((r) => r.detail === 'older_epoch');
    assert.ok(fromBefore.length > 0, JSON.stringify(w.explain.rejected));
    for (const r of fromBefore) {
      assert.equal(r.revision.epoch, epoch1);
      assert.equal(r.held.epoch, epoch2);
    }
    assert.equal(w.explain.projection.revision.epoch, epoch2);
    assertWhyMatches(w);
    assert.match(w.shown.text, /from before the server restarted/);
    // ... and the panel's words agree with the status line's and the store's log: the session's
    // "Late updates ignored: N." (what the log held before the replay, if anything (a REST read
    // overtaken by an event while the page reloaded after the restart), and what the replay
    // added), and the task's, which lists its sessions' and its summary's.
    const sessionIgnored = logBefore.session + tally.bySession[sessionId];
    assert.equal(w.shown.rejectedCount, sessionIgnored);
    assert.match(w.shown.text, new RegExp(`Late updates ignored: ${sessionIgnored}\\.`));
    const t = await why(page, { task: true, keepOpen: true });
    assertWhyMatches(t);
    assert.equal(t.shown.rejectedCount, logAfter.task);
    assert.equal(t.shown.rejected.filter(([input]) => input === 'task.status_summary.updated').length, logBefore.summaries + (tally.summaries[taskId] ?? 0));
    assert.equal(t.shown.rejected.filter(([input]) => input !== 'task.status_summary.updated').length, logAfter.task - logAfter.summaries);
    await assertPlainWords(page); // the open panel and its log too
    await screenshot(page, `restart-old-epoch-rejected-${viewport.width}`);
    assert.deepEqual(problems, []);
  });

  test(`bundles, permissions, a task link, details and reset, played from the panel (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems } = await openPlayable(context, server.url);
    assert.match(await page.getByTestId('task-list').innerText(), /No tasks yet/);

    // Reset writes the demo tasks.
    await play(page, 'reset');
    const seeded = await eventually(async () => {
      const tasks = (await server.get('/api/v1/tasks')).tasks;
      assert.equal(tasks.length, 3);
      const s = await pageState(page);
      assert.deepEqual(Object.keys(s.tasks), tasks.map((t) => t.id));
      assert.deepEqual(Object.values(s.tasks), ['permission', 'clarification', 'clarification']);
      return tasks;
    }, { message: 'the demo tasks' });
    const [deploy, , billing] = seeded;
    assert.equal(billing.title, 'Refactor the billing module');

    // A link to a task with one session opens that session (not "Pick a session.").
    const [billingSession] = (await server.get(`/api/v1/tasks/${billing.id}/task-sessions`)).sessions;
    await page.evaluate((id) => { location.hash = `#/task/${id}`; }, billing.id);
    const bundle = await question(page, 3);
    assert.equal((await pageState(page)).session, billingSession.id);
    assert.equal(await page.getByTestId('task-only-note').count(), 0);
    if (viewport === PHONE) await assertQuestionInView(page, viewport);

    // A bundle is answered together: one Submit, every answer shown under its question.
    const answers = ['Keep it stable', 'Round half to even', 'Yes, its own schema'];
    for (const [i, q] of bundle.questions.entries()) await overlay(page).getByLabel(q).fill(answers[i]);
    await overlay(page).getByRole('button', { name: 'Submit' }).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.deepEqual(s.history.map((q) => [q.text, q.shown]), bundle.questions.map((q, i) => [q, `answer: ${answers[i]}`]));
      assert.equal(s.tasks[billing.id], 'none');
    }, { message: 'the bundle answered' });
    // ... and skipped together.
    await play(page, 'ask-bundle', 'bundle');
    const asked = await question(page, 3);
    await overlay(page).getByRole('button', { name: 'Skip' }).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.deepEqual(s.history.slice(3).map((q) => [q.text, q.status, q.shown]), asked.questions.map((q) => [q, 'rejected', 'Skipped']));
    }, { message: 'the bundle skipped' });

    // A permission: approve it in the session (its banner), then the agent asks again (the panel)
    // and you deny it (the session again): Approve and Deny are yours, not the agent panel's.
    await clickTask(page, deploy.id);
    const banner = page.getByTestId('permission-banner');
    await banner.waitFor({ state: 'visible' });
    assert.equal(await page.getByTestId('sim-panel').getByRole('button', { name: /Approve|Deny/ }).count(), 0, 'not in the agent panel');
    await answerPermission(page, 'Approve');
    await eventually(async () => {
      const s = await pageState(page);
      assert.deepEqual(s.permissions, ['Approved']);
      assert.equal(s.tasks[deploy.id], 'none');
      assert.equal(await banner.count(), 0);
    }, { message: 'approved' });
    await play(page, 'ask-permission', 'permission');
    await banner.waitFor({ state: 'visible' });
    assert.equal((await pageState(page)).tasks[deploy.id], 'permission');
    await answerPermission(page, 'Deny');
    await eventually(async () => {
      const s = await pageState(page);
      assert.deepEqual(s.permissions, ['Approved', 'Denied']);
      assert.equal(s.tasks[deploy.id], 'none');
      assert.equal(await banner.count(), 0);
    }, { message: 'denied' });
    await assertPlainWords(page);
    await screenshot(page, `permission-approved-denied-${viewport.width}`);

    // Details: ids, wire states and the epoch, only on request.
    const { sessionId } = await route(page);
    await page.getByTestId('details-toggle').click();
    await eventually(async () => {
      assert.match(await connectionLine(page).innerText(), /epoch \d+/);
      assert.match(await page.locator('main').innerText(), new RegExp(`current turn turn-|${sessionId}|permission_request`));
    });
    await screenshot(page, `details-on-${viewport.width}`);
    await page.getByTestId('details-toggle').click();
    // (The page's own details: the devtools panel keeps its codes in details lines of its own.)
    await eventually(async () => assert.equal(await page.evaluate(() => document.querySelectorAll('[data-testid="detail"]').length), 0));
    await assertPlainWords(page);

    // Reset again: the demo data is back (new tasks, the same pending actions).
    await play(page, 'reset');
    const again = await eventually(async () => {
      const tasks = (await server.get('/api/v1/tasks')).tasks;
      assert.equal(tasks.length, 3);
      assert.ok(tasks.every((t) => !seeded.some((o) => o.id === t.id)), 'new tasks');
      const s = await pageState(page);
      assert.equal(s.hash, '#/');
      assert.deepEqual(s.tasks, Object.fromEntries(tasks.map((t, i) => [t.id, ['permission', 'clarification', 'clarification'][i]])));
      return tasks;
    }, { message: 'reset' });
    await screenshot(page, `reset-demo-data-${viewport.width}`);

    // A fresh page opened on a task link (`#/task/ID`, the page's first route) opens its session.
    const [session] = (await server.get(`/api/v1/tasks/${again[2].id}/task-sessions`)).sessions;
    const linked = await openDemo(context, server.url, `#/task/${again[2].id}`);
    await eventually(async () => {
      const s = await pageState(linked.page);
      assert.equal(s.session, session.id);
      assert.equal(s.overlay?.questions.length, 3);
    }, { message: 'a task link opens its session' });
    assert.deepEqual([...problems, ...linked.problems], []);
  });
}

test('answering in one tab clears the question in the other (and both show the server going away)', async () => {
  const { server, context } = await setup();
  const a = await openPlayable(context, server.url);
  const { taskId } = await newTask(a.page);
  await play(a.page, 'ask', 'question');
  const asked = await question(a.page);

  // The panel's "Open a second tab" opens the same session in a new tab.
  const [second] = await Promise.all([
    context.waitForEvent('page'),
    a.page.getByTestId('sim-panel').locator('[data-scenario="tabs"] a').click(),
  ]);
  const b = { page: second, problems: [] };
  second.on('pageerror', (err) => b.problems.push(`pageerror: ${err.message}`));
  await second.locator('body[data-ready="true"]').waitFor({ timeout: 20_000 });
  for (const { page } of [b, a]) {
    await page.bringToFront(); // the user switches to the tab (background tabs get no frames)
    await eventually(async () => assert.equal((await pageState(page)).overlay?.pendingId, asked.pendingId));
  }
  await overlay(a.page).getByLabel(asked.questions[0]).fill('Yes, into one');
  await overlay(a.page).getByRole('button', { name: 'Submit' }).click();
  for (const { page } of [a, b]) {
    await page.bringToFront();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: Yes, into one'], 'the answer, in both tabs');
    });
  }
  await screenshot(a.page, 'two-tabs-answering-tab');
  await screenshot(b.page, 'two-tabs-other-tab');
  assert.deepEqual([...a.problems, ...b.problems], []);

  // The server goes away: both tabs say so visibly (no silent failure).
  await server.stop();
  for (const { page } of [a, b]) {
    await page.bringToFront();
    await page.getByRole('alert').waitFor({ state: 'visible' });
    assert.match(await page.getByRole('alert').innerText(), /Cannot reach the server/);
    assert.equal(await connectionLine(page).innerText(), 'Offline');
  }
  await screenshot(b.page, 'two-tabs-server-gone');
});

test('without --simulator the page shows no agent controls (the demo data still plays)', async () => {
  const { server, context } = await setup(DESKTOP, { simulator: false, args: ['--seed-demo'] });
  const { page, problems } = await openDemo(context, server.url);
  await eventually(async () => assert.equal(Object.keys((await pageState(page)).tasks).length, 3));
  // The probe answered 404: the panel stays hidden; the seeded question is still answerable.
  await eventually(async () => assert.equal(await page.evaluate(() => window.demo.simulator), false));
  assert.equal(await page.getByTestId('sim-panel').isVisible(), false);
  const [, , billing] = (await server.get('/api/v1/tasks')).tasks;
  await taskItem(page, billing.id).click();
  await question(page, 3);
  // Without the simulator no agent reads a message: the session has no message box.
  assert.equal(await page.getByTestId('composer').count(), 0, 'no message box');
  await assertPlainWords(page);
  await screenshot(page, 'no-simulator-1280');
  assert.deepEqual(problems.filter((p) => !/404/.test(p)), [], 'only the probe\'s 404');
});
