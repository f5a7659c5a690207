#!/usr/bin/env node
// Builds the demo page into www/dist/ (gitignored): type-checks www/src with tsc (strict), bundles
// it with esbuild (minified ES module; `task-projection` and `task-projection/connect` stay external,
// imported by their URLs /pkg/index.js and /pkg/connect.js, which the server serves from pkg/),
// copies index.html, boot.js and the minified style.css. Prints the bundle's raw and gzip sizes.
//
//   node www/build.mjs            type-check + bundle
//   node www/build.mjs --no-check bundle only
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';

const www = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(www, '..');
const dist = path.join(www, 'dist');
const log = (msg) => console.log(`www: ${msg}`);

if (!process.argv.includes('--no-check')) {
  if (!fs.existsSync(path.join(root, 'pkg', 'task_projection.d.ts'))) {
    console.error('www: pkg/ is not built: run `node scripts/build.mjs` first');
    process.exit(1);
  }
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', path.join(www, 'tsconfig.json')], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('www: type check failed');
    process.exit(1);
  }
  log('tsc --noEmit (strict): ok');
}

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });
await esbuild.build({
  entryPoints: [path.join(www, 'src', 'main.ts')],
  outfile: path.join(dist, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  // The package stays outside the bundle, imported by its URL on this server (pkg/ is served at
  // /pkg/, and its init() finds the .wasm next to /pkg/index.js through import.meta.url). By URL
  // rather than through an import map: the server's Content-Security-Policy allows no inline script.
  plugins: [{
    name: 'task-projection-by-url',
    setup(build) {
      const urls = { 'task-projection': '/pkg/index.js', 'task-projection/connect': '/pkg/connect.js' };
      build.onResolve({ filter: /^task-projection(\/connect)?$/ }, (args) => ({ path: urls[args.path], external: true }));
    },
  }],
  logLevel: 'warning',
});
await esbuild.build({
  entryPoints: [path.join(www, 'style.css')],
  outfile: path.join(dist, 'style.css'),
  minify: true,
  logLevel: 'warning',
});
fs.copyFileSync(path.join(www, 'index.html'), path.join(dist, 'index.html'));
fs.copyFileSync(path.join(www, 'boot.js'), path.join(dist, 'boot.js'));

let raw = 0;
let gz = 0;
for (const name of fs.readdirSync(dist)) {
  const bytes = fs.readFileSync(path.join(dist, name));
  raw += bytes.length;
  gz += zlib.gzipSync(bytes, { level: 9 }).length;
  log(`dist/${name}: ${bytes.length} B (gzip ${zlib.gzipSync(bytes, { level: 9 }).length} B)`);
}
log(`www/dist total: ${raw} B raw, ${gz} B gzip (the package's own wasm + glue are served from /pkg/)`);
