// Shared by the build steps (scripts/build.mjs runs them): paths, flags, tools, and the
// run/log/fail/timed helpers. Every command runs from the repo root.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const pkgDir = path.join(root, 'pkg');
/**
 * The package's modules, each one export set of the crate (Cargo features) built into its own
 * wasm, with the JS that wraps it (js/<name>, copied beside each of its glue copies: the module's
 * directory and, unless `variants` says otherwise, its mvp/ and fallback/ subdirectories):
 * - `store`: `task-projection` (pkg/): ProjectionStore and boundedLoad, the production build (the
 *   recorder of `startRecording` and `replayTrace` are `task-projection/trace`, helpers of
 *   package.mjs);
 * - `store-development`: the same API with the development features (pkg/development/: the
 *   `development` export condition of `task-projection`, and `task-projection/development`);
 * - `rules`: `task-projection/rules` (pkg/rules/): the stateless rule functions.
 * `at` is the module's directory in pkg/; `entry` fills the placeholders of the static entries
 * (static/README.md): its import name, the JS wrapping its wasm exports, its export lines.
 */
export const MODULES = [
  {
    name: 'store', feature: 'store-exports', dir: pkgDir, at: '', js: ['read.js', 'store.js', 'load.js'],
    entry: { MODULE: 'task-projection', WRAPPER: 'store.js', EXPORTS: "export { ProjectionStore } from './store.js';\nexport { boundedLoad } from './load.js';" },
  },
  {
    name: 'store-development', checks: 'store', feature: 'store-exports,development', dir: path.join(pkgDir, 'development'), at: 'development', js: ['read.js', 'store.js', 'load.js'],
    // The development build of the store: its wasm keeps `explain`, `explainOwner`, the rejection
    // log, `digest`, `stats` and the recorder's hook (Cargo feature `development`). Only the
    // default wasm and node.js: the MVP and fallback builds are for old engines in production.
    variants: [''],
    entry: { MODULE: 'task-projection (development build)', WRAPPER: 'store.js', EXPORTS: "export { ProjectionStore } from './store.js';\nexport { boundedLoad } from './load.js';" },
  },
  {
    name: 'rules', feature: 'rules-exports', dir: path.join(pkgDir, 'rules'), at: 'rules', js: ['read.js', 'api.js'],
    entry: { MODULE: 'task-projection/rules', WRAPPER: 'api.js', EXPORTS: "export * from './api.js';" },
  },
];
/** The glue directories of `module`: '' (its own), then 'mvp' and 'fallback' unless it has fewer. */
export const variantsOf = (module) => module.variants ?? ['', 'mvp', 'fallback'];
/** The static entries (scripts/build/static/) copied into pkg/ by the package step. */
export const staticDir = path.join(root, 'scripts', 'build', 'static');
export const dev = process.argv.includes('--dev');
// Also spelled out in the static entries (scripts/build/static/) and in js/store.js.
export const OUT_NAME = 'task_projection';

export const rel = (p) => path.relative(root, p) || '.';
export function log(msg) {
  console.log(`build: ${msg}`);
}
export function fail(msg) {
  console.error(`build: error: ${msg}`);
  process.exit(1);
}
export function run(cmd, args, opts = {}) {
  log(`$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} exited with ${r.status ?? r.signal}`);
}
export function capture(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}
/** One `<name> <seconds> s` entry per timed() call, printed by the driver (`build: timings: ...`). */
export const timings = [];
export function timed(name, fn) {
  const t0 = Date.now();
  const r = fn();
  timings.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return r;
}

const cargoBin = path.join(process.env.CARGO_HOME ?? path.join(process.env.HOME ?? '', '.cargo'), 'bin');
export const PATH = `${cargoBin}${path.delimiter}${process.env.PATH ?? ''}`;
export const wasmOpt = path.join(root, 'node_modules', '.bin', 'wasm-opt');
export const wasm2js = path.join(root, 'node_modules', '.bin', 'wasm2js');
export const esbuild = path.join(root, 'node_modules', '.bin', 'esbuild');

/**
 * Fails unless the npm tools are installed and the wasm-bindgen CLI matches the crate; returns
 * the crate's [package] fields from Cargo.toml.
 */
export function preflight() {
  for (const [tool, p] of [['wasm-opt', wasmOpt], ['wasm2js', wasm2js], ['esbuild', esbuild]]) {
    if (!fs.existsSync(p)) fail(`node_modules/.bin/${tool} missing (npm devDependencies): run scripts/setup.sh`);
  }

  // --- versions ---
  const cargoToml = fs.readFileSync(path.join(root, 'Cargo.toml'), 'utf8');
  const pkgSection = cargoToml.split(/^\[/m).find((s) => s.startsWith('package]'));
  const field = (name) => pkgSection?.match(new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, 'm'))?.[1];
  const version = field('version');
  const crateName = field('name');
  if (!version || !crateName) fail('could not read [package] name/version from Cargo.toml');
  const libName = crateName.replace(/-/g, '_');

  const lock = fs.readFileSync(path.join(root, 'Cargo.lock'), 'utf8');
  const lockedBindgen = lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/)?.[1];
  let cliVersion;
  try {
    cliVersion = capture('wasm-bindgen', ['--version'], { env: { ...process.env, PATH } }).trim().split(/\s+/)[1];
  } catch {
    fail('wasm-bindgen not found on PATH: run scripts/setup.sh');
  }
  if (lockedBindgen && cliVersion !== lockedBindgen) {
    fail(`wasm-bindgen CLI ${cliVersion} != crate wasm-bindgen ${lockedBindgen} (Cargo.lock): run scripts/setup.sh`);
  }
  return { version, libName, description: field('description'), license: field('license'), repository: field('repository') };
}
