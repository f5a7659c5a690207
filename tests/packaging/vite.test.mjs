// The packed tarball in a stock Vite app (tests/packaging/vite-app: no wasm plugin, no config):
// `vite build`, `vite preview`, headless Chromium. The static import path, and the loader in
// three engines: with WebAssembly, with WebAssembly 1.0 only (old WebViews), without WebAssembly.
// The build carries the production wasm only; the dev server (`vite`, with the README's
// optimizeDeps exclusion) serves the development build, whose explain() works. The devtools panel
// (?mode=devtools, mountDevtools): it explains under the dev server, and says it needs the
// development build in `vite build`'s output.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MVP_ONLY_ENGINE, NO_WEBASSEMBLY, checkDemoPage, checkDevtoolsPage, devEnv, exec, filesWithStoreWasm, freePort, here, launchBrowser, serve, wasmName } from './harness.mjs';

const app = path.join(here, 'vite-app');
/** The `.wasm` files of the built app's dist/assets, by which of the package's wasm each one is. */
function wasmAssets() {
  const dir = path.join(app, 'dist', 'assets');
  return new Map(fs.readdirSync(dir).filter((f) => f.endsWith('.wasm')).map((f) => [f, wasmName(fs.readFileSync(path.join(dir, f)))]));
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

  test('the build carries the production wasm and nothing of the development build\'s', () => {
    // As an asset or embedded (base64), in any file of dist/.
    const found = filesWithStoreWasm(path.join(app, 'dist'));
    assert.deepEqual(found.development, [], 'files holding the development wasm');
    assert.deepEqual(found.production.map((f) => wasmName(fs.readFileSync(path.join(app, 'dist', f)))), ['task_projection_bg.wasm'], found.production.join(', '));
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

  test('the devtools panel (mountDevtools, task-projection/devtools/dom) on the production build: one line says it needs the development build', async () => {
    await checkDevtoolsPage(browser, `${server.url}?mode=devtools`, { build: 'production', screenshot: 'vite-devtools.png' });
  });

  test('loadTaskProjection() on a WebAssembly 1.0 engine (old WebView) picks the MVP wasm', async () => {
    await checkDemoPage(browser, `${server.url}?mode=loader`, { initScript: MVP_ONLY_ENGINE, screenshot: 'vite-loader-mvp.png', backend: 'mvp' });
  });

  test('loadTaskProjection() without WebAssembly (Lockdown Mode) runs the JS fallback', async () => {
    await checkDemoPage(browser, `${server.url}?mode=loader`, { initScript: NO_WEBASSEMBLY, screenshot: 'vite-loader-no-webassembly.png', backend: 'js' });
  });
});

// `vite` (the dev server, NODE_ENV unset as a developer runs it): Vite's `development|production`
// condition resolves to `development`, so the page gets the development build and its wasm.
describe('Vite dev server', () => {
  let server;
  let browser;
  before(async () => {
    // Its pre-bundled dependencies: the package keeps its version while its contents change.
    fs.rmSync(path.join(app, 'node_modules', '.vite'), { recursive: true, force: true });
    const port = await freePort();
    server = await serve(bin('vite'), ['--config', 'vite.dev.config.mjs', '--port', String(port), '--strictPort', '--host', 'localhost'], { cwd: app, url: `http://localhost:${port}/`, env: devEnv() });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('static import + init(): the development build (explain() works), its wasm fetched', async () => {
    const { wasm } = await checkDemoPage(browser, server.url, { screenshot: 'vite-dev-static.png', backend: 'wasm (static import)', strictMode: true, build: 'development' });
    assert.deepEqual(wasm, ['development/task_projection_bg.wasm']);
  });

  test('the devtools panel (mountDevtools, task-projection/devtools/dom): a session\'s and a task\'s explanation as the store gives them', async () => {
    await checkDevtoolsPage(browser, `${server.url}?mode=devtools`, { build: 'development', screenshot: 'vite-dev-devtools.png' });
  });
});
