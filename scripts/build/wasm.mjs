// Steps 1 and 3: each module's default wasm and MVP wasm (both on the pinned nightly, std rebuilt
// with the crate), each through cargo -> wasm-bindgen --target web -> wasm-opt -O2 -ocimfs 0. A
// module (common.mjs, MODULES) is one export set of the crate (a Cargo feature): the store
// (`task-projection`) and the stateless rules (`task-projection/rules`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { OUT_NAME, PATH, capture, dev, fail, log, pkgDir, rel, root, run, timed, wasmOpt } from './common.mjs';

// --- MVP_DECISION --------------------------------------------------------------------------------
// Whether the MVP wasm replaces the default browser build: only if it is as small AND as fast.
// Measured 2026-11-29 on one build of the same sources (bench/node.mjs events, 1,000 messages, five
// interleaved fresh processes, median µs per message event + two queries): default 1.91, MVP 2.05
// (+7 %: without reference-types wasm-bindgen keeps JS values in a JS-side slab instead of an
// externref table); sizes: MVP 0.8 % smaller raw, 1.2 % smaller gzip. Not as fast, so the default
// stays the modern build and the MVP one ships as the `./mvp` export and the loader's second choice.
const MVP_AS_DEFAULT = false;

// The pinned nightly (scripts/setup.sh installs exactly this one, with rust-src): -Zbuild-std and
// -Cpanic=immediate-abort are unstable, and a fresh machine must build what was measured here.
const NIGHTLY = 'nightly-2026-05-19';

// Both wasm builds compile std with the crate (-Zbuild-std), so LTO and the flags below reach it:
// - `-Cpanic=immediate-abort`: a panic is a bare `unreachable` (no message formatting, no panic
//   machinery). The crate denies every panicking construct outside tests (clippy), so there is
//   no message to lose: -6.4 KB gzip.
// - `-inline-threshold=75` (LLVM's default is 225): fewer large functions copied into their
//   callers: -4.4 KB gzip, per event within the noise of five interleaved Node runs (2026-12-02,
//   docs/benchmarks.md, "Build size").
// - `-Zfmt-debug=none`, `-Zlocation-detail=none`: `Debug` formatting and panic locations
//   compiled out (nothing in a wasm build prints either): rules wasm -1.6 KB gzip; the store's
//   production build links no `core::fmt` at all (its numbers and error messages are written by
//   `crate::text`), so the flags change nothing there.
// Measured and not taken (docs/benchmarks.md, "Build size"): `opt-level = "z"` (production store -4.2 KB
// gzip, +20 % per event in Node), `-Oz` in wasm-opt (+4 to +8 KB gzip).
// The size flags' measurements: docs/benchmarks.md ("Build size"); the profile (opt-level 2, LTO, one codegen unit) is
// Cargo.toml's [profile.release], with `panic = "abort"` added here (Cargo.toml leaves it out so
// native optimized tests and benchmarks build the library once).
const SIZE_FLAGS = ['-Zunstable-options', '-Cpanic=immediate-abort', '-Cllvm-args=-inline-threshold=75', '-Zfmt-debug=none', '-Zlocation-detail=none'];

/** cargo on the pinned nightly for one module, std rebuilt; returns the raw wasm's path. */
function cargoWasm({ libName, module, targetDir, rustflags }) {
  run(
    'cargo',
    [
      `+${NIGHTLY}`, 'build', '--release', '--config', 'profile.release.panic="abort"', '--lib',
      '--target', 'wasm32-unknown-unknown', '-Zbuild-std=std,panic_abort', '--no-default-features', '--features', module.feature,
      '--target-dir', rel(targetDir),
    ],
    {
      env: {
        ...process.env,
        PATH,
        RUSTFLAGS: [...rustflags, ...SIZE_FLAGS].join(' '),
        // rustup would otherwise pick the toolchain named in a rust-toolchain file or RUSTUP_TOOLCHAIN.
        RUSTUP_TOOLCHAIN: NIGHTLY,
      },
    },
  );
  const raw = path.join(targetDir, 'wasm32-unknown-unknown', 'release', `${libName}.wasm`);
  if (!fs.existsSync(raw)) fail(`cargo +nightly produced no ${rel(raw)}`);
  return raw;
}

