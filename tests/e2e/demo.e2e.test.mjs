// End-to-end: the demo page (www/dist) against the real reference server (docs/server-api.md),
// driven from the agent side through the simulator endpoints. Each test starts its own server on a
// throwaway SQLite file (`--port 0 --simulator`) and asserts what the page shows. Screenshots of
// every final state: tests/artifacts/e2e/*.png.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import {
  assertNoOverflow, connectFrames, eventually, launchChromium, openDemo, overlay, pageState,
  screenshot, serverBinary, sessionTab, startServer, taskItem,
} from './harness.mjs';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let browser;
const cleanups = [];

before(async () => {
  serverBinary(); // fails fast with a clear message when something is not built
  browser = await launchChromium();
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()().catch(() => {});
});
after(async () => {
  await browser?.close();
});

/** A server and a browser context for one test; both are torn down after it, pass or fail. */
async function setup(viewport = DESKTOP) {
  const server = await startServer();
  cleanups.push(() => server.stop());
  const context = await browser.newContext({ viewport });
  cleanups.push(() => context.close());
  return { server, context };
}

/** Opens the task's pending owner via a click on the task (the selection machine). */
async function clickTask(page, taskId) {
  if (await page.getByTestId('back').isVisible()) await page.getByTestId('back').click();
  await taskItem(page, taskId).click();
}

test('a skipped newer question never lets the older detached one resurface (turn completion, reload)', async () => {
  const { server, context } = await setup();
  const { task_id: taskId } = await server.sim('tasks', { title: 'Refactor the parser' });
  const { session_id: sessionId } = await server.sim(`tasks/${taskId}/sessions`, { primary: true, state: 'RUNNING' });
  // Turn 1: the agent asks, detached (no waiter), then its turn ends: the question survives as a
  // pending row of an older turn.
  const { turn_id: turn1 } = await server.sim(`sessions/${sessionId}/turns`);
  await server.sim(`sessions/${sessionId}/messages`, { type: 'agent_message', text: 'Looking at the tokenizer.' });
  const old = await server.sim(`sessions/${sessionId}/clarification`, { questions: ['Keep the old tokenizer API?'], live: false });
  await server.sim(`turns/${turn1}/complete`);

  const { page, problems } = await openDemo(context, server.url);
  await clickTask(page, taskId);
  await eventually(async () => {
    const s = await pageState(page);
    assert.equal(s.session, sessionId);
    assert.deepEqual(s.history, [{ id: old.message_ids[0], status: 'pending', text: 'Keep the old tokenizer API?' }]);
  }, { message: 'the old question is shown as history' });

  // Turn 2 asks a newer question: only it is answerable; the old one stays inert history.
  await server.sim(`sessions/${sessionId}/turns`);
  const fresh = await server.sim(`sessions/${sessionId}/clarification`, { questions: ['Which test suite should I run?'] });
  await eventually(async () => {
    const s = await pageState(page);
    assert.deepEqual(s.overlay, { pendingId: fresh.pending_id, questions: ['Which test suite should I run?'] });
    assert.deepEqual(s.history.map((q) => q.text), ['Keep the old tokenizer API?']);
    assert.equal(s.answerFields, 1, 'only the current question has an answer field');
    assert.equal(s.tasks[taskId], 'clarification');
  });

  // Skip it. The agent continues and completes turn 2: the older pending question must not
  // resurface (a legacy "last pending question" scan would bring it back).
  await overlay(page).getByRole('button', { name: 'Skip' }).click();
  const clear = async () => {
    const s = await pageState(page);
    assert.equal(s.overlay, null, 'no question overlay');
    assert.equal(s.answerFields, 0);
    assert.equal(s.tasks[taskId], 'none');
    assert.equal(s.sessionPending, 'none');
    assert.deepEqual(s.history, [
      { id: old.message_ids[0], status: 'pending', text: 'Keep the old tokenizer API?' },
      { id: fresh.message_ids[0], status: 'rejected', text: 'Which test suite should I run?' },
    ]);
  };
  await eventually(clear, { message: 'after Skip' });
  await eventually(async () => {
    const log = await page.getByTestId('reason-log').textContent();
    assert.match(log, /turn\.completed/, 'the agent completed turn 2 after the skip');
  });
  await clear();

  // The server agrees: the superseded bundle is a conflict, nothing to answer.
  const late = await server.post(`/api/v1/clarification/${old.pending_id}/respond`, { answers: [{ question_id: 'q1', answer: 'yes' }] });
  assert.equal(late.status, 409, JSON.stringify(late.body));

  // Later turns run and complete (a normal one and a lifecycle-only one): still nothing re-arms.
  const { turn_id: turn3 } = await server.sim(`sessions/${sessionId}/turns`);
  await eventually(async () => assert.equal(await page.getByTestId('session-state').innerText(), 'RUNNING'));
  await clear();
  await server.sim(`turns/${turn3}/complete`);
  const { turn_id: lifecycle } = await server.sim(`sessions/${sessionId}/turns`, { lifecycle_only: true });
  await server.sim(`turns/${lifecycle}/complete`);
  await eventually(async () => assert.ok((await page.getByTestId('reason-log').textContent()).includes(`turn.completed ${lifecycle}`)));
  await clear();

  await page.reload();
  await page.locator('body[data-ready="true"]').waitFor();
  await eventually(async () => {
    assert.equal((await pageState(page)).session, sessionId, 'the reload reopens the same session');
    await clear();
  }, { message: 'after reload' });
  await screenshot(page, 'superseded-question-after-reload');
  assert.deepEqual(problems, []);
});

