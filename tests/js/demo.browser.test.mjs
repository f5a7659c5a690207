// The demo page (www/, built into www/dist/ by www/build.mjs) without its server: served by the
// static server, the page loads the package's browser entry through its import map, finds no
// reference server behind /api/v1/, and must say so visibly instead of failing silently. The
// page's behaviour against the real server is covered by tests/e2e/. The package's devtools panel
// (/pkg/devtools-dom.js) is mounted all the same.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { repoRoot, startStaticServer } from '../../scripts/serve.mjs';
import { launchChromium } from './browser.mjs';

let server;
let browser;

before(async () => {
  const built = spawnSync(process.execPath, ['www/build.mjs', '--no-check'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(built.status, 0, `www/build.mjs failed:\n${built.stdout}${built.stderr}`);
  fs.mkdirSync(new URL('../artifacts/', import.meta.url), { recursive: true });
  server = await startStaticServer();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

for (const [label, viewport] of [
  ['phone 390x844', { width: 390, height: 844 }],
  ['desktop 1280x800', { width: 1280, height: 800 }],
]) {
  test(`demo page shows a visible error when the server is unreachable (${label})`, async () => {
    const page = await browser.newPage({ viewport });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${server.url}/www/dist/index.html`);
    const banner = page.getByRole('alert');
    await banner.waitFor({ state: 'visible', timeout: 15_000 });
    assert.match(await banner.innerText(), /Cannot reach the server|Could not load/);
    // (The header's: the devtools panel has a connection line of its own.)
    assert.equal(await page.locator('header [data-testid="connection"]').innerText(), 'Offline');
    // The engine itself loaded from /pkg/ (the import map) before the connection failed.
    const pkgLoads = server.requests.filter((r) => r.path.startsWith('/pkg/') && r.status === 200).map((r) => r.path);
    assert.ok(pkgLoads.includes('/pkg/development/index.js') && pkgLoads.some((p) => p.endsWith('.wasm')), `pkg loads: ${pkgLoads}`);
    // ... and the package's devtools panel, mounted: its toggle on screen.
    assert.ok(pkgLoads.includes('/pkg/devtools-dom.js'), `pkg loads: ${pkgLoads}`);
    await page.locator('task-projection-devtools button.toggle').waitFor({ state: 'visible' });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the viewport`);
    assert.deepEqual(pageErrors, []);
    await page.screenshot({ path: new URL(`../artifacts/demo-offline-${viewport.width}.png`, import.meta.url).pathname });
    await page.close();
  });
}
