// End-to-end: the flight recorder on the demo page (`/?record`: the package's devtools panel records
// the page's store from its first input) and the inspector (`/inspect/`, www/src/inspect.ts). A
// scenario is played through the page's own controls while the panel records; the trace saved
// from the panel ("Save trace") is replayed natively
// (`task-projection-replay --check`, `--json`), in Node (`replayTrace` of the built package) and
// explored (`--explore`), then opened in the inspector at 1280×800 and 390×844 and streamed to it
// live. Screenshots: tests/artifacts/e2e/inspect-*.png.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  ARTIFACTS, ROOT, assertNoOverflow, browserSuite, closePanel, devtools, eventually, openDemo, overlay, pageState, play, replayBinary, route,
  screenshot, sendPrompt, serverBinary, taskItem,
} from './harness.mjs';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SEED = '20261202';

const { setup, cleanups } = browserSuite({ binaries: [serverBinary, replayBinary] });

/** A temp file holding `text`, removed after the test. */
function tempTrace(text, name = 'demo.ndjson') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tp-trace-'));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

function replay(...args) {
  return spawnSync(replayBinary(), args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** The trace's lines: `[header, steps]`. */
function lines(text) {
  const [header, ...steps] = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  return [header, steps];
}

/** Each id's last answers written up to step index `k` (what the inspector shows after it). */
function answersAt(steps, k) {
  const sessions = {};
  const tasks = {};
  for (const step of steps.slice(0, k + 1)) {
    Object.assign(sessions, step.answers.sessions ?? {});
    Object.assign(tasks, step.answers.tasks ?? {});
  }
  return { sessions, tasks };
}

/** Opens the devtools panel with its toggle (when it is closed). */
async function openPanel(page) {
  if (!(await devtools(page, '.panel').isVisible())) await devtools(page, 'button.toggle').click();
  await devtools(page, '.panel').waitFor();
}

/** The demo page recording its store (`?record`: the devtools panel records from the start), with
 * the simulator panel. */
async function openRecording(context, url) {
  const demo = await openDemo(context, url, '?record');
  await demo.page.getByTestId('sim-panel').waitFor({ state: 'visible' });
  await openPanel(demo.page);
  assert.equal(await devtools(demo.page, '[data-testid="recording"]').innerText(), 'Recording every input the store takes.');
  assert.equal(await devtools(demo.page, '[data-testid="record"]').innerText(), 'Stop recording');
  await closePanel(demo.page);
  return demo;
}

/** The panel's "Save trace": the file it downloads (the trace so far), as text. */
async function saveTrace(page) {
  await openPanel(page);
  const [download] = await Promise.all([page.waitForEvent('download'), devtools(page, '[data-testid="save-trace"]').click()]);
  assert.match(download.suggestedFilename(), /^task-projection-.*\.ndjson$/);
  const text = fs.readFileSync(await download.path(), 'utf8');
  await closePanel(page);
  return text;
}

/** The panel's "Stop recording", then "Save trace": the whole recording. */
async function stopAndSave(page) {
  await openPanel(page);
  await devtools(page, '[data-testid="record"]').click();
  await devtools(page, '[data-testid="recording"]').filter({ hasText: /^Stopped: the trace holds \d+ steps?\.$/ }).waitFor();
  return saveTrace(page);
}

async function question(page, count = 1) {
  return eventually(async () => {
    const { overlay: shown } = await pageState(page);
    assert.ok(shown, 'a question is shown');
    assert.equal(shown.questions.length, count);
    return shown;
  }, { message: 'the question appears' });
}

/** New task → a question → a new turn overtakes it → a new question → skipped. */
async function playOvertaken(page) {
  await play(page, 'new-task');
  const { taskId, sessionId } = await eventually(async () => {
    const r = await route(page);
    assert.ok(r.sessionId, 'the new task opened');
    return r;
  });
  await play(page, 'ask', 'superseded');
  const old = await question(page);
  await sendPrompt(page);
  await eventually(async () => assert.equal((await pageState(page)).overlay, null));
  await play(page, 'ask', 'superseded');
  const fresh = await question(page);
  assert.notEqual(fresh.pendingId, old.pendingId);
  await overlay(page).getByRole('button', { name: 'Skip' }).click();
  await eventually(async () => assert.equal((await pageState(page)).tasks[taskId], 'none'), { message: 'skipped' });
  return { taskId, sessionId, old, fresh };
}

/** The explanation at a step agrees with the answers recorded up to it. */
function assertExplainAgrees(explain, recorded, what) {
  assert.ok(recorded, `${what}: recorded answers`);
  assert.equal(explain.pending_action.value, recorded.pendingAction, `${what}: pendingAction`);
  assert.equal(explain.pending_action.reason, recorded.pendingActionWhy, `${what}: pendingActionWhy`);
  assert.equal(explain.current_turn.reason, recorded.currentTurnWhy, `${what}: currentTurnWhy`);
  if ('currentTurn' in recorded) assert.equal(explain.current_turn.id, recorded.currentTurn, `${what}: currentTurn`);
  else assert.equal(explain.current_turn.known, false, `${what}: currentTurn unknown`);
  assert.equal(explain.clarification.reason, recorded.clarificationWhy, `${what}: clarificationWhy`);
  assert.equal(explain.clarification.pending_id, recorded.clarification?.pending_id ?? null, `${what}: clarification`);
  assert.equal(explain.permission.pending, recorded.permission, `${what}: permission`);
  assert.equal(explain.permission.reason, recorded.permissionWhy, `${what}: permissionWhy`);
}

function assertOwnerAgrees(owner, recorded, what) {
  assert.ok(recorded, `${what}: recorded answers`);
  assert.equal(owner.owner.session_id, recorded.pendingOwner, `${what}: pendingOwner`);
  assert.equal(owner.owner.reason, recorded.pendingOwnerWhy, `${what}: pendingOwnerWhy`);
  assert.equal(owner.pending_action.value, recorded.pendingAction, `${what}: pendingAction`);
  assert.equal(owner.pending_action.reason, recorded.pendingActionWhy, `${what}: pendingActionWhy`);
  assert.equal(owner.summary_revision ?? null, recorded.summary?.revision ?? null, `${what}: summary`);
}

test('the demo records its store only with ?record; the trace replays natively and in Node with the same answers, and the explorer finds no difference', async () => {
  const { server, context } = await setup();

  // Without ?record the page loads the panel but not the package's recorder; the panel says that
  // recording needs it.
  const plain = await openDemo(context, server.url);
  const requested = [];
  plain.page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  await plain.page.reload();
  await plain.page.locator('body[data-ready="true"]').waitFor();
  assert.ok(requested.includes('/pkg/development/index.js'), `the page loaded the package: ${requested}`);
  assert.ok(requested.includes('/pkg/devtools-dom.js'), `the page loaded the devtools panel: ${requested}`);
  assert.deepEqual(requested.filter((p) => p === '/pkg/trace.js' || p.endsWith('/record.js')), [], 'no recorder loaded');
  await openPanel(plain.page);
  assert.equal(await devtools(plain.page, '[data-testid="recording"]').innerText(), "Recording needs import 'task-projection/trace' in the app.");
  assert.equal(await devtools(plain.page, '[data-testid="record"]').isVisible(), false);
  await plain.page.close();

  // With ?record: the panel records from before the store's first input.
  const { page, problems } = await openRecording(context, server.url);

  // The demo data (three tasks), a link to a task (the selection machine), a bundle answered, a
  // question overtaken by a new turn and skipped, a permission approved from a click on its task.
  await play(page, 'reset');
  const [deploy, , billing] = await eventually(async () => {
    const { tasks } = await server.get('/api/v1/tasks');
    assert.equal(tasks.length, 3);
    assert.equal(Object.keys((await pageState(page)).tasks).length, 3);
    return tasks;
  }, { message: 'the demo tasks' });
  await page.evaluate((id) => { location.hash = `#/task/${id}`; }, billing.id);
  const bundle = await question(page, 3);
  for (const q of bundle.questions) await overlay(page).getByLabel(q).fill('Yes');
  await overlay(page).getByRole('button', { name: 'Submit' }).click();
  await eventually(async () => assert.equal((await pageState(page)).tasks[billing.id], 'none'), { message: 'the bundle answered' });
  await playOvertaken(page);
  await taskItem(page, deploy.id).click();
  const banner = page.getByTestId('permission-banner');
  await banner.waitFor({ state: 'visible' });
  await banner.getByRole('button', { name: 'Approve' }).click();
  await eventually(async () => assert.equal((await pageState(page)).tasks[deploy.id], 'none'), { message: 'approved' });

  // The panel's "Save trace" downloads the trace so far; the recording goes on, and once stopped
  // the whole of it ("Stop recording", "Save trace" again) starts with the same steps.
  const saved = await saveTrace(page);
  const text = await stopAndSave(page);
  assert.deepEqual(problems, []);
  const [savedHeader, savedSteps] = lines(saved);
  assert.equal(savedHeader.fresh, true);
  assert.ok(savedSteps.length > 0);
  assert.deepEqual(lines(text)[1].slice(0, savedSteps.length), savedSteps, 'the saved trace is the start of the whole one');
  const [header, steps] = lines(text);
  assert.equal(header.format, 'task-projection-trace');
  assert.equal(header.fresh, true, 'recording started on an empty store');
  assert.equal(header.dropped, 0);
  assert.equal(header.steps, steps.length);
  const calls = new Set(steps.map((s) => s.call));
  for (const call of ['applyFrame', 'applyTaskSnapshot', 'applySessionList', 'applyTurnList', 'applyMessagePage', 'applyMessageEvent',
    'beginSelection', 'settleSelection', 'setActiveTask']) {
    assert.ok(calls.has(call), `the scenario recorded ${call}: ${[...calls]}`);
  }
  const file = tempTrace(text);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, 'demo-trace.ndjson'), text);

  // Natively: every answer as recorded.
  const check = replay('--check', file);
  assert.equal(check.status, 0, `--check: ${check.stdout}\n${check.stderr}`);
  assert.match(check.stderr, new RegExp(`--check: ${steps.length} step\\(s\\), every answer as recorded`));
  const json = replay('--json', file);
  assert.equal(json.status, 0, json.stderr);
  const native = json.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));

  // In Node, the built package: complete, the same answers, step by step equal to the native ones.
  const { replayTrace } = await import(pathToFileURL(path.join(ROOT, 'tests/js/node_modules/task-projection/trace.node.js')).href);
  const node = replayTrace(text);
  assert.equal(node.complete, true);
  assert.equal(node.same, true, `differing steps: ${node.steps.filter((s) => !s.same).map((s) => s.step)}`);
  assert.equal(node.steps.length, steps.length);
  assert.equal(native.length, steps.length);
  for (const [i, n] of native.entries()) {
    const js = node.steps[i];
    const what = `step ${steps[i].step} (${steps[i].call})`;
    assert.equal(n.same, true, what);
    assert.equal(n.error, null, what);
    assert.equal(String(n.step), String(js.step), what);
    assert.equal(n.call, js.call, what);
    assert.equal(n.reason, js.reason, what);
    assert.deepEqual(n.answers, js.answers, what);
    assert.deepEqual(js.answers, steps[i].answers, what);
  }

  // The explorer: 300 other delivery orders, the same final answers.
  const explore = replay('--explore', '300', '--seed', SEED, file);
  assert.equal(explore.status, 0, `--explore: ${explore.stdout}\n${explore.stderr}`);
  assert.match(explore.stdout, new RegExp(`seed ${SEED}, 300 order\\(s\\) of \\d+ input\\(s\\)`));
  assert.match(explore.stdout, /^0 order\(s\) with a different final answer \(expected 0\); 0 final answer\(s\) differ; 0 input\(s\) refused/m);
});

