// End-to-end: your answers and skips in the demo page go through the package's `respond`
// (`task-projection/connect`, SPEC §13) against the real reference server, at 1280×800 and
// 390×844. The page's question shows as being sent while its request is in flight (the store's
// `respondState`), goes at once when the reply settles it (won, lost, no longer active: no REST
// re-read, no event needed), and says what failed and offers "Try again" when it failed.
//
// The network is watched and steered in the browser (playwright-core), not in the server: every
// POST of a respond is counted (`page.route` holds one in flight when a case needs to see it),
// every REST read counted, and the page's WebSocket runs through `page.routeWebSocket`, which can
// drop the server's frames (a silent socket: the server accepted the answer, no event reaches the
// page). The agent's side is played through the server's simulator: the page's own "Play the
// agent" buttons where they exist, the simulator's endpoints from the test where the page has no
// button (a detached agent whose backend refuses resumes: the server's real 503
// `retryable_error`; a new turn the page does not hear of: the server's real 409). Screenshots:
// tests/artifacts/e2e/respond-*.png.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoOverflow, assertPlainWords, browserSuite, eventually, newTaskOpened, overlay, pageState, play, screenshot,
} from './harness.mjs';

const VIEWPORTS = [['desktop', { width: 1280, height: 800 }], ['phone 390x844', { width: 390, height: 844 }]];
const RESPOND = /\/api\/v1\/clarification\/([^/]+)\/respond$/;

const { setup } = browserSuite();

/**
 * Opens the demo page (at `hash`) with its network watched: `posts` (each respond POST: its
 * bundle and body), `replies` (each respond reply: `status`, and `json`, a promise of its parsed body), `reads` (every REST
 * GET under /api/v1/), and `socket`: set `socket.silent = true` to drop the server's frames from
 * then on (`dropped` counts them). `shownErrors()`: every error notice the page showed so far
 * (a MutationObserver in the page records them as they appear).
 */
