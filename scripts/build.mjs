#!/usr/bin/env node
// Builds the npm package `task-projection` into pkg/ (generated; never edit pkg/ by hand).
//
//   node scripts/build.mjs          release build + wasm-opt -O2 -ocimfs 0
//   node scripts/build.mjs --dev    release build, no wasm-opt on the default wasm (faster, larger;
//                                   its size budget is not checked)
//   node scripts/build.mjs --if-changed   nothing when pkg/ was built from the same inputs
//                                   (npm start; stamp.mjs says what the inputs are)
//
// The package has three modules (common.mjs, MODULES), each one export set of the crate (Cargo
// features) in its own wasm: the store (`task-projection`, pkg/: the production build), its
// development build (pkg/development/: the `development` export condition; steps 1-2 only) and
// the stateless rule functions (`task-projection/rules`, pkg/rules/). Steps 1-4 run for each
// module, into its directory.
// Steps (each in scripts/build/, run in this order by the driver below):
//   1. cargo (pinned nightly, wasm32, std rebuilt with -Cpanic=immediate-abort and a lower inline
//      threshold, target/web) -> wasm-bindgen --target web -> wasm-opt -O2 -ocimfs 0 (npm
//      binaryen, never the Debian one) = the default wasm (<dir>/task_projection_bg.wasm +
//      <dir>/task_projection.js). [wasm.mjs]
//   2. <dir>/node.js: the server/edge entry (wasm embedded as base64, initSync at import).
//      [package.mjs, from static/[rules/]node.js]
//   3. The MVP build for old WebViews (Safari/iOS < 15.1, old Android WebViews: no reference-types,
//      no multi-value): the same with -C target-cpu=mvp, in its own target dir (target/mvp) ->
//      wasm-bindgen --target web -> wasm-opt --mvp-features -> gate: `wasm-tools validate
//      --features mvp`. -> <dir>/mvp/ (the `./mvp` and `./rules/mvp` exports; see MVP_DECISION in
//      wasm.mjs for why it is not the default). [wasm.mjs]
//   4. The pure-JS fallback (no WebAssembly at all): binaryen's wasm2js on the MVP wasm, minified
//      by esbuild, driven by the MVP build's own wasm-bindgen glue with three fixes (no bare
//      imports, memory views refreshed after growth, 64-bit integers split into 32-bit halves)
//      -> <dir>/fallback/ (`./fallback`, `./rules/fallback`). [fallback.mjs, wasm-signatures.mjs]
//   5. The loader (`task-projection/loader`: loadTaskProjection() / loadTaskProjectionRules() try
//      wasm, then the MVP wasm, then the JS fallback), index.js, each module's JS beside each of its
//      glue copies, react helper, package.json, README (docs/package-readme.md).
//      [package.mjs; the static entries are files in static/, copied byte for byte]
//   6. Smoke checks, per module: node.js instantiates; the fallback runs with WebAssembly deleted;
//      the MVP entry takes the MVP bytes. [smoke.mjs]
//   7. Links pkg/ as `task-projection` for the in-repo consumers (tests/js, tests/types).
//      [package.mjs]
//   8. Sizes (raw, gzip, brotli) of every artifact; the build FAILS when one exceeds its budget.
//      [sizes.mjs; the budgets: budgets.mjs; the measurements: docs/benchmarks.md]
// Shared paths, flags and helpers (run, log, fail, timed): common.mjs.
import path from 'node:path';
import { MODULES, dev, preflight, fail, log, rel, timings, variantsOf } from './build/common.mjs';
import { buildFallback } from './build/fallback.mjs';
import { assemblePackage, linkConsumers, writeNodeEntry } from './build/package.mjs';
import { BUDGETS_AT, reportSizes } from './build/sizes.mjs';
import { smokeChecks } from './build/smoke.mjs';
import { clearStamp, inputsDigest, upToDate, writeStamp } from './build/stamp.mjs';
import { buildDefaultWasm, buildMvpWasm, cargoTargetDir, cleanPackage } from './build/wasm.mjs';

const started = Date.now();
const crate = preflight();
// Every entry exports the package version (`@VERSION@` in the static entries).
for (const module of MODULES) module.entry.VERSION = JSON.stringify(crate.version);
const targetDir = cargoTargetDir();
const digest = inputsDigest({ dev, node: process.versions.node });
if (process.argv.includes('--if-changed') && upToDate(targetDir, digest)) {
  log(`pkg/ is up to date (built from these inputs: ${rel(path.join(targetDir, 'pkg-inputs.sha256'))}); nothing to do`);
  process.exit(0);
}
clearStamp(targetDir);
cleanPackage();
for (const module of MODULES) {
  const wasmBytes = buildDefaultWasm({ libName: crate.libName, module, targetDir }); // 1
  writeNodeEntry(module, wasmBytes); // 2
  if (!variantsOf(module).includes('mvp')) continue;
  const mvp = buildMvpWasm({ libName: crate.libName, module, targetDir }); // 3
  buildFallback(module, mvp); // 4
}
assemblePackage(crate); // 5
smokeChecks(); // 6
linkConsumers(); // 7
const over = reportSizes(); // 8
log(`timings: ${timings.join(', ')}`);
if (over.length) fail(`size budget exceeded (budgets: ${BUDGETS_AT}):\n  ${over.join('\n  ')}`);
writeStamp(targetDir, digest);
log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s: pkg/ task-projection@${crate.version}`);
