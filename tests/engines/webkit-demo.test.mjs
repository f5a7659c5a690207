// The demo page (www/dist) in WebKit at 390×844 (a phone's viewport; iOS web views run WebKit),
// against the real reference server on a throwaway SQLite file (tests/e2e/harness.mjs's
// startServer: `--port 0 --simulator`), driven through WebDriver by the page's own controls:
// a new task, the agent asks one question ("Play the agent" → "One question"), the page scrolls
// to it, the session's "Why?" opens the package's devtools panel on the session (a full-width
// sheet: it says the session waits for your answer), the user types an answer and submits; the
// question leaves, the answer shows under it and the agent completes its turn. The simplest scenario of tests/e2e/demo.e2e.test.mjs, which runs
// them all in Chromium. Screenshots: tests/artifacts/engines/webkit-demo-*.png.
//
// Needs `node www/build.mjs` and
// `cargo build -p task-projection-server --bin task-projection-server` (the engines stage of
// scripts/test.sh runs both).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoOverflow, assertPlainWords, eventually, newTaskOpened, pageState, ROOT, serverBinary, startServer } from '../e2e/harness.mjs';
import { elementId, launch, selectedEngines } from './webdriver.mjs';

const PHONE = { width: 390, height: 844 };
const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts', 'engines');
const skip = !selectedEngines().includes('webkit') && `not in ENGINES=${process.env.ENGINES}`;

let browser;
let server;

before(async () => {
  if (skip) return;
  serverBinary(); // a clear message when the server or www/dist is not built
  server = await startServer();
  browser = await launch('webkit');
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The harness's DOM readers (pageState, route, ...) take a Playwright page; this one runs their function through WebDriver. */
const pageOf = (session) => ({
  evaluate: (fn, arg) => session.execute(`return (${fn}).apply(null, arguments);`, arg === undefined ? [] : [arg]),
});

async function screenshot(session, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, `${name}.png`), await session.screenshot());
}

