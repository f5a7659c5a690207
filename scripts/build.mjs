#!/usr/bin/env node
// Builds the npm package `task-projection` into pkg/ (generated; never edit pkg/ by hand).
//
//   node scripts/build.mjs          release build + wasm-opt -Oz
//   node scripts/build.mjs --dev    release build, no wasm-opt (faster, larger)
//
// Steps: cargo (wasm32) -> wasm-bindgen --target web -> wasm-opt -Oz (npm binaryen, never the
// Debian one) -> pkg/node.js (wasm embedded as base64, initSync at import) -> pkg/package.json ->
// smoke check that both the optimized module and node.js instantiate -> size report.
// Finally it links pkg/ as `task-projection` for the in-repo consumers (tests/js, tests/types).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = path.join(root, 'pkg');
const dev = process.argv.includes('--dev');
const GZIP_BUDGET = 40 * 1024;
const OUT_NAME = 'task_projection';

const rel = (p) => path.relative(root, p) || '.';
function log(msg) {
  console.log(`build: ${msg}`);
}
function fail(msg) {
  console.error(`build: error: ${msg}`);
  process.exit(1);
}
function run(cmd, args, opts = {}) {
  log(`$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} exited with ${r.status ?? r.signal}`);
}
function capture(cmd, args) {
  return execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const started = Date.now();

// --- versions -------------------------------------------------------------------------------
const cargoToml = fs.readFileSync(path.join(root, 'Cargo.toml'), 'utf8');
const pkgSection = cargoToml.split(/^\[/m).find((s) => s.startsWith('package]'));
const field = (name) => pkgSection?.match(new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, 'm'))?.[1];
const version = field('version');
const crateName = field('name');
if (!version || !crateName) fail('could not read [package] name/version from Cargo.toml');

// --- 1. cargo ----------------------------------------------------------------------------------
run('cargo', ['build', '--release', '--lib', '--target', 'wasm32-unknown-unknown']);
const targetDir = JSON.parse(capture('cargo', ['metadata', '--format-version', '1', '--no-deps'])).target_directory;
const rawWasm = path.join(targetDir, 'wasm32-unknown-unknown', 'release', `${crateName.replace(/-/g, '_')}.wasm`);
if (!fs.existsSync(rawWasm)) fail(`cargo produced no ${rawWasm}`);

// --- 2. wasm-bindgen (CLI must equal the crate's wasm-bindgen exactly) -------------------------
const lock = fs.readFileSync(path.join(root, 'Cargo.lock'), 'utf8');
const lockedBindgen = lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/)?.[1];
let cliVersion;
try {
  cliVersion = capture('wasm-bindgen', ['--version']).trim().split(/\s+/)[1];
} catch {
  fail('wasm-bindgen not found on PATH: run scripts/setup.sh');
}
if (lockedBindgen && cliVersion !== lockedBindgen) {
  fail(`wasm-bindgen CLI ${cliVersion} != crate wasm-bindgen ${lockedBindgen} (Cargo.lock): run scripts/setup.sh`);
}
fs.rmSync(pkgDir, { recursive: true, force: true });
run('wasm-bindgen', ['--target', 'web', '--out-dir', 'pkg', '--out-name', OUT_NAME, rel(rawWasm)]);

const wasmPath = path.join(pkgDir, `${OUT_NAME}_bg.wasm`);
const gluePath = path.join(pkgDir, `${OUT_NAME}.js`);
const dtsPath = path.join(pkgDir, `${OUT_NAME}.d.ts`);
for (const p of [wasmPath, gluePath, dtsPath]) if (!fs.existsSync(p)) fail(`wasm-bindgen did not write ${rel(p)}`);

