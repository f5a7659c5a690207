// Smoke test of the demo (www/) in headless Chromium at a phone viewport (390x844) and a desktop
// one: it loads the package's browser entry, steps through the whole scripted stream without
// errors or horizontal overflow, and shows the engine's decisions at key steps.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startStaticServer } from '../../scripts/serve.mjs';
import { launchChromium, watchPage } from './browser.mjs';

const artifacts = new URL('../artifacts/', import.meta.url);
let server;
let browser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startStaticServer();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const factText = (page, key) => page.locator(`[data-fact="${key}"]`).first().innerText();

for (const [label, viewport] of [
  ['phone 390x844', { width: 390, height: 844 }],
  ['desktop 1280x800', { width: 1280, height: 800 }],
]) {
  test(`demo steps through the scripted stream (${label})`, async () => {
    const page = await browser.newPage({ viewport });
    const problems = watchPage(page);
    await page.goto(`${server.url}/www/`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });

    const total = Number((await page.locator('#counter').innerText()).split('/')[1]);
    assert.ok(total >= 8, `the story has ${total} steps`);
    const seen = [];
    for (let i = 1; i <= total; i++) {
      if (i > 1) await page.getByRole('button', { name: 'Next step' }).click();
      assert.equal(await page.locator('#counter').innerText(), `${i} / ${total}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `step ${i}: page is ${overflow}px wider than the viewport`);
      seen.push({
        step: i,
        task: (await factText(page, 'task-action')).split('\n')[0],
        owner: (await factText(page, 'owner')).split('\n')[0],
      });
      if (i === 3 && viewport.width === 390) await page.screenshot({ path: new URL('demo-390-step3.png', artifacts).pathname, fullPage: true });
    }
    assert.equal(await page.getByRole('button', { name: 'Next step' }).isDisabled(), true);
    // Decisions the story is built to show (computed by the package, not by the page).
    assert.deepEqual(seen[0], { step: 1, task: 'clean', owner: 'sess-main' });
    assert.deepEqual(seen[3], { step: 4, task: 'clarification', owner: 'sess-review' });
    assert.deepEqual(seen[4], { step: 5, task: 'clarification', owner: 'sess-review' });
    assert.deepEqual(seen.at(-1), { step: total, task: 'permission', owner: 'sess-main' });
    await page.screenshot({ path: new URL(`demo-${viewport.width}.png`, artifacts).pathname, fullPage: true });
    assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
    await page.close();
  });
}
