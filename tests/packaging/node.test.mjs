// The packed tarball from plain Node (tests/packaging/node-app): ESM import and CommonJS require
// by package name, the loader and the fallback, with and without WebAssembly, and which build
// (production, or development under --conditions=development) each resolves.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { exec, here, scenario } from './harness.mjs';

const app = path.join(here, 'node-app');
const { EXPECTED } = scenario;
const node = (...args) => exec(process.execPath, args, { cwd: app }).then((out) => JSON.parse(out.trim().split('\n').pop()));

describe('Node consumers of the tarball', () => {
  test('ESM import: node entry, loader (wasm), fallback; the rules from their own module', async () => {
    const r = await node('esm.mjs');
    assert.deepEqual(r.import, { ...EXPECTED, version: 'number' });
    assert.equal(r.compare, 1);
    assert.equal(r.storeHasRules, false);
    assert.deepEqual(r.rules, { fallback: 1, loader: { backend: 'wasm', compare: 1 } });
    assert.deepEqual(r.fallback, { ...EXPECTED, version: 'number' });
    assert.deepEqual(r.loader, { backend: 'wasm', failures: [], ...EXPECTED, version: 'number' });
  });

  test('CommonJS require: node entry and fallback', async () => {
    const r = await node('cjs.cjs');
    assert.deepEqual(r.require, EXPECTED);
    assert.equal(r.compare, 1);
    assert.deepEqual(r.fallback, EXPECTED);
  });

  test('explain(): the production build by default, the development build under --conditions=development', async () => {
    const { EXPLAINED } = scenario;
    assert.deepEqual(await node('explain.mjs'), { import: EXPLAINED.production, require: EXPLAINED.production, development: EXPLAINED.development });
    assert.deepEqual(await node('--conditions=development', 'explain.mjs'), { import: EXPLAINED.development, require: EXPLAINED.development, development: EXPLAINED.development });
  });

  test('without WebAssembly (--jitless): the loader falls back to JS', async () => {
    const r = await node('--jitless', 'no-wasm.mjs');
    assert.equal(r.webAssembly, 'undefined');
    assert.deepEqual(r.fallback, EXPECTED);
    assert.deepEqual(r.loader, { backend: 'js', failures: ['wasm: ReferenceError'], ...EXPECTED });
    assert.deepEqual(r.rules, { backend: 'js', policy: 'new' });
  });

  test('WebAssembly deleted before import: the loader falls back to JS', async () => {
    const r = await node('--import', 'data:text/javascript,delete globalThis.WebAssembly', 'no-wasm.mjs');
    assert.equal(r.webAssembly, 'undefined');
    assert.deepEqual(r.loader, { backend: 'js', failures: ['wasm: ReferenceError'], ...EXPECTED });
    assert.deepEqual(r.rules, { backend: 'js', policy: 'new' });
  });
});