for (const [label, viewport] of [['desktop', DESKTOP], ['phone 390x844', PHONE]]) {
  test(`the inspector opens a recorded trace: one row per step, the recorded answers and explain at a step (${label})`, async () => {
    const { server, context } = await setup(viewport);
    const { page: demo } = await openRecording(context, server.url);
    const { taskId, sessionId, old, fresh } = await playOvertaken(demo);
    const text = await saveTrace(demo);
    // The panel's recording controls fit the phone too.
    await openPanel(demo);
    for (const id of ['record', 'save-trace', 'open-inspector', 'recording']) {
      const box = await devtools(demo, `[data-testid="${id}"]`).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width + 0.5 && box.y >= 0 && box.y + box.height <= viewport.height + 0.5, `${id} within the viewport: ${JSON.stringify(box)}`);
    }
    await assertNoOverflow(demo);
    await demo.screenshot({ path: path.join(ARTIFACTS, `record-${viewport.width}.png`) });
    await demo.close();
    const [header, steps] = lines(text);
    assert.equal(header.fresh, true);
    const file = tempTrace(text);

    // /inspect redirects to /inspect/ (the server's static files).
    const redirect = await fetch(`${server.url}/inspect`, { redirect: 'manual' });
    assert.ok([301, 302, 307, 308].includes(redirect.status), `GET /inspect: ${redirect.status}`);
    assert.equal(redirect.headers.get('location'), '/inspect/');

    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    await page.goto(`${server.url}/inspect`);
    await page.locator('body[data-ready="true"]').waitFor();
    await assertNoOverflow(page);
    await page.getByTestId('trace-file').setInputFiles(file);
    const summary = page.getByTestId('trace-summary');
    await eventually(async () => assert.equal(await summary.getAttribute('data-steps'), String(steps.length)));
    assert.equal(await summary.getAttribute('data-complete'), 'true');
    assert.equal(await summary.getAttribute('data-same'), 'true');

    // One row per step, in order, with its call and reason.
    const rows = await page.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.step, e.dataset.call, e.dataset.reason]));
    assert.deepEqual(rows, steps.map((s) => [String(s.step), s.call, s.reason ?? '']));

    // Steps to look at: where the first question became the session's, where the new turn
    // overtook it, where the second one became it, and the last step.
    const at = (pred) => steps.findIndex(pred);
    const asked = at((s) => s.answers.sessions?.[sessionId]?.clarification?.pending_id === old.pendingId);
    const overtaken = at((s, i) => i > asked && s.answers.sessions?.[sessionId] && s.answers.sessions[sessionId].clarification === null);
    const second = at((s) => s.answers.sessions?.[sessionId]?.clarification?.pending_id === fresh.pendingId);
    assert.ok(asked >= 0 && overtaken > asked && second > overtaken, `steps ${asked} ${overtaken} ${second}`);
    for (const k of [asked, overtaken, second, steps.length - 1]) {
      const row = page.locator(`[data-testid="step-row"][data-index="${k}"]`);
      await row.click();
      await eventually(async () => assert.equal(await page.getByTestId('step-title').getAttribute('data-step'), String(steps[k].step)));
      const expected = answersAt(steps, k);
      const shown = await page.evaluate(() => {
        const cards = (kind) => Object.fromEntries([...document.querySelectorAll(`[data-testid="answers-${kind}"]`)]
          .map((c) => [c.dataset.id, JSON.parse(c.dataset.answers)]));
        return { sessions: cards('session'), tasks: cards('task') };
      });
      assert.deepEqual(shown, expected, `answers after step ${steps[k].step}`);

      // explain(sessionId) and explainOwner(taskId) of a store replayed to that step.
      await page.getByTestId('explain-session').selectOption(sessionId);
      await page.getByTestId('explain-task').selectOption(taskId);
      const explained = await eventually(async () => {
        const e = await page.evaluate(() => ({
          session: JSON.parse(document.querySelector('[data-testid="explain-json"]').textContent),
          owner: JSON.parse(document.querySelector('[data-testid="explain-owner-json"]').textContent),
          question: document.querySelector('[data-testid="explain-question"]').dataset.reason,
        }));
        assert.equal(e.session.session_id, sessionId);
        assert.equal(e.owner.task_id, taskId);
        return e;
      });
      assertExplainAgrees(explained.session, expected.sessions[sessionId], `step ${steps[k].step}`);
      assertOwnerAgrees(explained.owner, expected.tasks[taskId], `step ${steps[k].step}`);
      assert.equal(explained.question, explained.session.clarification.reason);
      if (k === asked) {
        assert.equal(explained.session.clarification.reason, 'active_bundle');
        await screenshot(page, `inspect-step-${viewport.width}`);
      }
      if (k === second) {
        const standing = Object.fromEntries(explained.session.requests.map((r) => [r.pending_id, r.standing]));
        assert.equal(standing[old.pendingId], 'not_current_turn', 'the overtaken question, explained at the step');
      }
      await assertNoOverflow(page);
    }

    // Prev / Next reach the neighbouring steps (on a phone too).
    await page.getByTestId('prev-step').click();
    await eventually(async () => assert.equal(await page.getByTestId('step-title').getAttribute('data-step'), String(steps[steps.length - 2].step)));
    await page.getByTestId('next-step').click();
    await eventually(async () => assert.equal(await page.getByTestId('step-title').getAttribute('data-step'), String(steps[steps.length - 1].step)));
    for (const id of ['trace-file', 'attach', 'prev-step', 'next-step', 'explain-session', 'explain-task']) {
      const box = await page.getByTestId(id).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width + 0.5, `${id} within the viewport: ${JSON.stringify(box)}`);
    }
    await assertNoOverflow(page);
    await screenshot(page, `inspect-${viewport.width}`);

    // A malformed trace is refused with the package's typed error; the open one stays.
    await page.locator('details.paste summary').click();
    await page.getByTestId('trace-paste').fill('{"format":"task-projection-trace","version":1}\nnot json\n');
    await page.getByTestId('trace-paste-open').click();
    await eventually(async () => assert.match(await page.getByTestId('inspect-error').innerText(), /invalid_value: text: line 2/));
    assert.equal(await summary.getAttribute('data-steps'), String(steps.length));
    assert.deepEqual(problems, []);
  });
}

