// `node scripts/build.mjs --if-changed` (npm start) does nothing when pkg/ was built from the
// inputs there are now (the build that ran before `npm test`'s JS tests wrote the stamp), and the
// stamp stops matching when any input changes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { inputsDigest, upToDate } from '../../scripts/build/stamp.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const targetDir = JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: root, encoding: 'utf8' })).target_directory;

test('--if-changed skips a build whose inputs are unchanged, in seconds', () => {
  // Never start a build from here (other test files read pkg/ meanwhile): pkg/ must be built from
  // the inputs there are now, as it is after `npm test`'s build step.
  assert.ok(upToDate(targetDir, inputsDigest({ dev: false, node: process.versions.node })),
    'pkg/ is not built from the current inputs: run node scripts/build.mjs first');
  const wasm = path.join(root, 'pkg', 'task_projection_bg.wasm');
  const before = fs.statSync(wasm).mtimeMs;
  const t0 = Date.now();
  const out = execFileSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: root, encoding: 'utf8' });
  assert.match(out, /pkg\/ is up to date/);
  assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
  assert.equal(fs.statSync(wasm).mtimeMs, before, 'pkg/ untouched');
});

test('the inputs digest changes with any input, and a changed digest is not up to date', () => {
  const flags = { dev: false, node: process.versions.node };
  const now = inputsDigest(flags);
  assert.equal(inputsDigest(flags), now, 'deterministic');
  assert.notEqual(inputsDigest({ ...flags, dev: true }), now, 'a --dev build is another build');
  assert.ok(upToDate(targetDir, now), 'the build before the tests wrote the stamp');
  assert.equal(upToDate(targetDir, `${now.slice(1)}0`), false);
  // A source file changed (and changed back).
  const file = path.join(root, 'js', 'load.js');
  const text = fs.readFileSync(file, 'utf8');
  try {
    fs.writeFileSync(file, `${text}\n`);
    assert.notEqual(inputsDigest(flags), now);
  } finally {
    fs.writeFileSync(file, text);
  }
  assert.equal(inputsDigest(flags), now);
});