test(`webkit demo (phone ${PHONE.width}x${PHONE.height}): one question is shown, answered and leaves`, { skip, timeout: 180_000 }, async () => {
  const { session } = browser;
  const page = pageOf(session);
  try {
    await session.setWindowRect(PHONE);
    await session.navigate(`${server.url}/`);
    // www/boot.js sets data-ready="error" (and shows a banner) when the page script or the package fails to load.
    const ready = await session.waitFor(`['true', 'error'].includes(document.body.dataset.ready) ? document.body.dataset.ready : undefined`, 20_000);
    assert.equal(ready, 'true', `the page did not start: ${await session.execute(`return document.getElementById('error-banner')?.textContent`)}`);
    assert.deepEqual(await session.execute('return [innerWidth, innerHeight]'), [PHONE.width, PHONE.height], 'the viewport is the phone\'s');
    // WebDriver (classic) cannot read the console: collect errors from here on.
    await session.execute(`
      window.__problems = [];
      addEventListener('error', (e) => __problems.push('pageerror: ' + e.message));
      addEventListener('unhandledrejection', (e) => __problems.push('unhandledrejection: ' + (e.reason && e.reason.message || e.reason)));
      const error = console.error.bind(console);
      console.error = (...args) => { __problems.push('console.error: ' + args.join(' ')); error(...args); };`);
    await session.waitFor(`document.querySelector('[data-testid="sim-panel"]')?.getClientRects().length ? true : undefined`, 10_000);

    /**
     * Clicks a "Play the agent" button once enabled (WebDriver Element Click: scrolled into view,
     * clicked at its centre) and waits for its action to finish.
     */
    const status = () => session.execute(`const s = document.querySelector('[data-testid="sim-status"]'); return [Number(s.dataset.done), s.dataset.kind, s.textContent];`);
    async function play(action, scenario = 'panel') {
      const [before] = await status();
      await session.clickWhenReady(`[data-testid="sim-panel"] [data-scenario="${scenario}"] [data-action="${action}"]`);
      const [, kind, text] = await eventually(async () => {
        const now = await status();
        assert.ok(now[0] > before);
        return now;
      }, { message: `${action} finished` });
      assert.equal(kind, 'info', `${action}: ${text}`);
    }

    // A new task: the page opens its main session, working.
    await play('new-task');
    const { taskId, sessionId } = await newTaskOpened(page);

    // The agent asks one question: it shows, answerable, and the page scrolls to it.
    await play('ask', 'question');
    const asked = await eventually(async () => {
      const s = await pageState(page);
      assert.ok(s.overlay, 'a question is shown');
      assert.equal(s.overlay.questions.length, 1);
      assert.equal(s.answerFields, 1);
      assert.equal(s.tasks[taskId], 'clarification');
      assert.equal(s.sessionPending, 'clarification');
      return s.overlay;
    }, { message: 'the question appears' });
    await eventually(async () => {
      const y = await session.execute(`return document.querySelector('[role="dialog"]').getBoundingClientRect().y`);
      assert.ok(y >= 0 && y < PHONE.height - 120, `question at y=${Math.round(y)} of a ${PHONE.height}px viewport`);
    }, { message: 'the page scrolls to the question' });
    await assertNoOverflow(page);
    await screenshot(session, `webkit-demo-question-${PHONE.width}`);

    // The session's "Why?": the devtools panel (its shadow root, styled under the server's
    // Content-Security-Policy) opens on the session, as wide as the phone, nothing past its edge.
    await session.clickWhenReady('[data-testid="why-button"]');
    const panel = await eventually(async () => {
      const p = await session.execute(`
        const root = document.querySelector('task-projection-devtools').shadowRoot;
        const h3 = root.querySelector('h3');
        const box = root.querySelector('.panel').getBoundingClientRect();
        const waits = root.querySelector('[data-answer="Waits for"]');
        return { id: h3 && h3.dataset.id, left: box.left, right: box.right, position: getComputedStyle(root.querySelector('.panel')).position,
          waits: waits && waits.firstChild.textContent, overflow: root.querySelector('.panel').scrollWidth - root.querySelector('.panel').clientWidth };`);
      assert.equal(p.id, sessionId, 'the panel explains the session');
      return p;
    }, { message: 'the panel opens on the session' });
    assert.equal(panel.position, 'fixed', 'the panel is styled');
    assert.equal(panel.waits, 'your answer');
    assert.deepEqual([Math.round(panel.left), Math.round(panel.right)], [0, PHONE.width], 'a full-width sheet');
    assert.ok(panel.overflow <= 0, `the panel is ${panel.overflow}px wider than its box`);
    await assertPlainWords(page); // the open panel too, outside its details lines
    await assertNoOverflow(page);
    await screenshot(session, `webkit-demo-devtools-${PHONE.width}`);
    await session.execute(`document.querySelector('task-projection-devtools').shadowRoot.querySelector('button.close').click()`);
    await session.waitFor(`document.querySelector('task-projection-devtools').shadowRoot.querySelector('.panel').hidden || undefined`, 5000);

    // Typed key by key into the answer field, then Submit.
    const answer = 'Yes, ship it on Friday';
    const field = elementId(await session.execute(`return document.querySelector('[role="dialog"] [data-testid="answer-input"]')`));
    assert.ok(field, 'the answer field');
    await session.sendKeys(field, answer);
    await session.clickWhenReady('[role="dialog"] [data-testid="submit"]');

    await eventually(async () => {
      const s = await pageState(page);
      assert.equal(s.overlay, null, 'the question left');
      assert.equal(s.answerFields, 0);
      assert.equal(s.tasks[taskId], 'none');
      assert.equal(s.sessionPending, 'none');
      assert.deepEqual(s.history.map((q) => [q.text, q.status, q.shown]), [[asked.questions[0], 'answered', `answer: ${answer}`]], 'the answer under its question');
      assert.equal(s.sessionWords, 'Idle', 'the agent completed its turn');
      const said = await session.execute(`return [...document.querySelectorAll('[data-testid="message"]')].map((m) => m.textContent)`);
      assert.ok(said.some((text) => text.includes('Thanks, continuing with your answers.')), 'the agent carried on');
    }, { message: 'after Submit' });

    // The server agrees: the session rests, its question answered.
    const sessions = (await server.get(`/api/v1/tasks/${taskId}/task-sessions`)).sessions;
    assert.equal(sessions.find((x) => x.id === sessionId)?.state, 'IDLE');
    await assertPlainWords(page);
    await assertNoOverflow(page);
    await screenshot(session, `webkit-demo-question-answered-${PHONE.width}`);
    assert.deepEqual(await session.execute('return window.__problems'), [], 'no page error or console.error');
  } catch (err) {
    await screenshot(session, `webkit-demo-failure-${PHONE.width}`).catch(() => {});
    throw err;
  }
});
