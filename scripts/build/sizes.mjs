// Step 8: raw, gzip and brotli sizes of every artifact against its budget (scripts/build/budgets.mjs),
// printed as a table and written to target/pkg-sizes.json. The driver fails the build on an overrun.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { buildSync } from 'esbuild';
import { BUDGETS } from './budgets.mjs';
import { OUT_NAME, dev, pkgDir, root } from './common.mjs';

/** Where the budgets live, for the failure message. */
export const BUDGETS_AT = 'BUDGETS in scripts/build/budgets.mjs';

// --- 8. sizes and budgets ------------------------------------------------------------------------
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

/** What an app bundles of `entry` (a file of pkg/): its modules minified into one by esbuild (React,
 * where imported, left out: the app has it), as for a browser. */
export function minifiedBundle(entry) {
  const out = buildSync({
    entryPoints: [path.join(pkgDir, entry)], bundle: true, minify: true, format: 'esm', platform: 'browser',
    external: ['react'], write: false, logLevel: 'silent',
  });
  return Buffer.from(out.outputFiles[0].contents);
}

/** Prints the size table and writes target/pkg-sizes.json; returns one line per budget overrun. */
export function reportSizes() {
  // [budget name, file in pkg/, whether --dev leaves it unoptimized (the default wasm, or the
  // entry that embeds it: not checked against its budget then)]
  const artifacts = [
    ['default wasm', `${OUT_NAME}_bg.wasm`, true],
    ['default glue (task_projection.js)', `${OUT_NAME}.js`],
    ['node entry (node.js, wasm embedded)', 'node.js', true],
    ['MVP wasm', `mvp/${OUT_NAME}_bg.wasm`],
    ['fallback (wasm2js, minified)', `fallback/${OUT_NAME}_wasm2js.js`],
    ['fallback glue', `fallback/${OUT_NAME}.js`],
    ['development wasm', `development/${OUT_NAME}_bg.wasm`, true],
    ['development glue', `development/${OUT_NAME}.js`],
    ['development node entry', 'development/node.js', true],
    ['rules wasm', `rules/${OUT_NAME}_bg.wasm`, true],
    ['rules glue', `rules/${OUT_NAME}.js`],
    ['rules node entry', 'rules/node.js', true],
    ['rules MVP wasm', `rules/mvp/${OUT_NAME}_bg.wasm`],
    ['rules fallback', `rules/fallback/${OUT_NAME}_wasm2js.js`],
    ['rules fallback glue', `rules/fallback/${OUT_NAME}.js`],
    // The devtools panel's JS as an app bundles it (minified; no wasm of its own).
    ['devtools/dom (minified bundle)', 'devtools-dom.js', false, true],
    ['devtools, React (minified bundle)', 'devtools.js', false, true],
  ];
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(10);
  const over = [];
  console.log(`\n${'artifact'.padEnd(36)}${'file'.padEnd(44)}${'raw'.padStart(10)}${'gzip'.padStart(10)}${'brotli'.padStart(10)}  budget (raw / gzip)`);
  const measured = {};
  for (const [name, inPkg, devUnoptimized = false, bundled = false] of artifacts) {
    const unchecked = dev && devUnoptimized;
    const file = `pkg/${inPkg}${unchecked ? ' (--dev, not optimized)' : ''}${bundled ? ' +imports' : ''}`;
    const s = sizes(bundled ? minifiedBundle(inPkg) : fs.readFileSync(path.join(pkgDir, inPkg)));
    measured[name] = s;
    const b = BUDGETS[name];
    let verdict = '';
    if (!b) verdict = 'NO BUDGET';
    else if (unchecked) verdict = 'not checked (--dev)';
    else {
      const bad = ['raw', 'gzip'].filter((k) => s[k] > b[k]);
      verdict = `${kb(b.raw).trim()} / ${kb(b.gzip).trim()}: ${bad.length ? `OVER (${bad.join(', ')})` : 'ok'}`;
      if (bad.length) over.push(`${name}: ${bad.map((k) => `${k} ${s[k]} B > ${b[k]} B`).join(', ')}`);
    }
    if (!b) over.push(`${name}: no budget in BUDGETS`);
    console.log(`${name.padEnd(36)}${file.padEnd(44)}${kb(s.raw)}${kb(s.gzip)}${kb(s.brotli)}  ${verdict}`);
  }
  fs.mkdirSync(path.join(root, 'target'), { recursive: true });
  fs.writeFileSync(path.join(root, 'target', 'pkg-sizes.json'), `${JSON.stringify({ date: new Date().toISOString(), dev, measured, budgets: BUDGETS }, null, 2)}\n`);
  return over;
}