// --- 3. wasm-opt -------------------------------------------------------------------------------
if (dev) {
  log('--dev: skipping wasm-opt');
} else {
  const wasmOpt = path.join(root, 'node_modules', '.bin', 'wasm-opt');
  if (!fs.existsSync(wasmOpt)) fail('node_modules/.bin/wasm-opt missing (npm binaryen): run scripts/setup.sh');
  // Enable exactly the features the module declares (its target_features section, written by
  // rustc: reference-types for the externref table, multivalue, bulk-memory, ...), so wasm-opt
  // neither rejects the input nor introduces a feature the module did not already require.
  const features = capture(wasmOpt, ['--print-features', rel(wasmPath)])
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('--enable-'));
  if (!features.includes('--enable-reference-types')) {
    log(`warning: module declares no reference-types (features: ${features.join(' ') || 'none'})`);
  }
  const tmp = `${wasmPath}.opt`;
  run(wasmOpt, [
    rel(wasmPath), '-o', rel(tmp), '-Oz', ...features,
    '--strip-debug', '--strip-producers', '--strip-target-features',
  ]);
  fs.renameSync(tmp, wasmPath);
}
const wasmBytes = fs.readFileSync(wasmPath);
if (!WebAssembly.validate(wasmBytes)) fail(`${rel(wasmPath)} does not validate`);

// --- 4. pkg/node.js: the server/edge entry -----------------------------------------------------
const nodeJs = `// Generated by scripts/build.mjs: do not edit.
// Entry for the \`node\` and \`edge-light\` export conditions: the wasm is embedded (base64) and
// instantiated synchronously at import, so the API is usable right away, with no file access,
// no fetch and no top-level await. Browsers and bundlers get ./index.js instead.
import { initSync } from './${OUT_NAME}.js';

export * from './${OUT_NAME}.js';
export { ProjectionStore } from './store.js';

const WASM_BASE64 = '${wasmBytes.toString('base64')}';

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const wasm = initSync({ module: decodeBase64(WASM_BASE64) });

/**
 * No-op: the module is already initialized at import. Kept so code written for the browser
 * entry (\`await init()\`) runs unchanged; like the browser entry's init() once initialized, it
 * resolves to the wasm instance's exports. Arguments are ignored.
 */
export default async function init() {
  return wasm;
}
`;
const nodeJsPath = path.join(pkgDir, 'node.js');
fs.writeFileSync(nodeJsPath, nodeJs);

// --- 5. pkg/package.json, README ----------------------------------------------------------------
const files = [`${OUT_NAME}_bg.wasm`, `${OUT_NAME}.js`, `${OUT_NAME}.d.ts`, `${OUT_NAME}_bg.wasm.d.ts`, 'node.js'];
// The `default` entry: the web glue (its init() fetches the .wasm through new URL(...,
// import.meta.url), which bundlers emit as an asset) plus the store with its JS fast path.
const indexJs = `// Generated by scripts/build.mjs: do not edit.
// Entry for browsers and bundlers (the \`default\` export condition): call \`await init()\` once.
export * from './${OUT_NAME}.js';
export { default } from './${OUT_NAME}.js';
export { ProjectionStore } from './store.js';
`;
fs.writeFileSync(path.join(pkgDir, 'index.js'), indexJs);
fs.copyFileSync(path.join(root, 'js', 'store.js'), path.join(pkgDir, 'store.js'));
files.push('index.js', 'store.js');
// Hand-written JS helpers shipped beside the generated code (React-agnostic useSyncExternalStore
// wiring): js/<name>.js + js/<name>.d.ts become the `./<name>` export.
for (const helper of ['react']) {
  for (const ext of ['.js', '.d.ts']) {
    fs.copyFileSync(path.join(root, 'js', `${helper}${ext}`), path.join(pkgDir, `${helper}${ext}`));
    files.push(`${helper}${ext}`);
  }
}
for (const doc of ['README.md', 'LICENSE', 'LICENSE-MIT']) {
  const src = path.join(root, doc);
  if (fs.existsSync(src)) {
    fs.copyFileSync(src, path.join(pkgDir, doc));
    files.push(doc);
  } else if (doc === 'README.md') {
    log('warning: no README.md at the repo root; the package ships without one');
  }
}
const description = field('description');
const license = field('license');
const repository = field('repository');
const pkgJson = {
  name: 'task-projection',
  version,
  ...(description && { description }),
  ...(license && { license }),
  ...(repository && { repository }),
  type: 'module',
  // Key order matters: resolvers take the first matching condition.
  exports: {
    '.': {
      types: `./${OUT_NAME}.d.ts`,
      node: './node.js',
      'edge-light': './node.js',
      default: './index.js',
    },
    './react': { types: './react.d.ts', default: './react.js' },
    './package.json': './package.json',
  },
  // Fallbacks for resolvers that ignore "exports".
  main: './node.js',
  module: './index.js',
  types: `./${OUT_NAME}.d.ts`,
  files,
  sideEffects: ['./node.js'],
};
fs.writeFileSync(path.join(pkgDir, 'package.json'), `${JSON.stringify(pkgJson, null, 2)}\n`);