test('the inspector attaches to the live demo store: its inputs stream in as the demo plays', async () => {
  const { server, context } = await setup();
  const { page: demo, problems } = await openRecording(context, server.url);
  // The panel's "Open in inspector" (the inspector, attaching to this page: /inspect/#live).
  await openPanel(demo);
  const [inspector] = await Promise.all([context.waitForEvent('page'), devtools(demo, '[data-testid="open-inspector"]').click()]);
  assert.equal(new URL(inspector.url()).pathname, '/inspect/');
  await closePanel(demo);
  await inspector.locator('body[data-ready="true"]').waitFor();
  const status = inspector.getByTestId('live-status');
  await eventually(async () => assert.equal(await status.getAttribute('data-state'), 'attached'), { message: 'attached' });
  const summary = inspector.getByTestId('trace-summary');
  const before = Number(await summary.getAttribute('data-steps'));
  assert.ok(before > 0, 'the demo\'s first inputs are there');

  // The demo plays: the inspector's timeline follows, its last step showing the new question.
  await play(demo, 'new-task');
  const { sessionId } = await eventually(async () => {
    const r = await route(demo);
    assert.ok(r.sessionId);
    return r;
  });
  await play(demo, 'ask', 'question');
  const asked = await question(demo);
  await eventually(async () => {
    const shown = await inspector.locator(`[data-testid="answers-session"][data-id="${sessionId}"]`).getAttribute('data-answers');
    assert.equal(JSON.parse(shown).clarification?.pending_id, asked.pendingId);
  }, { message: 'the question reaches the inspector' });
  assert.ok(Number(await summary.getAttribute('data-steps')) > before);
  assert.equal(await summary.getAttribute('data-complete'), 'true');
  assert.equal(await summary.getAttribute('data-same'), 'true');
  await inspector.getByTestId('explain-session').selectOption(sessionId);
  assert.equal(await inspector.getByTestId('explain-question').getAttribute('data-reason'), 'active_bundle');

  // The streamed trace is the demo's: the same steps as the one the page holds now (its "Save trace").
  const text = await saveTrace(demo);
  const [header, steps] = lines(text);
  // Joined from the segments the page handed out: still one complete trace, replayed as recorded.
  assert.equal(header.fresh, true);
  assert.equal(header.dropped, 0);
  const check = replay('--check', tempTrace(text, 'live.ndjson'));
  assert.equal(check.status, 0, `--check: ${check.stdout}\n${check.stderr}`);
  await inspector.getByTestId('attach').click(); // asks again: the trace so far, inputs that changed no answer included
  await eventually(async () => assert.equal(await summary.getAttribute('data-steps'), String(steps.length)));
  const rows = await inspector.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.step, e.dataset.call]));
  assert.deepEqual(rows, steps.map((s) => [String(s.step), s.call]));
  await screenshot(inspector, 'inspect-live-1280');
  assert.deepEqual(problems, []);
});