async function open(context, url, hash = '') {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // The 409 and 503 replies the cases ask for are the browser's "Failed to load resource" lines.
    if (msg.type() === 'error' && !/status of (409|503)/.test(msg.text())) problems.push(`console.error: ${msg.text()}`);
  });
  const net = { posts: [], replies: [], reads: [] };
  page.on('request', (req) => {
    const { pathname } = new URL(req.url());
    const m = RESPOND.exec(pathname);
    if (m && req.method() === 'POST') net.posts.push({ pendingId: decodeURIComponent(m[1]), body: req.postDataJSON() });
    else if (req.method() === 'GET' && pathname.startsWith('/api/v1/') && pathname !== '/api/v1/ws') net.reads.push(pathname);
  });
  page.on('response', (res) => {
    // `json`: a promise (the body is read after the headers: await it).
    if (RESPOND.test(new URL(res.url()).pathname)) net.replies.push({ status: res.status(), json: res.json().catch(() => null) });
  });
  const socket = { silent: false, dropped: 0 };
  await page.routeWebSocket(/\/api\/v1\/ws/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      if (socket.silent) socket.dropped++;
      else ws.send(message);
    });
    ws.onMessage((message) => server.send(message));
  });
  await page.addInitScript(() => {
    window.__shownErrors = [];
    const seen = new WeakSet();
    new MutationObserver(() => {
      for (const n of document.querySelectorAll('.notice.error')) {
        if (n.textContent && !seen.has(n)) {
          seen.add(n);
          window.__shownErrors.push(n.textContent);
        }
      }
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.goto(`${url}/${hash}`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 20_000 });
  await page.getByTestId('sim-panel').waitFor({ state: 'visible' });
  return { page, problems, net, socket, shownErrors: () => page.evaluate(() => window.__shownErrors) };
}

/** Holds every respond POST of `page` until `release()` (the request stays in flight). */
async function holdResponds(page) {
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  let held = 0;
  await page.route(RESPOND, async (route) => {
    held++;
    await released;
    await route.continue();
  });
  return { release: () => release(), held: () => held };
}

/** A new task (the page's "New task") with a question asked in its session (its "Ask a question"). */
async function taskWithQuestion(page) {
  await play(page, 'new-task');
  const ids = await newTaskOpened(page);
  await play(page, 'ask', 'question');
  const asked = await eventually(async () => {
    const s = await pageState(page);
    assert.equal(s.overlay?.questions.length, 1, 'a question is shown');
    assert.equal(s.sessionPending, 'clarification');
    return s.overlay;
  }, { message: 'the question appears' });
  return { ...ids, asked };
}

/** The question's notice line, its kind, the retry button and the store's respondState. */
async function respondView(page, sessionId, pendingId) {
  return page.evaluate(({ sessionId, pendingId }) => {
    const dialog = document.querySelector('#overlay-slot [data-testid="question-overlay"]');
    const notice = dialog?.querySelector('[data-testid="overlay-notice"]');
    const retry = dialog?.querySelector('[data-testid="retry"]');
    const settled = document.querySelector('[data-testid="respond-notice"]');
    return {
      shown: dialog?.getAttribute('data-pending-id') ?? null,
      respond: dialog?.getAttribute('data-respond') ?? null,
      busy: dialog?.getAttribute('aria-busy') ?? null,
      notice: notice?.textContent ?? null,
      noticeKind: notice?.dataset.kind ?? null,
      retry: retry ? !retry.hidden && retry.getClientRects().length > 0 : null,
      disabled: dialog ? [...dialog.querySelectorAll('[data-testid="submit"], [data-testid="skip"]')].map((b) => b.disabled) : null,
      answer: dialog?.querySelector('textarea')?.value ?? null,
      readOnly: dialog?.querySelector('textarea')?.readOnly ?? null,
      settled: settled?.textContent ?? null,
      settledKind: settled ? (settled.classList.contains('error') ? 'error' : 'info') : null,
      state: window.demo.store.respondState(sessionId, pendingId),
    };
  }, { sessionId, pendingId });
}

async function answer(page, asked, text) {
  await overlay(page).getByLabel(asked.questions[0]).fill(text);
}

for (const [label, viewport] of VIEWPORTS) {
  const w = viewport.width;
  const phone = w < 500;

  test(`an answer shows as being sent while in flight, then goes at once: one POST (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems, net, shownErrors } = await open(context, server.url);
    const { taskId, sessionId, asked } = await taskWithQuestion(page);
    const gate = await holdResponds(page);
    await answer(page, asked, 'The release branch');
    await overlay(page).getByRole('button', { name: 'Submit' }).click();

    // In flight: the question stays, shown as being sent, its buttons off; the store says so.
    const sending = await eventually(async () => {
      const v = await respondView(page, sessionId, asked.pendingId);
      assert.equal(gate.held(), 1, 'the POST is held in flight');
      assert.equal(v.shown, asked.pendingId);
      assert.equal(v.respond, 'in_flight');
      assert.equal(v.state?.phase, 'in_flight');
      assert.equal(v.busy, 'true');
      assert.equal(v.notice, 'Sending your answer…');
      assert.deepEqual(v.disabled, [true, true], 'Submit and Skip off');
      assert.equal(v.answer, 'The release branch', 'what you typed stays');
      assert.equal(v.readOnly, true, 'not editable while it is sent');
      return v;
    }, { message: 'the question shows as being sent' });
    assert.equal(sending.retry, false);
    assert.equal((await pageState(page)).tasks[taskId], 'clarification', 'still waits while in flight');
    await assertPlainWords(page);
    await screenshot(page, `respond-in-flight-${w}`);

    gate.release();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null, 'the question went');
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: The release branch']);
      const v = await respondView(page, sessionId, asked.pendingId);
      assert.equal(v.settled, 'Answer delivered.');
      assert.deepEqual(v.state, { attempt: v.state.attempt, phase: 'settled', outcome: 'won' });
    }, { message: 'the answer settles' });
    assert.equal(net.posts.length, 1, 'one POST');
    assert.deepEqual(net.posts[0], { pendingId: asked.pendingId, body: { answers: [{ question_id: net.posts[0].body.answers[0].question_id, answer: 'The release branch' }] } });
    assert.equal(net.replies[0].status, 200);
    assert.deepEqual(await shownErrors(), [], 'no failure shown');
    await assertPlainWords(page);
    if (phone) await assertNoOverflow(page);
    await screenshot(page, `respond-answered-${w}`);
    assert.deepEqual(problems, []);
  });

  test(`a double click sends one POST and shows no failure (mouse, and two clicks before a repaint) (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems, net, shownErrors } = await open(context, server.url);
    const { taskId, sessionId, asked } = await taskWithQuestion(page);

    // A mouse double click on Submit while the request is held in flight.
    let gate = await holdResponds(page);
    await answer(page, asked, 'Twice, by mistake');
    await overlay(page).getByRole('button', { name: 'Submit' }).dblclick();
    await eventually(async () => assert.equal((await respondView(page, sessionId, asked.pendingId)).state?.phase, 'in_flight'));
    gate.release();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: Twice, by mistake']);
      assert.equal((await respondView(page, sessionId, asked.pendingId)).settled, 'Answer delivered.');
    }, { message: 'the double-clicked answer settles' });
    assert.equal(net.posts.length, 1, `one POST for a double click: ${JSON.stringify(net.posts)}`);

    // Two clicks on Skip in one task (before the page repaints, its buttons still on): the second
    // joins the attempt in flight (the package's `respond`), no second request.
    await page.unrouteAll({ behavior: 'wait' });
    gate = await holdResponds(page);
    await play(page, 'ask', 'question');
    const again = await eventually(async () => {
      const { overlay: shown } = await pageState(page);
      assert.ok(shown && shown.pendingId !== asked.pendingId, 'the next question');
      return shown;
    });
    const clicked = await page.evaluate(() => {
      const skip = document.querySelector('#overlay-slot [data-testid="skip"]');
      skip.click();
      const enabled = !skip.disabled;
      skip.click();
      return enabled;
    });
    assert.equal(clicked, true, 'the second click met an enabled button');
    await eventually(async () => assert.equal(gate.held(), 1));
    gate.release();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: Twice, by mistake', 'Skipped']);
      assert.equal((await respondView(page, sessionId, again.pendingId)).settled, 'Skipped.');
    }, { message: 'the double-clicked skip settles' });
    assert.deepEqual(net.posts.map((p) => [p.pendingId, 'reject' in p.body]), [[asked.pendingId, false], [again.pendingId, true]], 'one POST per bundle');
    assert.deepEqual(net.replies.map((r) => r.status), [200, 200]);
    assert.deepEqual(await shownErrors(), [], 'no failure shown');
    await assertPlainWords(page);
    await screenshot(page, `respond-double-click-${w}`);
    assert.deepEqual(problems, []);
  });

  test(`a silent socket: the reply alone settles the answer, no REST re-read (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems, net, socket, shownErrors } = await open(context, server.url);
    const { taskId, sessionId, asked } = await taskWithQuestion(page);
    socket.silent = true;
    const reads = net.reads.length;
    await answer(page, asked, 'Heard by the reply only');
    await overlay(page).getByRole('button', { name: 'Submit' }).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null, 'the question went');
      assert.equal(s.sessionPending, 'none');
      assert.equal(s.tasks[taskId], 'none', 'the task waits for nothing');
      assert.equal(s.sessionWords, 'Nothing needs you now');
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: Heard by the reply only']);
      assert.equal((await respondView(page, sessionId, asked.pendingId)).settled, 'Answer delivered.');
    }, { message: 'the reply settles it' });
    // The server did publish what followed (the answered rows, the agent carrying on): the page got none of it.
    await eventually(async () => assert.ok(socket.dropped > 0, 'frames were dropped'));
    assert.deepEqual(net.reads.slice(reads), [], 'no REST re-read');
    assert.equal(net.posts.length, 1);
    const rows = (await server.get(`/api/v1/task-sessions/${sessionId}/messages`)).messages;
    assert.equal(rows.find((m) => m.type === 'clarification_request').metadata.status, 'answered', 'the server took it');
    const main = await page.locator('main').innerText();
    assert.doesNotMatch(main, /Waiting for your answer/, 'nothing says it waits');
    assert.deepEqual(await shownErrors(), []);
    await assertPlainWords(page);
    await screenshot(page, `respond-silent-socket-${w}`);
    assert.deepEqual(problems, []);
  });

  test(`a 503 (the detached agent's backend does not take it) shows what failed; Try again succeeds (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems, net, shownErrors } = await open(context, server.url);
    const { taskId, sessionId, asked } = await taskWithQuestion(page);
    // The agent goes away; its backend refuses resumes for now (the server answers 503, the bundle restored).
    await server.sim(`sessions/${sessionId}/detach`, { resume: 'not_accepted' });
    await answer(page, asked, 'Ship it tonight');
    await overlay(page).getByRole('button', { name: 'Submit' }).click();
    const failed = await eventually(async () => {
      const v = await respondView(page, sessionId, asked.pendingId);
      assert.equal(v.state?.phase, 'open');
      assert.equal(v.state?.outcome, 'failed');
      assert.equal(v.shown, asked.pendingId, 'the question stays');
      assert.equal(v.noticeKind, 'error');
      assert.equal(v.notice, 'Not delivered: the server could not take your answer right now.');
      assert.equal(v.retry, true, 'Try again is offered');
      assert.deepEqual(v.disabled, [false, false]);
      assert.equal(v.readOnly, false, 'editable again');
      return v;
    }, { message: 'the failure is shown' });
    assert.equal(failed.answer, 'Ship it tonight', 'what you typed stays');
    assert.equal(net.replies[0].status, 503);
    assert.equal((await net.replies[0].json)?.error?.code, 'retryable_error');
    assert.equal((await pageState(page)).tasks[taskId], 'clarification', 'it still waits for you');
    await assertPlainWords(page);
    if (phone) await assertNoOverflow(page);
    await screenshot(page, `respond-503-${w}`);

    // The backend takes resumes again; Try again sends the same answer, a new attempt.
    await server.sim(`sessions/${sessionId}/detach`, { resume: 'accepted' });
    await overlay(page).getByRole('button', { name: 'Try again' }).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: Ship it tonight']);
      const v = await respondView(page, sessionId, asked.pendingId);
      assert.equal(v.settled, 'Answer delivered.');
      assert.equal(v.state?.outcome, 'won');
      assert.ok(v.state.attempt > failed.state.attempt, 'a new attempt');
    }, { message: 'the retry settles' });
    assert.deepEqual(net.replies.map((r) => r.status), [503, 200]);
    assert.deepEqual(net.posts.map((p) => p.body), [net.posts[0].body, net.posts[0].body], 'the same answer again');
    assert.deepEqual(await shownErrors(), ['Not delivered: the server could not take your answer right now.'], 'the one failure, nothing else');
    await screenshot(page, `respond-503-retried-${w}`);
    assert.deepEqual(problems, []);
  });

  test(`a 409 (overtaken where the page did not hear of it): the question goes at once, no failure (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page, problems, net, socket, shownErrors } = await open(context, server.url);
    const { taskId, sessionId, asked } = await taskWithQuestion(page);
    // The page hears nothing more; the agent moves on to a new turn: the question is overtaken.
    socket.silent = true;
    await server.sim(`sessions/${sessionId}/turns`, { close_open: true, prompt: 'Never mind, carry on.' });
    await eventually(async () => assert.ok(socket.dropped > 0, 'the new turn was published'));
    assert.equal((await pageState(page)).overlay?.pendingId, asked.pendingId, 'the page still shows the question');
    const reads = net.reads.length;
    await answer(page, asked, 'Too late');
    await overlay(page).getByRole('button', { name: 'Submit' }).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null, 'the question went');
      assert.equal(s.sessionPending, 'none');
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => q.shown), ['No longer answerable']);
      const v = await respondView(page, sessionId, asked.pendingId);
      assert.equal(v.settled, 'This question is no longer open (answered, skipped or overtaken): your answer was not used.');
      assert.equal(v.settledKind, 'info');
      assert.equal(v.state?.outcome, 'no_longer_active');
    }, { message: 'the 409 settles it' });
    assert.equal(net.replies[0].status, 409);
    assert.equal((await net.replies[0].json)?.error?.code, 'clarification_not_active');
    assert.deepEqual(net.reads.slice(reads), [], 'no REST re-read');
    assert.equal(net.posts.length, 1);
    assert.deepEqual(await shownErrors(), [], 'no failure shown');
    await assertPlainWords(page);
    await screenshot(page, `respond-409-${w}`);
    assert.deepEqual(problems, []);
  });

  test(`two tabs answer the same question: one wins, the other is told (claimed: false), no failure (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const a = await open(context, server.url);
    const { taskId, sessionId, asked } = await taskWithQuestion(a.page);
    const b = await open(context, server.url, `#/task/${taskId}/session/${sessionId}`);
    await eventually(async () => assert.equal((await pageState(b.page)).overlay?.pendingId, asked.pendingId), { message: 'tab B shows the question' });
    // Tab B hears nothing from now on (a stalled socket): it still shows the question when A answers.
    b.socket.silent = true;

    await a.page.bringToFront();
    await answer(a.page, asked, 'Yes, from tab A');
    await overlay(a.page).getByRole('button', { name: 'Submit' }).click();
    await eventually(async () => {
      assert.equal((await pageState(a.page)).overlay, null);
      assert.equal((await respondView(a.page, sessionId, asked.pendingId)).settled, 'Answer delivered.');
    }, { message: 'tab A wins' });

    await b.page.bringToFront();
    assert.equal((await pageState(b.page)).overlay?.pendingId, asked.pendingId, 'tab B still shows it');
    const reads = b.net.reads.length;
    await answer(b.page, asked, 'No, from tab B');
    await overlay(b.page).getByRole('button', { name: 'Submit' }).click();
    await eventually(async () => {
      const s = await pageState(b.page);
      assert.equal(s.overlay, null, 'the question went in tab B');
      assert.equal(s.tasks[taskId], 'none');
      assert.deepEqual(s.history.map((q) => q.shown), ['answer: Yes, from tab A'], 'the answer that counts: tab A\'s');
      const v = await respondView(b.page, sessionId, asked.pendingId);
      assert.equal(v.settled, 'Already answered elsewhere (another tab or person): that answer counts.');
      assert.equal(v.settledKind, 'info');
      assert.equal(v.state?.outcome, 'lost');
    }, { message: 'tab B is told' });
    assert.equal(b.net.replies[0].status, 200);
    assert.equal((await b.net.replies[0].json)?.claimed, false, 'tab B lost the race');
    assert.equal((await a.net.replies[0].json)?.claimed, true);
    assert.deepEqual(b.net.reads.slice(reads), [], 'no REST re-read in tab B');
    assert.deepEqual([a.net.posts.length, b.net.posts.length], [1, 1]);
    assert.deepEqual([await a.shownErrors(), await b.shownErrors()], [[], []], 'no failure shown in either tab');
    const rows = (await server.get(`/api/v1/task-sessions/${sessionId}/messages`)).messages;
    assert.deepEqual(rows.find((m) => m.type === 'clarification_request').metadata.response?.answers?.map((x) => x.answer), ['Yes, from tab A']);
    await assertPlainWords(b.page);
    await screenshot(a.page, `respond-two-tabs-winner-${w}`);
    await screenshot(b.page, `respond-two-tabs-other-${w}`);
    assert.deepEqual([...a.problems, ...b.problems], []);
  });
}