// --- 6. smoke check: the optimized module instantiates through node.js ---------------------------
const smoke = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `const m = await import(${JSON.stringify(pathToFileURL(nodeJsPath).href)});
     const fns = Object.keys(m).filter((k) => typeof m[k] === 'function');
     if (fns.length < 3) throw new Error('node.js exports only: ' + Object.keys(m).join(', '));
     if (typeof m.normalizeStartPolicy === 'function' && m.normalizeStartPolicy(' new ') !== 'new')
       throw new Error('normalizeStartPolicy(" new ") !== "new"');
     console.log(fns.length);`,
  ],
  { cwd: root, encoding: 'utf8' },
);
if (smoke.status !== 0) fail(`pkg/node.js does not instantiate:\n${smoke.stderr}`);
log(`smoke check: pkg/node.js instantiated, ${smoke.stdout.trim()} functions exported`);

// --- 7. link pkg/ as the package `task-projection` for the in-repo consumers ------------------
// tests/js and tests/types import `task-projection` by name, resolved through pkg/package.json's
// "exports" exactly as an app would. The links live in those folders (not in the root
// node_modules, which npm ci/install would prune) and are ignored by git.
for (const consumer of ['tests/js', 'tests/types']) {
  const dir = path.join(root, consumer, 'node_modules');
  const link = path.join(dir, 'task-projection');
  fs.mkdirSync(dir, { recursive: true });
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(path.relative(dir, pkgDir), link, 'dir');
}
log('linked tests/js/node_modules/task-projection and tests/types/node_modules/task-projection -> pkg/');

// --- 8. sizes ------------------------------------------------------------------------------------
function sizes(buf) {
  return {
    raw: buf.length,
    gzip: zlib.gzipSync(buf, { level: 9 }).length,
    brotli: zlib.brotliCompressSync(buf, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: buf.length,
      },
    }).length,
  };
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
const rows = [
  [`pkg/${OUT_NAME}_bg.wasm${dev ? ' (--dev, not optimized)' : ''}`, sizes(wasmBytes)],
  [`pkg/${OUT_NAME}.js`, sizes(fs.readFileSync(gluePath))],
  ['pkg/node.js (embeds the wasm)', sizes(Buffer.from(nodeJs))],
];
console.log(`\n${'file'.padEnd(44)}${'raw'.padStart(9)}${'gzip'.padStart(9)}${'brotli'.padStart(9)}`);
for (const [name, s] of rows) console.log(`${name.padEnd(44)}${kb(s.raw)}${kb(s.gzip)}${kb(s.brotli)}`);
const wasmGzip = rows[0][1].gzip;
console.log(
  `wasm: ${wasmBytes.length} B raw, ${wasmGzip} B gzip, ${rows[0][1].brotli} B brotli; ` +
    `budget ${GZIP_BUDGET / 1024} KB gzip: ${wasmGzip <= GZIP_BUDGET ? 'ok' : 'OVER BUDGET'}`,
);
log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s: pkg/ task-projection@${version}`);
