#!/usr/bin/env node
// Builds the demo page into www/dist/ (gitignored): type-checks www/src with tsc (strict), bundles
// it with esbuild (minified ES modules; the package stays external, imported by its URLs under
// /pkg/, which the server serves from pkg/: `task-projection` (its development build),
// `task-projection/connect`, `task-projection/devtools/dom` (the devtools panel) and
// `task-projection/trace` (imported with `?record` only)): the demo (app.js) and the inspector
// (inspect/: index.html, inspect.js, inspect.css); copies index.html, boot.js and the minified
// style.css. Prints the bundles' raw and gzip sizes, and those of the panel's files the page loads
// from /pkg/.
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
// The demo explains itself (the devtools panel: `explain`, the recorder): it loads the package's
// development build, as an app does under `next dev` or `vite` (the `development` export
// condition). The panel comes from the same /pkg/ as the store, so it is the same package copy.
const PACKAGE_URLS = {
  'task-projection': '/pkg/development/index.js',
  'task-projection/connect': '/pkg/connect.js',
  'task-projection/devtools/dom': '/pkg/devtools-dom.js',
  'task-projection/trace': '/pkg/trace.js',
};
const byUrl = {
  name: 'task-projection-by-url',
  setup(build) {
    build.onResolve({ filter: /^task-projection(\/connect|\/devtools\/dom|\/trace)?$/ }, (args) => ({ path: PACKAGE_URLS[args.path], external: true }));
    // The inspector's words are the panel's own file (www/src/devtools-words.d.ts), by its URL.
    build.onResolve({ filter: /^\/pkg\// }, (args) => ({ path: args.path, external: true }));
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
// The demo (app.js); the inspector page (/inspect/).
await bundle('main.ts', 'app.js');
await bundle('inspect.ts', 'inspect/inspect.js');
for (const [from, to] of [['style.css', 'style.css'], ['inspect.css', 'inspect/inspect.css']]) {
  await esbuild.build({ entryPoints: [path.join(www, from)], outfile: path.join(dist, to), minify: true, logLevel: 'warning' });
}
fs.copyFileSync(path.join(www, 'index.html'), path.join(dist, 'index.html'));
fs.copyFileSync(path.join(www, 'boot.js'), path.join(dist, 'boot.js'));
fs.copyFileSync(path.join(www, 'inspect.html'), path.join(dist, 'inspect', 'index.html'));

/** Prints each file of `names` (under `dir`, default dist/) and their total. */
function sizes(label, names, dir = dist) {
  let raw = 0;
  let gz = 0;
  for (const name of names) {
    const bytes = fs.readFileSync(path.join(dir, name));
    const z = zlib.gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gz += z;
    log(`${path.relative(root, path.join(dir, name))}: ${bytes.length} B (gzip ${z} B)`);
  }
  log(`${label}: ${raw} B raw, ${gz} B gzip`);
}
// The demo page (the inspector is loaded only on demand).
sizes('www/dist total (the demo page; the package\'s own wasm + glue are served from /pkg/)', ['app.js', 'boot.js', 'index.html', 'style.css']);
// The devtools panel the page loads from /pkg/ (the package's files as built, not minified).
const panelFiles = ['devtools-dom.js', 'devtools-words.js', 'devtools-recording.js'];
if (panelFiles.every((f) => fs.existsSync(path.join(root, 'pkg', f)))) sizes('the devtools panel (from /pkg/, on top of the page)', panelFiles, path.join(root, 'pkg'));
sizes('inspector (/inspect/)', ['inspect/index.html', 'inspect/inspect.js', 'inspect/inspect.css']);