/**
 * `module`'s default wasm as cargo builds it (before wasm-bindgen and wasm-opt: the function names
 * kept), e.g. for a profile (bench/run.mjs --profile); the modules share target/web, so this
 * rebuilds (from cache) what another module's build replaced.
 */
export function buildRawWasm({ libName, module, targetDir }) {
  return cargoWasm({ libName, module, targetDir: path.join(targetDir, 'web'), rustflags: [] });
}

/** The cargo target dir of the build (`cargo metadata`). */
export function cargoTargetDir() {
  return JSON.parse(capture('cargo', ['metadata', '--format-version', '1', '--no-deps'])).target_directory;
}

/** Empties pkg/ (once, before the first module is written into it). */
export function cleanPackage() {
  fs.rmSync(pkgDir, { recursive: true, force: true });
}

// --- 1. the default wasm (default target features) -------------------------------------------------
/**
 * Builds `module`'s default wasm and its glue into `module.dir` (its own target dir, target/web, so
 * the stable native and test builds stay valid); returns the wasm's bytes.
 */
export function buildDefaultWasm({ libName, module, targetDir }) {
  const rawWasm = timed(`cargo (${module.name})`, () => buildRawWasm({ libName, module, targetDir }));
  fs.mkdirSync(module.dir, { recursive: true });
  run('wasm-bindgen', ['--target', 'web', '--out-dir', rel(module.dir), '--out-name', OUT_NAME, rel(rawWasm)], { env: { ...process.env, PATH } });

  const wasmPath = path.join(module.dir, `${OUT_NAME}_bg.wasm`);
  const gluePath = path.join(module.dir, `${OUT_NAME}.js`);
  const dtsPath = path.join(module.dir, `${OUT_NAME}.d.ts`);
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
    // -Oz for 13 KB more raw (what a phone downloads is the compressed size; docs/benchmarks.md,
    // "Build size").
    timed(`wasm-opt (${module.name})`, () =>
      run(wasmOpt, [rel(wasmPath), '-o', rel(tmp), '-O2', '-ocimfs', '0', ...features, '--strip-debug', '--strip-producers', '--strip-target-features']),
    );
    fs.renameSync(tmp, wasmPath);
  }
  const wasmBytes = fs.readFileSync(wasmPath);
  if (!WebAssembly.validate(wasmBytes)) fail(`${rel(wasmPath)} does not validate`);
  return wasmBytes;
}

// --- 3. the MVP wasm (old WebViews) -----------------------------------------------------------------
// The same crate and profile, restricted to the WebAssembly 1.0 (MVP) feature set (-C
// target-cpu=mvp, so std is rebuilt for it too), in its own target dir (target/mvp).
/**
 * Builds `module`'s MVP wasm into <target>/mvp/bindgen-<module> (the fallback step starts from
 * there) and copies it and its glue into `module.dir`/mvp/.
 */
export function buildMvpWasm({ libName, module, targetDir }) {
  const mvpStage = path.join(targetDir, 'mvp', `bindgen-${module.name}`);
  const mvpRaw = timed(`cargo (${module.name}, MVP)`, () =>
    cargoWasm({ libName, module, targetDir: path.join(targetDir, 'mvp'), rustflags: ['-C', 'target-cpu=mvp'] }),
  );
  fs.rmSync(mvpStage, { recursive: true, force: true });
  run('wasm-bindgen', ['--target', 'web', '--out-dir', rel(mvpStage), '--out-name', OUT_NAME, rel(mvpRaw)], { env: { ...process.env, PATH } });
  const mvpWasmStage = path.join(mvpStage, `${OUT_NAME}_bg.wasm`);
  // --mvp-features: without it wasm-opt re-adds sign-ext (TOOLCHAIN.md).
  timed(`wasm-opt (${module.name}, MVP)`, () =>
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
  const mvpDir = path.join(module.dir, 'mvp');
  fs.mkdirSync(mvpDir, { recursive: true });
  fs.writeFileSync(path.join(mvpDir, `${OUT_NAME}.js`), mvpGlue);
  fs.writeFileSync(path.join(mvpDir, `${OUT_NAME}_bg.wasm`), mvpWasmBytes);
  return { mvpStage, mvpWasmStage, mvpWasmBytes, mvpGlue };
}
