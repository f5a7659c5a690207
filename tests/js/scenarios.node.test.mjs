// Every case of tests/fixtures/scenarios.json against the built package's `node` entry of
// `task-projection/rules` (the stateless functions), imported
// by package name (ESM `import`) and again through `require` (Node >= 20.19 loads the ES module
// synchronously: require(esm)). One test per case, named by the case.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import * as imported from 'task-projection/rules';
import { readCases } from './fixture.mjs';
import { runCase } from './runner.mjs';

const require = createRequire(import.meta.url);
const required = require('task-projection/rules');
const cases = readCases();

for (const [label, api] of [
  ['node entry via import', imported],
  ['node entry via require', required],
]) {
  describe(label, () => {
    for (const c of cases) test(c.name, () => runCase(api, c, assert));
  });
}

describe('fixture coverage', () => {
  test('every SCENARIOS.md scenario 1-54 has at least one case', () => {
    const covered = new Set(cases.map((c) => c.scenario).filter((n) => Number.isInteger(n)));
    const missing = [];
    for (let n = 1; n <= 54; n++) if (!covered.has(n)) missing.push(n);
    assert.equal(missing.join(', '), '', 'SCENARIOS.md numbers without a case in the fixture');
  });

  test('every error code has a malformed-input case', () => {
    const codes = new Set(cases.filter((c) => c.error).map((c) => c.error.code));
    for (const code of ['invalid_type', 'invalid_value', 'invalid_revision', 'malformed_epoch']) {
      assert.ok(codes.has(code), `no "error" case with code ${code}`);
    }
  });
});
