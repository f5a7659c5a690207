// The packed tarball in a stock Vite app (tests/packaging/vite-app: no wasm plugin, no config):
// `vite build`, `vite preview`, headless Chromium. The static import path, and the loader in
// three engines: with WebAssembly, with WebAssembly 1.0 only (old WebViews), without WebAssembly.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MVP_ONLY_ENGINE, NO_WEBASSEMBLY, checkDemoPage, exec, freePort, here, launchBrowser, serve } from './harness.mjs';

const app = path.join(here, 'vite-app');
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
    assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 2, assets.join(', '));
    assert.ok(assets.some((f) => /^fallback-.*\.js$/.test(f)), `a fallback chunk: ${assets.join(', ')}`);
  });

  test('static import + init(): the component renders the pending question and owner', async () => {
    await checkDemoPage(browser, server.url, { screenshot: 'vite-static.png', backend: 'wasm (static import)' });
  });

  test('loadTaskProjection() picks the wasm and never fetches the fallback', async () => {
    const { requests } = await checkDemoPage(browser, `${server.url}?mode=loader`, { screenshot: 'vite-loader-wasm.png', backend: 'wasm' });
    assert.ok(!requests.some((u) => /fallback-[^/]*\.js$/.test(u)), `fallback chunk fetched: ${requests.join(', ')}`);
  });

  test('loadTaskProjection() on a WebAssembly 1.0 engine (old WebView) picks the MVP wasm', async () => {
    await checkDemoPage(browser, `${server.url}?mode=loader`, { initScript: MVP_ONLY_ENGINE, screenshot: 'vite-loader-mvp.png', backend: 'mvp' });
  });

  test('loadTaskProjection() without WebAssembly (Lockdown Mode) runs the JS fallback', async () => {
    await checkDemoPage(browser, `${server.url}?mode=loader`, { initScript: NO_WEBASSEMBLY, screenshot: 'vite-loader-no-webassembly.png', backend: 'js' });
  });
});