for (const [label, viewport] of [['desktop', DESKTOP], ['phone 390x844', PHONE]]) {
  test(`clicking a task opens the secondary session that owns its only question (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { task_id: taskId } = await server.sim('tasks', { title: 'Ship the release notes' });
    const { session_id: primary } = await server.sim(`tasks/${taskId}/sessions`, { primary: true, state: 'RUNNING' });
    await server.sim(`sessions/${primary}/turns`);
    await server.sim(`sessions/${primary}/messages`, { type: 'agent_message', text: 'Drafting the notes.' });
    const { session_id: secondary } = await server.sim(`tasks/${taskId}/sessions`, { primary: false, profile: 'reviewer', state: 'RUNNING' });
    await server.sim(`sessions/${secondary}/turns`);

    const { page, problems } = await openDemo(context, server.url);
    // Clean task: the click opens the primary session (and the page remembers it).
    await clickTask(page, taskId);
    await eventually(async () => assert.equal((await pageState(page)).session, primary));

    const asked = await server.sim(`sessions/${secondary}/clarification`, { questions: ['Mention the breaking change?', 'Link the migration guide?'] });
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.tabs[secondary], 'clarification');
      assert.equal(s.tabs[primary], 'none');
    });
    if (viewport === PHONE) await page.getByTestId('back').click();
    else await page.getByRole('link', { name: 'task-projection' }).click();
    await eventually(async () => assert.equal(await taskItem(page, taskId).getAttribute('data-pending'), 'clarification'));
    await taskItem(page, taskId).click();
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.session, secondary, 'the question owner, not the remembered primary');
      assert.equal(await sessionTab(page, secondary).getAttribute('aria-selected'), 'true');
      assert.deepEqual(s.overlay, { pendingId: asked.pending_id, questions: ['Mention the breaking change?', 'Link the migration guide?'] });
    });
    await overlay(page).getByLabel('Mention the breaking change?').waitFor();
    if (viewport === PHONE) await assertNoOverflow(page);
    await screenshot(page, `secondary-owner-${viewport.width}`);
    assert.deepEqual(problems, []);
  });
}

test('a detached current-turn question stays answerable and the answer resumes the session', async () => {
  const { server, context } = await setup();
  const { task_id: taskId } = await server.sim('tasks', { title: 'Migrate the database' });
  const { session_id: sessionId } = await server.sim(`tasks/${taskId}/sessions`, { primary: true, state: 'RUNNING' });
  await server.sim(`sessions/${sessionId}/turns`);
  const asked = await server.sim(`sessions/${sessionId}/clarification`, { questions: ['Run the migration during business hours?'] });
  await server.sim(`sessions/${sessionId}/detach`);

  const { page, problems } = await openDemo(context, server.url);
  await clickTask(page, taskId);
  await eventually(async () => assert.equal((await pageState(page)).overlay?.pendingId, asked.pending_id));
  await overlay(page).getByLabel('Run the migration during business hours?').fill('No, tonight at 22:00');
  await overlay(page).getByRole('button', { name: 'Submit' }).click();
  await eventually(async () => {
    const s = await pageState(page);
    assert.equal(s.overlay, null);
    assert.equal(s.tasks[taskId], 'none');
    assert.equal(s.history.find((q) => q.id === asked.message_ids[0])?.status, 'answered');
  });
  // Resumed: the agent runs a successor turn that continues with the answer, then completes it.
  await eventually(async () => {
    const turns = (await server.get(`/api/v1/task-sessions/${sessionId}/turns`)).turns;
    assert.equal(turns.length, 2, 'a successor turn');
    // The interrupted turn was closed before the successor ran, and the successor completed:
    // nothing is left open, so the session rests (not stuck RUNNING on the old turn).
    assert.ok(turns.every((t) => t.completed_at), 'both turns completed');
    const session = (await server.get(`/api/v1/tasks/${taskId}/task-sessions`)).sessions.find((x) => x.id === sessionId);
    assert.equal(session.state, 'IDLE');
    const resumed = page.locator(`[data-testid="message"]`).filter({ hasText: 'Thanks, continuing with your answers.' });
    assert.equal(await resumed.count(), 1);
    assert.equal(await page.getByTestId('session-view').getAttribute('data-pending'), 'none');
  });
  await screenshot(page, 'detached-question-answered');
  // The notice belongs to the session the answer was given in: another task's session does not
  // show it (it did: "Answer delivered." appeared in whatever session was open next).
  assert.equal((await page.getByTestId('respond-notice').innerText()).trim(), 'Answer delivered.');
  const { task_id: other } = await server.sim('tasks', { title: 'Write the changelog' });
  const { session_id: otherSession } = await server.sim(`tasks/${other}/sessions`, { primary: true, state: 'RUNNING' });
  await eventually(async () => assert.ok(await taskItem(page, other).isVisible()));
  await clickTask(page, other);
  await eventually(async () => assert.equal((await pageState(page)).session, otherSession));
  assert.equal(await page.getByTestId('respond-notice').count(), 0, 'no notice from another session');
  await clickTask(page, taskId);
  await eventually(async () => assert.equal((await pageState(page)).session, sessionId));
  assert.equal((await page.getByTestId('respond-notice').innerText()).trim(), 'Answer delivered.', 'still shown where it was given');
  assert.deepEqual(problems, []);
});

test('a server restart advances the epoch, the page converges, and old-epoch frames are rejected', async () => {
  const { server, context } = await setup();
  const { task_id: taskId } = await server.sim('tasks', { title: 'Rotate the API keys' });
  const { session_id: sessionId } = await server.sim(`tasks/${taskId}/sessions`, { primary: true, state: 'RUNNING' });
  const { page, problems } = await openDemo(context, server.url);
  await clickTask(page, taskId);
  const epoch1 = (await server.get('/healthz')).epoch;
  await eventually(async () => assert.equal((await pageState(page)).epoch, epoch1));

  // Capture the old epoch's frames with a test client while the agent asks a question.
  const client = await connectFrames(server.url);
  cleanups.push(async () => client.close());
  await server.sim(`sessions/${sessionId}/turns`);
  const asked = await server.sim(`sessions/${sessionId}/clarification`, { questions: ['Revoke the old keys now?'] });
  await eventually(async () => assert.equal((await pageState(page)).overlay?.pendingId, asked.pending_id));
  await eventually(() => assert.ok(client.events().some((f) => f.type === 'session.message.added' && f.payload.pending_action === 'clarification')));
  const captured = client.events().filter((f) => f.type !== 'server.hello');

  await server.sim('restart');
  const epoch2 = (await server.get('/healthz')).epoch;
  assert.ok(BigInt(epoch2) > BigInt(epoch1), `epoch ${epoch1} -> ${epoch2}`);
  await eventually(async () => {
    const s = await pageState(page);
    assert.equal(s.epoch, epoch2, 'the page saw the new server.hello');
    // The question is still current after the restart (its waiter is gone: detached, answerable).
    assert.equal(s.overlay?.pendingId, asked.pending_id);
  });

  // Answer it in the new epoch: clean at a new-epoch revision.
  await overlay(page).getByLabel('Revoke the old keys now?').fill('Yes');
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

  // Delayed frames from the old epoch arrive: the store rejects them, nothing changes on screen.
  const replayed = captured.filter((f) => f.payload.pending_action_revision?.epoch === epoch1);
  assert.ok(replayed.some((f) => f.type === 'session.message.added' && f.payload.pending_action === 'clarification'));
  assert.deepEqual((await server.sim('replay', { frames: captured })).sent, captured.length);
  await eventually(async () => {
    const count = Number(await page.getByTestId('reason-log').getAttribute('data-count'));
    assert.ok(count >= reasonsBefore + captured.length, `${count - reasonsBefore} of ${captured.length} frames handled`);
  }, { message: 'the replayed frames reached the page' });
  const log = await page.getByTestId('reason-log').locator('li').allTextContents();
  const handled = log.slice(0, captured.length);
  for (const frame of replayed) {
    const id = frame.payload.message_id ?? frame.payload.session_id ?? frame.payload.id;
    assert.ok(
      handled.some((l) => /^(older_revision_rejected|older_update_carries_no_projection) /.test(l) && l.includes(`${frame.type} ${id}`)),
      `${frame.type} ${id} (epoch ${epoch1}) rejected:\n${handled.join('\n')}`,
    );
  }
  assert.deepEqual(await pageState(page), before, 'page state unchanged by old-epoch frames');
  assert.match(await page.getByTestId('last-reason').textContent(), /older_revision_rejected|older_update_carries_no_projection|unchanged/);
  await page.getByTestId('dev-panel').locator('summary').click();
  await screenshot(page, 'restart-old-epoch-rejected');
  assert.deepEqual(problems, []);
});

test('answering in one tab clears the question in the other (and both show the server going away)', async () => {
  const { server, context } = await setup();
  const { task_id: taskId } = await server.sim('tasks', { title: 'Review the pull request' });
  const { session_id: sessionId } = await server.sim(`tasks/${taskId}/sessions`, { primary: true, state: 'RUNNING' });
  await server.sim(`sessions/${sessionId}/turns`);
  const asked = await server.sim(`sessions/${sessionId}/clarification`, { questions: ['Squash the commits?'] });

  const a = await openDemo(context, server.url);
  const b = await openDemo(context, server.url);
  for (const { page } of [a, b]) {
    await page.bringToFront(); // the user switches to the tab (background tabs get no frames)
    await clickTask(page, taskId);
    await eventually(async () => assert.equal((await pageState(page)).overlay?.pendingId, asked.pending_id));
  }
  await a.page.bringToFront();
  await overlay(a.page).getByLabel('Squash the commits?').fill('Yes, into one');
  await overlay(a.page).getByRole('button', { name: 'Submit' }).click();
  for (const { page } of [a, b]) {
    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null);
      assert.equal(s.tasks[taskId], 'none');
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
    assert.equal(await page.getByTestId('connection').innerText(), 'Offline');
  }
  await screenshot(b.page, 'two-tabs-server-gone');
});
