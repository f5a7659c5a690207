#!/usr/bin/env node
// Builds the npm package `task-projection` into pkg/ (generated; never edit pkg/ by hand).
//
//   node scripts/build.mjs          release build + wasm-opt -Oz
//   node scripts/build.mjs --dev    release build, no wasm-opt on the default wasm (faster, larger;
//                                   its size budget is not checked)
//
// Steps (each in scripts/build/, run in this order by the driver below):
//   1. cargo (stable, wasm32) -> wasm-bindgen --target web -> wasm-opt -Oz (npm binaryen, never
//      the Debian one) = the default wasm (pkg/task_projection_bg.wasm + pkg/task_projection.js).
//      [wasm.mjs]
//   2. pkg/node.js: the server/edge entry (wasm embedded as base64, initSync at import).
//      [package.mjs, from static/node.js]
//   3. The MVP build for old WebViews (Safari/iOS < 15.1, old Android WebViews: no reference-types,
//      no multi-value): nightly + rust-src, -Zbuild-std=std,panic_abort, -C target-cpu=mvp, in its
//      own target dir (target/mvp, so the stable builds stay valid) -> wasm-bindgen --target web ->
//      wasm-opt -Oz --mvp-features -> gate: `wasm-tools validate --features mvp`.
//      -> pkg/mvp/ (the `./mvp` export; see MVP_DECISION in wasm.mjs for why it is not the default).
//      [wasm.mjs]
//   4. The pure-JS fallback (no WebAssembly at all): binaryen's wasm2js on the MVP wasm, minified
//      by esbuild, driven by the MVP build's own wasm-bindgen glue with three fixes (no bare
//      imports, memory views refreshed after growth, 64-bit integers split into 32-bit halves)
//      -> pkg/fallback/ (the `./fallback` export). [fallback.mjs, wasm-signatures.mjs]
//   5. The loader (`task-projection/loader`: loadTaskProjection() tries wasm, then the MVP wasm,
//      then the JS fallback), index.js, store.js copies, react helper, package.json, README.
//      [package.mjs; the static entries are files in static/, copied byte for byte]
//   6. Smoke checks: node.js instantiates; the fallback runs with WebAssembly deleted. [smoke.mjs]
//   7. Links pkg/ as `task-projection` for the in-repo consumers (tests/js, tests/types).
//      [package.mjs]
//   8. Sizes (raw, gzip, brotli) of every artifact; the build FAILS when one exceeds its budget.
//      [sizes.mjs; the budgets and their history: budgets.mjs]
// Shared paths, flags and helpers (run, log, fail, timed): common.mjs.
import { preflight, fail, log, timings } from './build/common.mjs';
import { buildFallback } from './build/fallback.mjs';
import { assemblePackage, linkConsumers, writeNodeEntry } from './build/package.mjs';
import { BUDGETS_AT, reportSizes } from './build/sizes.mjs';
import { smokeChecks } from './build/smoke.mjs';
import { buildDefaultWasm, buildMvpWasm } from './build/wasm.mjs';

const started = Date.now();
const crate = preflight();
const { targetDir, wasmBytes } = buildDefaultWasm(crate.libName); // 1
writeNodeEntry(wasmBytes); // 2
const mvp = buildMvpWasm({ libName: crate.libName, targetDir }); // 3
buildFallback(mvp); // 4
assemblePackage(crate); // 5
smokeChecks(); // 6
linkConsumers(); // 7
const over = reportSizes(); // 8
log(`timings: ${timings.join(', ')}`);
if (over.length) fail(`size budget exceeded (budgets: ${BUDGETS_AT}):\n  ${over.join('\n  ')}`);
log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s: pkg/ task-projection@${crate.version}`);
