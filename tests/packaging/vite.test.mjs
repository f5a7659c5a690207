// The packed tarball in a stock Vite app (tests/packaging/vite-app: no wasm plugin, no config):
// `vite build`, `vite preview`, headless Chromium. The static import path, and the loader in
// three engines: with WebAssembly, with WebAssembly 1.0 only (old WebViews), without WebAssembly.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MVP_ONLY_ENGINE, NO_WEBASSEMBLY, checkDemoPage, exec, freePort, here, launchBrowser, serve } from './harness.mjs';

const app = path.join(here, 'vite-app');
const pkgDir = path.join(here, '..', '..', 'pkg');
/** The `.wasm` files of the built app's dist/assets, by which of the package's wasm each one is. */
function wasmAssets() {
  const known = new Map(['task_projection_bg.wasm', 'mvp/task_projection_bg.wasm', 'rules/task_projection_bg.wasm', 'rules/mvp/task_projection_bg.wasm']
    .map((f) => [fs.readFileSync(path.join(pkgDir, f)).toString('base64'), f]));
  const dir = path.join(app, 'dist', 'assets');
  return new Map(fs.readdirSync(dir).filter((f) => f.endsWith('.wasm'))
    .map((f) => [f, known.get(fs.readFileSync(path.join(dir, f)).toString('base64')) ?? 'unknown']));
}
const bin = (name) => path.join(app, 'node_modules', '.bin', name);

describe('Vite app', () => {
  let server;
  let browser;
  before(async () => {
    fs.rmSync(path.join(app, 'dist'), { recursive: true, force: true });
    await exec(bin('vite'), ['build'], { cwd: app });
    const port = await freePort();
    server = await serve(bin('vite'), ['preview', '--port', String(port), '--strictPort', '--host', 'localhost'], { cwd: app, url: `http://localhost:${port}/` });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the build emits the wasm, the MVP wasm and the JS fallback as separate assets', () => {
    const assets = fs.readdirSync(path.join(app, 'dist', 'assets'));
    const wasm = [...wasmAssets().values()];
    // The store's two; the loader's module also names the rules' wasm files (loadTaskProjectionRules),
    // which Vite emits although no chunk of this app can fetch them (the next tests check none is).
    assert.ok(wasm.includes('task_projection_bg.wasm') && wasm.includes('mvp/task_projection_bg.wasm'), wasm.join(', '));
    assert.ok(!wasm.includes('unknown'), wasm.join(', '));
    assert.ok(assets.some((f) => /^fallback-.*\.js$/.test(f)), `a fallback chunk: ${assets.join(', ')}`);
  });

  test('static import + init(): the component renders the pending question and owner, fetching only the store\'s wasm', async () => {
    const { requests } = await checkDemoPage(browser, server.url, { screenshot: 'vite-static.png', backend: 'wasm (static import)' });
    const which = wasmAssets();
    const fetched = requests.map((u) => which.get(u.split('/').pop())).filter(Boolean);
    assert.deepEqual(fetched, ['task_projection_bg.wasm'], requests.join(', '));
  });

  test('loadTaskProjection() picks the wasm and never fetches the fallback', async () => {
    const { requests } = await checkDemoPage(browser, `${server.url}?mode=loader`, { screenshot: 'vite-loader-wasm.png', backend: 'wasm' });
    assert.ok(!requests.some((u) => /fallback-[^/]*\.js$/.test(u)), `fallback chunk fetched: ${requests.join(', ')}`);
    const which = wasmAssets();
    assert.deepEqual(requests.map((u) => which.get(u.split('/').pop())).filter(Boolean), ['task_projection_bg.wasm'], requests.join(', '));
  });

  test('loadTaskProjection() on a WebAssembly 1.0 engine (old WebView) picks the MVP wasm', async () => {
    await checkDemoPage(browser, `${server.url}?mode=loader`, { initScript: MVP_ONLY_ENGINE, screenshot: 'vite-loader-mvp.png', backend: 'mvp' });
  });

  test('loadTaskProjection() without WebAssembly (Lockdown Mode) runs the JS fallback', async () => {
    await checkDemoPage(browser, `${server.url}?mode=loader`, { initScript: NO_WEBASSEMBLY, screenshot: 'vite-loader-no-webassembly.png', backend: 'js' });
  });
});
