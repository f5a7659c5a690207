#!/usr/bin/env node
// Prepares the packaging fixtures from the built pkg/ (run by scripts/test-packaging.sh):
//   1. `npm pack pkg/` -> tests/artifacts/packaging/task-projection-<version>.tgz (every run);
//   2. copies tests/packaging/shared/* into each app (generated copies, git-ignored);
//   3. installs each app's dependencies from its committed lockfile with `npm ci`, skipped when
//      node_modules already matches (a stamp holds the hash of package.json + package-lock.json);
//   4. installs the tarball into each app's node_modules/task-projection (every run): unpacked
//      exactly as npm unpacks a tarball dependency (its package/ folder; the package has no
//      dependencies, no scripts and no bins). It is not listed in the apps' package.json, so their
//      lockfiles do not change with every build;
//   5. writes the React / Next.js examples of the installed package's README.md and guides/ (their ```tsx
//      blocks, each starting with its path `// app/...`) into next-app/app/readme/ (generated,
//      git-ignored), so that next.test.mjs builds and renders the README's own text.
// Prints one line per step with its duration.
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeBlocks, nextPath } from '../js/readme-blocks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const artifacts = path.join(root, 'tests', 'artifacts', 'packaging');
const esbuild = path.join(root, 'node_modules', '.bin', 'esbuild');
const say = (msg) => console.log(`packaging: ${msg}`);
const fail = (msg) => {
  console.error(`packaging: error: ${msg}`);
  process.exit(1);
};
function timed(label, fn) {
  const t0 = Date.now();
  const r = fn();
  say(`${label} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return r;
}
function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  if (r.error || r.status !== 0) {
    fail(`${cmd} ${args.join(' ')} (in ${path.relative(root, cwd) || '.'}) failed:\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

if (!fs.existsSync(path.join(root, 'pkg', 'package.json'))) fail('pkg/ is not built: run node scripts/build.mjs');

// 1. npm pack ------------------------------------------------------------------------------------
fs.mkdirSync(artifacts, { recursive: true });
for (const f of fs.readdirSync(artifacts)) if (f.endsWith('.tgz')) fs.rmSync(path.join(artifacts, f));
const packed = timed('npm pack pkg/', () => JSON.parse(run('npm', ['pack', path.join(root, 'pkg'), '--pack-destination', artifacts, '--json'], root)));
const tarball = path.join(artifacts, packed[0].filename);
say(`tarball ${path.relative(root, tarball)}: ${packed[0].entryCount} files, ${(packed[0].size / 1024).toFixed(1)} KB packed, ${(packed[0].unpackedSize / 1024).toFixed(1)} KB unpacked`);

// 2. shared sources -------------------------------------------------------------------------------
const shared = path.join(here, 'shared');
const copies = { 'next-app': 'app/_shared', 'vite-app': 'src/_shared' };
for (const [app, dir] of Object.entries(copies)) {
  const dest = path.join(here, app, dir);
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  for (const f of fs.readdirSync(shared)) {
    let text = fs.readFileSync(path.join(shared, f), 'utf8');
    // Vite warns about (and ignores) the React Server Components directive: drop it there.
    if (app === 'vite-app') text = text.replace(/^'use client';\n/m, '');
    fs.writeFileSync(path.join(dest, f), `// Generated copy of tests/packaging/shared/${f} (tests/packaging/prepare.mjs): edit the original.\n${text}`);
  }
}
// The Node scripts use the same scenario, compiled (types stripped) to ESM and CommonJS.
const nodeShared = path.join(here, 'node-app', '_shared');
fs.rmSync(nodeShared, { recursive: true, force: true });
for (const [format, ext] of [['esm', 'mjs'], ['cjs', 'cjs']]) {
  run(esbuild, [path.join(shared, 'scenario.ts'), `--format=${format}`, `--outfile=${path.join(nodeShared, `scenario.${ext}`)}`, '--log-level=warning'], root);
}
say('copied tests/packaging/shared into next-app/app/_shared, vite-app/src/_shared, node-app/_shared');

// 3. dependencies from the lockfiles ---------------------------------------------------------------
for (const app of ['next-app', 'vite-app', 'node-app']) {
  const dir = path.join(here, app);
  const lockfile = path.join(dir, 'package-lock.json');
  if (!fs.existsSync(lockfile)) fail(`${app}/package-lock.json is missing (commit it)`);
  const hash = createHash('sha256').update(fs.readFileSync(path.join(dir, 'package.json'))).update(fs.readFileSync(lockfile)).digest('hex');
  const stamp = path.join(dir, 'node_modules', '.fixture-lock-hash');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash) {
    say(`skip   npm ci in ${app} (node_modules matches package-lock.json)`);
    continue;
  }
  timed(`npm ci in ${app}`, () => {
    const deps = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    if (deps.dependencies || deps.devDependencies) {
      // Never --omit=optional: Next needs its optional @next/swc-<platform> binary.
      run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    }
    fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    fs.writeFileSync(stamp, hash);
  });
}

// 4. the tarball ------------------------------------------------------------------------------------
for (const app of ['next-app', 'vite-app', 'node-app']) {
  const dest = path.join(here, app, 'node_modules', 'task-projection');
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '--strip-components=1', '-C', dest]);
}
say(`installed ${packed[0].filename} into next-app, vite-app, node-app (node_modules/task-projection)`);

// 5. the README's Next.js examples (the README's and its guides' tsx blocks) -----------------------
{
  const installed = path.join(here, 'next-app', 'node_modules', 'task-projection');
  const documents = ['README.md', ...fs.readdirSync(path.join(installed, 'guides')).filter((f) => f.endsWith('.md')).sort().map((g) => `guides/${g}`)];
  const dest = path.join(here, 'next-app', 'app', 'readme');
  fs.rmSync(dest, { recursive: true, force: true });
  const tsx = documents.flatMap((doc) => codeBlocks(fs.readFileSync(path.join(installed, doc), 'utf8')).filter((b) => b.lang === 'tsx').map((b) => ({ ...b, doc })));
  if (tsx.length === 0) fail('the package README and guides have no tsx block (the React / Next.js example)');
  for (const block of tsx) {
    const file = nextPath(block);
    if (!file) fail(`${block.doc} line ${block.line}: a tsx block starts with its path, // app/<path>.tsx`);
    const out = path.join(dest, file.slice('app/'.length));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, block.code);
  }
  say(`wrote the README's and guides' ${tsx.length} tsx blocks into next-app/app/readme/ (${tsx.map(nextPath).join(', ')})`);
}
