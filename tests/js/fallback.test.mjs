// The pure-JS builds (`task-projection/fallback` and `task-projection/rules/fallback`: binaryen's
// wasm2js of each module's MVP wasm, same Rust)
// in Node without WebAssembly: once with `WebAssembly` deleted before anything loads, once under
// --jitless (where V8 has no WebAssembly either). In each: every case of the scenario files, and
// the differential workload of fallback-diff.mjs (random pure-function inputs and random store
// event sequences, malformed ones included) compared line by line with the wasm build run here.
// Prints the fallback's speed ratio to the wasm on that workload (with and without JIT).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as wasmStore from 'task-projection';
import * as wasmRules from 'task-projection/rules';
import { runWorkload } from './fallback-diff.mjs';

// The store's module and the rules' module, each in its wasm build.
const wasm = { ...wasmStore, ...wasmRules };
const here = path.dirname(fileURLToPath(import.meta.url));
const WORKLOAD = { seed: 20261129, pure: 3000, sequences: 300 };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'tp-fallback-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

// Warm-up pass (the JIT), then the reference pass whose time the ratios use.
runWorkload(wasm, { ...WORKLOAD, pure: 300, sequences: 30 });
const reference = runWorkload(wasm, WORKLOAD);

function child(name, flags) {
  const out = path.join(tmp, `${name}.json`);
  const r = spawnSync(process.execPath, [...flags, path.join(here, 'fallback-diff.mjs'), out, String(WORKLOAD.seed), String(WORKLOAD.pure), String(WORKLOAD.sequences)], {
    cwd: here,
    encoding: 'utf8',
    timeout: 240_000,
  });
  assert.equal(r.status, 0, `child ${name} failed:\n${r.stderr}`);
  return JSON.parse(readFileSync(out, 'utf8'));
}

for (const [name, flags] of [
  ['no-webassembly', ['--import', 'data:text/javascript,delete globalThis.WebAssembly']],
  ['jitless', ['--jitless']],
]) {
  describe(`fallback, ${name === 'jitless' ? 'node --jitless' : 'WebAssembly deleted'}`, () => {
    const result = child(name, flags);

    test('WebAssembly is really absent', () => {
      assert.equal(result.webAssembly, 'undefined');
    });

    test(`scenarios.json: all ${result.scenarios.length} cases pass`, () => {
      assert.ok(result.scenarios.length >= 100, `${result.scenarios.length} cases`);
      const failed = result.scenarios.filter((c) => !c.ok);
      assert.deepEqual(failed, []);
    });

    test(`store_scenarios.json: all ${result.storeScenarios.length} cases pass`, () => {
      const failed = result.storeScenarios.filter((c) => !c.ok);
      assert.deepEqual(failed, []);
    });

    test(`differential: ${WORKLOAD.pure} random pure calls + ${WORKLOAD.sequences} store sequences, zero differences from the wasm`, (t) => {
      const got = result.workload.out;
      assert.equal(got.length, reference.out.length);
      const diffs = [];
      for (let i = 0; i < got.length; i++) if (got[i] !== reference.out[i]) diffs.push(i);
      const errors = reference.out.filter((l) => l.includes('"threw"')).length;
      t.diagnostic(`${got.length} results compared (${result.workload.storeOps} store operations, each followed by ${3 + 5 * 3 + 4 * 2} queries; ${errors} with a thrown error)`);
      t.diagnostic(`speed: wasm ${reference.ms.toFixed(0)} ms, fallback (${name}) ${result.workload.ms.toFixed(0)} ms: ${(result.workload.ms / reference.ms).toFixed(1)}x the wasm`);
      assert.equal(diffs.length, 0, `first differences:\n${diffs.slice(0, 3).map((i) => `  wasm:     ${reference.out[i].slice(0, 400)}\n  fallback: ${got[i].slice(0, 400)}`).join('\n')}`);
    });
  });
}
