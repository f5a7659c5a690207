#!/usr/bin/env node
// Builds the demo page into www/dist/ (gitignored): type-checks www/src with tsc (strict), bundles
// it with esbuild (minified ES modules; `task-projection`, `task-projection/connect` and
// `task-projection/trace` stay external, imported by their URLs /pkg/index.js, /pkg/connect.js and
// /pkg/trace.js, which the server serves from pkg/): the demo (app.js), the recording it loads
// with `?record` (record.js, record.css) and the inspector (inspect/: index.html, inspect.js, inspect.css);
// copies index.html, boot.js and the minified style.css. Prints the bundles' raw and gzip sizes.
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
fs.mkdirSync(path.join(dist, 'inspect'), { recursive: true });
// The package stays outside the bundles, imported by its URL on this server (pkg/ is served at
// /pkg/, and its init() finds the .wasm next to /pkg/index.js through import.meta.url). By URL
// rather than through an import map: the server's Content-Security-Policy allows no inline script.
// The demo explains itself (`explain`, the recorder): it loads the package's development build,
// as an app does under `next dev` or `vite` (the `development` export condition).
const PACKAGE_URLS = {
  'task-projection': '/pkg/development/index.js',
  'task-projection/connect': '/pkg/connect.js',
  'task-projection/trace': '/pkg/trace.js',
};
const byUrl = {
  name: 'task-projection-by-url',
  setup(build) {
    build.onResolve({ filter: /^task-projection(\/connect|\/trace)?$/ }, (args) => ({ path: PACKAGE_URLS[args.path], external: true }));
    // main.ts imports ./record.js (the recording, its own bundle) only with `?record`.
    build.onResolve({ filter: /^\.\/record\.js$/ }, (args) => (args.kind === 'dynamic-import' ? { path: './record.js', external: true } : undefined));
  },
};
const bundle = (entry, outfile) => esbuild.build({
  entryPoints: [path.join(www, 'src', entry)],
  outfile: path.join(dist, outfile),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  plugins: [byUrl],
  logLevel: 'warning',
});
// The demo (app.js); the recording it loads with `?record` (record.js, which imports
// /pkg/trace.js); the inspector page (/inspect/).
await bundle('main.ts', 'app.js');
await bundle('record.ts', 'record.js');
await bundle('inspect.ts', 'inspect/inspect.js');
for (const [from, to] of [['style.css', 'style.css'], ['record.css', 'record.css'], ['inspect.css', 'inspect/inspect.css']]) {
  await esbuild.build({ entryPoints: [path.join(www, from)], outfile: path.join(dist, to), minify: true, logLevel: 'warning' });
}
fs.copyFileSync(path.join(www, 'index.html'), path.join(dist, 'index.html'));
fs.copyFileSync(path.join(www, 'boot.js'), path.join(dist, 'boot.js'));
fs.copyFileSync(path.join(www, 'inspect.html'), path.join(dist, 'inspect', 'index.html'));

/** Prints each file of `names` (under dist/) and their total. */
function sizes(label, names) {
  let raw = 0;
  let gz = 0;
  for (const name of names) {
    const bytes = fs.readFileSync(path.join(dist, name));
    const z = zlib.gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gz += z;
    log(`dist/${name}: ${bytes.length} B (gzip ${z} B)`);
  }
  log(`${label}: ${raw} B raw, ${gz} B gzip`);
}
// The demo page as it loads without ?record (record.js and inspect/ are loaded only on demand).
sizes('www/dist total (the demo page; the package\'s own wasm + glue are served from /pkg/)', ['app.js', 'boot.js', 'index.html', 'style.css']);
sizes('recording (?record, on top of the page and /pkg/trace.js)', ['record.js', 'record.css']);
sizes('inspector (/inspect/)', ['inspect/index.html', 'inspect/inspect.js', 'inspect/inspect.css']);
