// Steps 1 and 3: the default wasm (stable toolchain) and the MVP wasm (pinned nightly, old
// WebViews), each through cargo -> wasm-bindgen --target web -> wasm-opt -O2 -ocimfs 0.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { OUT_NAME, PATH, capture, dev, fail, log, mvpDir, pkgDir, rel, root, run, timed, wasmOpt } from './common.mjs';

// --- MVP_DECISION --------------------------------------------------------------------------------
// Whether the MVP wasm replaces the default browser build: only if it is as small AND as fast.
// Measured 2026-11-29 on one build of the same sources (bench/node.mjs events, 1,000 messages, five
// interleaved fresh processes, median µs per message event + two queries): default 1.91, MVP 2.05
// (+7 %: without reference-types wasm-bindgen keeps JS values in a JS-side slab instead of an
// externref table); sizes: MVP 0.8 % smaller raw, 1.2 % smaller gzip. Not as fast, so the default
// stays the modern build and the MVP one ships as the `./mvp` export and the loader's second choice.
const MVP_AS_DEFAULT = false;

// --- 1. the default wasm (stable toolchain, default target features) ----------------------------
/** Builds pkg/ afresh with the default wasm and its glue; returns cargo's target dir and the wasm. */
export function buildDefaultWasm(libName) {
  timed('cargo (stable)', () => run('cargo', ['build', '--release', '--lib', '--target', 'wasm32-unknown-unknown'], { env: { ...process.env, PATH } }));
  const targetDir = JSON.parse(capture('cargo', ['metadata', '--format-version', '1', '--no-deps'])).target_directory;
  const rawWasm = path.join(targetDir, 'wasm32-unknown-unknown', 'release', `${libName}.wasm`);
  if (!fs.existsSync(rawWasm)) fail(`cargo produced no ${rawWasm}`);

  fs.rmSync(pkgDir, { recursive: true, force: true });
  run('wasm-bindgen', ['--target', 'web', '--out-dir', 'pkg', '--out-name', OUT_NAME, rel(rawWasm)], { env: { ...process.env, PATH } });

  const wasmPath = path.join(pkgDir, `${OUT_NAME}_bg.wasm`);
  const gluePath = path.join(pkgDir, `${OUT_NAME}.js`);
  const dtsPath = path.join(pkgDir, `${OUT_NAME}.d.ts`);
  for (const p of [wasmPath, gluePath, dtsPath]) if (!fs.existsSync(p)) fail(`wasm-bindgen did not write ${rel(p)}`);

  if (dev) {
    log('--dev: skipping wasm-opt');
  } else {
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
    // -O2 without inlining functions into their single caller (`-ocimfs 0`): 3 KB less gzip than
    // -Oz for 13 KB more raw (what a phone downloads is the compressed size; budgets.mjs has the
    // measurements).
    timed('wasm-opt (default)', () =>
      run(wasmOpt, [rel(wasmPath), '-o', rel(tmp), '-O2', '-ocimfs', '0', ...features, '--strip-debug', '--strip-producers', '--strip-target-features']),
    );
    fs.renameSync(tmp, wasmPath);
  }
  const wasmBytes = fs.readFileSync(wasmPath);
  if (!WebAssembly.validate(wasmBytes)) fail(`${rel(wasmPath)} does not validate`);
  return { targetDir, wasmBytes };
}

// --- 3. the MVP wasm (old WebViews) -----------------------------------------------------------------
// The same crate and profile, restricted to the WebAssembly 1.0 (MVP) feature set. Stable rustc's
// prebuilt std carries post-MVP features, so std is rebuilt from rust-src on nightly. Its own
// target dir keeps the stable build's cache valid. Cargo.toml is not touched: everything is env.
// The nightly is pinned (scripts/setup.sh installs exactly this one): -Zbuild-std is unstable,
// and a fresh machine must build what was measured here.
const NIGHTLY = 'nightly-2026-05-19';
/**
 * Builds the MVP wasm into <target>/mvp/bindgen (the fallback step starts from there) and copies
 * it and its glue into pkg/mvp/.
 */
export function buildMvpWasm({ libName, targetDir }) {
  const mvpTarget = path.join(targetDir, 'mvp');
  const mvpStage = path.join(mvpTarget, 'bindgen');
  timed('cargo (nightly, MVP)', () =>
    run(
      'cargo',
      [`+${NIGHTLY}`, 'build', '--release', '--lib', '--target', 'wasm32-unknown-unknown', '-Zbuild-std=std,panic_abort', '--target-dir', rel(mvpTarget)],
      {
        env: {
          ...process.env,
          PATH,
          RUSTFLAGS: '-C target-cpu=mvp',
          // rustup would otherwise pick the toolchain named in a rust-toolchain file or RUSTUP_TOOLCHAIN.
          RUSTUP_TOOLCHAIN: NIGHTLY,
        },
      },
    ),
  );
  const mvpRaw = path.join(mvpTarget, 'wasm32-unknown-unknown', 'release', `${libName}.wasm`);
  if (!fs.existsSync(mvpRaw)) fail(`cargo +nightly produced no ${rel(mvpRaw)}`);
  fs.rmSync(mvpStage, { recursive: true, force: true });
  run('wasm-bindgen', ['--target', 'web', '--out-dir', rel(mvpStage), '--out-name', OUT_NAME, rel(mvpRaw)], { env: { ...process.env, PATH } });
  const mvpWasmStage = path.join(mvpStage, `${OUT_NAME}_bg.wasm`);
  // --mvp-features: without it wasm-opt re-adds sign-ext (TOOLCHAIN.md).
  timed('wasm-opt (MVP)', () =>
    run(wasmOpt, [rel(mvpWasmStage), '-o', rel(`${mvpWasmStage}.opt`), '-O2', '-ocimfs', '0', '--mvp-features', '--strip-debug', '--strip-producers', '--strip-target-features']),
  );
  fs.renameSync(`${mvpWasmStage}.opt`, mvpWasmStage);
  // The gate: WebAssembly 1.0 only (no reference-types, multi-value, sign-ext, bulk-memory, ...).
  {
    const r = spawnSync('wasm-tools', ['validate', '--features', 'mvp', rel(mvpWasmStage)], { cwd: root, encoding: 'utf8', env: { ...process.env, PATH } });
    if (r.error) fail(`wasm-tools: ${r.error.message} (run scripts/setup.sh)`);
    if (r.status !== 0) fail(`the MVP wasm uses post-MVP features (wasm-tools validate --features mvp):\n${r.stderr}`);
    log(`gate: wasm-tools validate --features mvp ${rel(mvpWasmStage)}: ok`);
  }
  const mvpWasmBytes = fs.readFileSync(mvpWasmStage);
  const mvpGlue = fs.readFileSync(path.join(mvpStage, `${OUT_NAME}.js`), 'utf8');
  if (MVP_AS_DEFAULT) fail('MVP_AS_DEFAULT is not wired: see MVP_DECISION');
  fs.mkdirSync(mvpDir, { recursive: true });
  fs.writeFileSync(path.join(mvpDir, `${OUT_NAME}.js`), mvpGlue);
  fs.writeFileSync(path.join(mvpDir, `${OUT_NAME}_bg.wasm`), mvpWasmBytes);
  return { mvpStage, mvpWasmStage, mvpWasmBytes, mvpGlue };
}
