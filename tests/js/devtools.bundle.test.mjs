// An app that does not import task-projection/devtools ships none of its bytes: esbuild bundles of
// apps that use the store (with connect, react, persist, trace: every other entry) are byte for
// byte the same against the built package (pkg/) and against a copy of it without the devtools
// files and export entries, under the default conditions (a production build) and under
// `development` (next dev, vite). An app that imports the panel does bundle it (the comparison can
// tell), and the devtools bundle holds no wasm and no store module.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, '../../pkg');
const work = path.resolve(here, '../artifacts/devtools-bundle');
const DEVTOOLS_FILES = ['devtools.js', 'devtools.d.ts', 'devtools-dom.js', 'devtools-dom.d.ts', 'devtools-words.js', 'devtools-recording.js'];

/** The app `source` bundled and minified against the package installed in `dir`. */
function bundle(dir, source, conditions = []) {
  const out = buildSync({
    stdin: { contents: source, resolveDir: dir, sourcefile: 'app.js' },
    bundle: true, minify: true, format: 'esm', platform: 'browser', conditions, external: ['react'], write: false, logLevel: 'silent', metafile: true,
  });
  return { bytes: Buffer.from(out.outputFiles[0].contents), inputs: Object.keys(out.metafile.inputs) };
}

const APPS = {
  'the store': "import init, { ProjectionStore } from 'task-projection';\nawait init();\nconst store = new ProjectionStore();\nconsole.log(store.version());\n",
  'the store, connect, react, persist and trace': [
    "import init, { ProjectionStore } from 'task-projection';",
    "import { connect } from 'task-projection/connect';",
    "import { ProjectionStoreProvider, usePendingClarification } from 'task-projection/react';",
    "import { persist, restore } from 'task-projection/persist';",
    "import 'task-projection/trace';",
    'await init();',
    'const store = new ProjectionStore();',
    "connect('ws://localhost/api/v1/ws', store, { refetch() {} });",
    "persist(store, { key: 'k' });",
    'console.log(ProjectionStoreProvider, usePendingClarification, restore);',
  ].join('\n'),
  'the loader': "import { loadTaskProjection } from 'task-projection/loader';\nconsole.log(await loadTaskProjection());\n",
};

describe('an app that does not import the devtools carries none of it', () => {
  const withDir = path.join(work, 'with');
  const withoutDir = path.join(work, 'without');
  before(() => {
    assert.ok(fs.existsSync(path.join(pkgDir, 'package.json')), 'pkg/ is not built: run node scripts/build.mjs');
    fs.rmSync(work, { recursive: true, force: true });
    for (const dir of [withDir, withoutDir]) fs.cpSync(pkgDir, path.join(dir, 'node_modules', 'task-projection'), { recursive: true });
    // The copy without: its devtools files, and the export entries and `files` naming them.
    const copy = path.join(withoutDir, 'node_modules', 'task-projection');
    for (const f of DEVTOOLS_FILES) {
      assert.ok(fs.existsSync(path.join(copy, f)), `pkg/${f}`);
      fs.rmSync(path.join(copy, f));
    }
    const pkg = JSON.parse(fs.readFileSync(path.join(copy, 'package.json'), 'utf8'));
    delete pkg.exports['./devtools'];
    delete pkg.exports['./devtools/dom'];
    pkg.files = pkg.files.filter((f) => !DEVTOOLS_FILES.includes(f));
    fs.writeFileSync(path.join(copy, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  });

  for (const [name, source] of Object.entries(APPS)) {
    for (const conditions of [[], ['development']]) {
      test(`${name}${conditions.length ? ' (development condition)' : ''}: the same bytes with and without the devtools files`, () => {
        const a = bundle(withDir, source, conditions);
        const b = bundle(withoutDir, source, conditions);
        assert.ok(a.bytes.length > 1000, `${a.bytes.length} bytes`);
        assert.ok(a.bytes.equals(b.bytes), `the bundles differ (${a.bytes.length} and ${b.bytes.length} bytes)`);
        assert.deepEqual(a.inputs.filter((f) => path.basename(f).startsWith('devtools')), []);
      });
    }
  }

  test('an app that imports the panel bundles it (the comparison above can tell), and no store module or wasm with it', () => {
    const source = "import { mountDevtools } from 'task-projection/devtools/dom';\nconsole.log(mountDevtools);\n";
    const a = bundle(withDir, source);
    assert.ok(a.inputs.some((f) => f.endsWith('devtools-dom.js')), a.inputs.join(', '));
    assert.deepEqual(a.inputs.filter((f) => /task_projection|store\.js|read\.js|\.wasm/.test(path.basename(f))), [], 'the panel brings no store of its own');
    assert.throws(() => bundle(withoutDir, source), /Could not resolve|devtools/);
    const react = bundle(withDir, "import { ProjectionDevtools } from 'task-projection/devtools';\nconsole.log(ProjectionDevtools);\n");
    assert.deepEqual(react.inputs.filter((f) => /task_projection|store\.js|read\.js|\.wasm/.test(path.basename(f))), []);
    // `task-projection/devtools/dom` has no React import: a React-free app does not need it.
    const dom = buildSync({ stdin: { contents: source, resolveDir: withDir }, bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent', metafile: true });
    assert.deepEqual(Object.keys(dom.metafile.inputs).filter((f) => /react/.test(f)), []);
  });
});
