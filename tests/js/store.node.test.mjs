// Every case of tests/fixtures/store_scenarios.json through `new ProjectionStore()` of the built
// package's `node` entry, imported by package name (ESM `import`) and again through `require`.
// One test per case, named by the case.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import * as imported from 'task-projection';
import { loadStoreCases, runStoreCase } from './store-runner.mjs';

const require = createRequire(import.meta.url);
const required = require('task-projection');
const storeFixtureUrl = new URL('../fixtures/store_scenarios.json', import.meta.url);
const cases = loadStoreCases(JSON.parse(readFileSync(storeFixtureUrl, 'utf8')));

for (const [label, api] of [
  ['store: node entry via import', imported],
  ['store: node entry via require', required],
]) {
  describe(label, () => {
    test('exports the ProjectionStore class and boundedLoad', () => {
      assert.equal(typeof api.ProjectionStore, 'function');
      assert.equal(typeof api.boundedLoad, 'function');
    });
    for (const c of cases) test(c.name, () => runStoreCase(api.ProjectionStore, c, assert));
  });
}

describe('store fixture coverage', () => {
  test('every SCENARIOS.md scenario 36-54 has a store case', () => {
    const covered = new Set(cases.map((c) => c.scenario).filter(Number.isInteger));
    const missing = [];
    for (let n = 36; n <= 54; n++) if (!covered.has(n)) missing.push(n);
    assert.equal(missing.join(', '), '', 'SCENARIOS.md numbers 36-54 without a store case');
  });

  test('every error code reachable through the store has a malformed-input step', () => {
    const codes = new Set(cases.flatMap((c) => c.steps.filter((s) => s.error).map((s) => s.error.code)));
    for (const code of ['invalid_type', 'invalid_value', 'invalid_revision']) {
      assert.ok(codes.has(code), `no "error" step with code ${code}`);
    }
  });

  test('every ProjectionStore call of the format is exercised', () => {
    const used = new Set(cases.flatMap((c) => c.steps.map((s) => s.call)));
    // The package's class extends the wasm class (js/store.js): collect the whole chain.
    const proto = [];
    for (let p = imported.ProjectionStore.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      proto.push(...Object.getOwnPropertyNames(p));
    }
    for (const name of ['applySessionList', 'applyTurnList', 'applyMessagePage', 'applyMessageEvent', 'applyMessageEvents',
      'applyTurnEvent', 'applySessionEvent', 'applyStatusSummaryEvent', 'applyTaskUpdated', 'removeTask', 'beginTaskFetch',
      'applyTaskSnapshot', 'beginSelection', 'setActiveTask', 'settleSelection', 'dispose', 'sessionPendingAction',
      'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission', 'taskPendingAction',
      'taskStatusSummary', 'pendingOwner']) {
      assert.ok(used.has(name), `no step calls ${name}`);
      assert.ok(proto.includes(name), `ProjectionStore.prototype has no ${name}`);
    }
  });
});
