// Packaging checks on the built pkg/, through the package name `task-projection` as an app sees it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { buildSync } from 'esbuild';
import * as nodeEntry from 'task-projection';
import * as rulesEntry from 'task-projection/rules';
import * as traceEntry from 'task-projection/trace';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const pkgJsonPath = require.resolve('task-projection/package.json');
const pkgDir = path.dirname(pkgJsonPath);
const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
const webEntryUrl = pathToFileURL(path.join(pkgDir, 'index.js')).href;
const rulesWebEntryUrl = pathToFileURL(path.join(pkgDir, 'rules', 'index.js')).href;
/** The stateless functions: `task-projection/rules` only (the store's module carries none). */
const RULES = ['currentTurnId', 'visibleTurnHistory', 'findPendingClarification', 'pendingClarificationBundle',
  'visibleTranscriptMessages', 'hasPendingPermission', 'sessionPendingAction', 'taskPendingAction',
  'effectiveTaskPendingAction', 'compareRevisions', 'canReplaceRevision', 'mergePendingProjection',
  'resolveTaskSessionId', 'selectionOutcome', 'isNewerStatusSummary', 'mergeFetchedStatusSummary',
  'normalizeStartPolicy', 'normalizeEndPolicy'];

/** Export names listed in the stateless functions' table of docs/js-api.md (first column). */
function documentedExports() {
  const full = readFileSync(path.join(repoRoot, 'docs/js-api.md'), 'utf8');
  const doc = full.slice(full.indexOf('## The stateless rule functions'));
  const names = new Set();
  for (const line of doc.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const firstCell = line.split(/(?<!\\)\|/)[1];
    for (const m of firstCell.matchAll(/`([A-Za-z_$][\w$]*)\(/g)) names.add(m[1]);
  }
  return [...names];
}

/** Runs an ES module snippet in a fresh Node process, from tests/js (so `task-projection` resolves). */
function runFresh(source) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: here, encoding: 'utf8' });
  assert.equal(r.status, 0, `child process failed:\n${r.stderr}`);
  return r.stdout.trim();
}

describe('pkg/package.json', () => {
  test('is the task-projection ES module package generated from Cargo.toml', () => {
    const cargo = readFileSync(path.join(repoRoot, 'Cargo.toml'), 'utf8');
    const version = cargo.match(/^\[package\][^[]*?^version\s*=\s*"([^"]+)"/ms)?.[1];
    assert.equal(pkg.name, 'task-projection');
    assert.equal(pkg.version, version);
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.license, 'MIT');
    // React only for ./react, and optional: a store-only app installs nothing else.
    assert.deepEqual(pkg.peerDependencies, { react: '>=18' });
    assert.deepEqual(pkg.peerDependenciesMeta, { react: { optional: true } });
    assert.equal(pkg.dependencies, undefined);
    assert.ok(pkg.files.includes('subscription.js'));
    assert.ok(pkg.files.includes('LICENSE'), 'the license text ships with the package');
    assert.match(readFileSync(path.join(pkgDir, 'LICENSE'), 'utf8'), /^MIT License/);
    // No placeholder: a repository field is a real URL or absent.
    assert.ok(pkg.repository === undefined || !/example\.invalid/.test(JSON.stringify(pkg.repository)), String(pkg.repository));
  });

  test('every entry of both modules exports the package version', async () => {
    assert.equal(nodeEntry.version, pkg.version);
    assert.equal(rulesEntry.version, pkg.version);
    for (const dir of ['', 'rules/']) {
      for (const entry of ['index.js', 'node.js', 'mvp/index.js', 'fallback/index.js']) {
        const m = await import(pathToFileURL(path.join(pkgDir, dir, entry)).href);
        assert.equal(m.version, pkg.version, `${dir}${entry}`);
      }
    }
  });

  test('exports lists types, node, edge-light, default in that order', () => {
    assert.deepEqual(Object.keys(pkg.exports), ['.', './development', './react', './connect', './trace', './persist', './devtools', './devtools/dom', './loader', './mvp', './fallback', './rules', './rules/mvp', './rules/fallback', './package.json']);
    assert.deepEqual(pkg.exports['./react'], { types: './react.d.ts', default: './react.js' });
    // The devtools panel: with React, and without (no React import, for React-free apps).
    assert.deepEqual(pkg.exports['./devtools'], { types: './devtools.d.ts', default: './devtools.js' });
    assert.deepEqual(pkg.exports['./devtools/dom'], { types: './devtools-dom.d.ts', default: './devtools-dom.js' });
    assert.deepEqual(pkg.exports['./connect'], { types: './connect.d.ts', default: './connect.js' });
    assert.deepEqual(pkg.exports['./persist'], { types: './persist.d.ts', default: './persist.js' });
    // The recorder: for Node and edge with the top module's wasm instantiated (replayTrace).
    assert.deepEqual(pkg.exports['./trace'], {
      types: './trace.d.ts',
      node: './trace.node.js',
      'edge-light': './trace.node.js',
      default: './trace.js',
    });
    assert.deepEqual(pkg.exports['./loader'], {
      types: './loader.d.ts',
      node: './loader.node.js',
      'edge-light': './loader.node.js',
      default: './loader.js',
    });
    // The store's development build: first under `.` (a resolver takes the first condition that
    // matches: `development` before `node` and `default`), and its own subpath.
    const development = { node: './development/node.js', 'edge-light': './development/node.js', default: './development/index.js' };
    assert.deepEqual(pkg.exports['.'].development, development);
    assert.deepEqual(pkg.exports['./development'], { types: './task_projection.d.ts', ...development });
    // Each module (the store at the top, the rules in rules/): its entries and its declarations.
    for (const [name, dir] of [['.', '.'], ['./rules', './rules']]) {
      const types = `${dir}/task_projection.d.ts`;
      const conditions = { ...pkg.exports[name] };
      if (name === '.') delete conditions.development;
      assert.deepEqual(Object.keys(pkg.exports[name]), name === '.' ? ['types', 'development', 'node', 'edge-light', 'default'] : ['types', 'node', 'edge-light', 'default']);
      assert.deepEqual(conditions, { types, node: `${dir}/node.js`, 'edge-light': `${dir}/node.js`, default: `${dir}/index.js` });
      for (const build of ['mvp', 'fallback']) {
        assert.deepEqual(pkg.exports[`${name}/${build}`], { types, default: `${dir}/${build}/index.js` });
      }
    }
    assert.equal(pkg.exports['./package.json'], './package.json');
  });

  test('main/module/types, files and sideEffects', () => {
    assert.equal(pkg.main, './node.js');
    assert.equal(pkg.module, './index.js');
    assert.equal(pkg.types, './task_projection.d.ts');
    // node.js initializes the wasm on import; the fallback glue instantiates the wasm2js module;
    // trace.js (and trace.node.js) install the recorder. The devtools modules do nothing at import:
    // not listed, so an app that does not render the panel drops it.
    assert.deepEqual(pkg.sideEffects, ['./node.js', './development/node.js', './fallback/task_projection.js', './rules/node.js', './rules/fallback/task_projection.js', './trace.js', './trace.node.js']);
    for (const f of ['node.js', 'index.js', 'store.js', 'development/node.js', 'development/index.js', 'development/store.js', 'development/task_projection_bg.wasm', 'trace.js', 'trace.node.js', 'trace.d.ts', 'replay.js', 'persist.js', 'persist.d.ts',
      'devtools.js', 'devtools.d.ts', 'devtools-dom.js', 'devtools-dom.d.ts', 'devtools-words.js', 'devtools-recording.js', 'devtools.png', 'load.js', 'read.js', 'task_projection.js', 'task_projection.d.ts', 'task_projection_bg.wasm',
      'loader.js', 'loader.node.js', 'loader-core.js', 'loader.d.ts', 'mvp/index.js', 'mvp/task_projection_bg.wasm', 'fallback/index.js',
      'rules/node.js', 'rules/index.js', 'rules/api.js', 'rules/read.js', 'rules/task_projection.js', 'rules/task_projection.d.ts',
      'rules/task_projection_bg.wasm', 'rules/mvp/index.js', 'rules/mvp/task_projection_bg.wasm', 'rules/fallback/index.js']) {
      const dir = f.split('/').slice(0, -1).join('/');
      assert.ok(pkg.files.includes(f) || (dir && pkg.files.includes(`${dir}/`)), `files lists ${f}`);
      assert.doesNotThrow(() => readFileSync(path.join(pkgDir, f)), `${f} exists`);
    }
  });

  test('import and require both resolve to the node entries', () => {
    assert.equal(require.resolve('task-projection'), path.join(pkgDir, 'node.js'));
    const viaImport = import.meta.resolve('task-projection');
    assert.equal(viaImport, pathToFileURL(path.join(pkgDir, 'node.js')).href);
    assert.equal(require.resolve('task-projection/rules'), path.join(pkgDir, 'rules', 'node.js'));
    assert.equal(import.meta.resolve('task-projection/rules'), pathToFileURL(path.join(pkgDir, 'rules', 'node.js')).href);
    assert.equal(import.meta.resolve('task-projection/trace'), pathToFileURL(path.join(pkgDir, 'trace.node.js')).href);
  });
});

describe('entries', () => {
  test('the store module exports the store, boundedLoad and init; task-projection/trace replayTrace; the rules module the stateless functions', () => {
    assert.deepEqual(Object.keys(nodeEntry).sort(), ['ProjectionStore', 'boundedLoad', 'default', 'initSync', 'version']);
    assert.deepEqual(Object.keys(traceEntry).sort(), ['replayTrace']);
    assert.deepEqual(Object.keys(rulesEntry).sort(), [...RULES, 'default', 'initSync', 'version'].sort());
  });

  for (const [label, node, webUrl] of [['task-projection', nodeEntry, webEntryUrl], ['task-projection/rules', rulesEntry, rulesWebEntryUrl]]) {
    test(`${label}: node.js and index.js export the same names, including default`, async () => {
      const web = await import(webUrl);
      const names = (ns) => Object.keys(ns).sort();
      assert.deepEqual(names(node), names(web));
      assert.ok(names(node).includes('default'));
      assert.ok(names(node).includes('initSync'));
      for (const name of names(web)) {
        assert.equal(typeof node[name], typeof web[name], `${name} has the same type in both entries`);
      }
    });

    test(`${label}: require(esm) returns the same API as import`, () => {
      const required = require(label);
      const names = Object.keys(required).filter((k) => k !== '__esModule').sort();
      assert.deepEqual(names, Object.keys(node).sort());
      for (const name of names) assert.equal(required[name], node[name], name);
    });
  }

  test('every ProjectionStore method is in the store table of docs/js-api.md, and every row is a method', () => {
    const doc = readFileSync(path.join(repoRoot, 'docs/js-api.md'), 'utf8');
    const table = doc.slice(doc.indexOf('## The store'), doc.indexOf('## React'));
    const documented = new Set([...table.matchAll(/^\| `([A-Za-z]\w*)\(/gm)].map((m) => m[1]));
    const methods = Object.getOwnPropertyNames(nodeEntry.ProjectionStore.prototype).filter((n) => n !== 'constructor');
    assert.ok(methods.length >= 30, `${methods.length} methods`);
    assert.deepEqual([...documented].sort(), methods.sort());
  });

  test('every function in the docs/js-api.md table is exported as a function by task-projection/rules', () => {
    const documented = documentedExports();
    assert.ok(documented.length >= 18, `parsed ${documented.length} names from docs/js-api.md: ${documented.join(', ')}`);
    const missing = documented.filter((name) => typeof rulesEntry[name] !== 'function');
    assert.equal(missing.join(', '), '', 'documented in docs/js-api.md but not exported as functions');
  });

  for (const dir of ['', 'rules']) test(`${path.posix.join(dir, 'node.js')} has no top-level await (require(esm) would reject it) and embeds the wasm`, () => {
    const src = readFileSync(path.join(pkgDir, dir, 'node.js'), 'utf8');
    // Code only: drop comments and the base64 payload line (never print it: it is large).
    const code = src
      .split('\n')
      .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line) && !line.startsWith('const WASM_BASE64'))
      .join('\n');
    assert.ok(!/\bawait\b/.test(code), `node.js code uses await:\n${code}`);
    assert.ok(/initSync\(\{ module: /.test(code), 'node.js calls initSync({ module })');
    assert.ok(!/readFileSync|fetch\(|import\.meta\.url|process\./.test(code), `node.js must not read files, fetch or use process:\n${code}`);
    assert.ok(/^const WASM_BASE64 = '[A-Za-z0-9+/=]+';$/m.test(src), 'node.js embeds the wasm as base64');
    // The strongest check: a synchronous require() of both entries succeeds.
    const r = spawnSync(
      process.execPath,
      ['-e', `require(${JSON.stringify(path.join(pkgDir, dir, 'node.js'))}); require(${JSON.stringify(path.join(pkgDir, dir, 'task_projection.js'))});`],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
  });

  test('importing the node entry needs no init (fresh process)', () => {
    const out = runFresh(`
      import { normalizeStartPolicy, normalizeEndPolicy } from 'task-projection/rules';
      import { ProjectionStore } from 'task-projection';
      const store = new ProjectionStore();
      store.applySessionList('t', [{ id: 's', task_id: 't' }]);
      console.log(JSON.stringify([normalizeStartPolicy(' new '), normalizeEndPolicy(' park '), store.pendingOwner('t')]));
    `);
    assert.deepEqual(JSON.parse(out), ['new', 'park', 's']);
  });

  test('the node entries\' default init() is a no-op resolving to the wasm exports (one instance per module)', async () => {
    const instances = [];
    for (const entry of [nodeEntry, rulesEntry]) {
      const init = entry.default;
      assert.equal(typeof init, 'function');
      const first = await init();
      const again = await init({ module_or_path: 'ignored.wasm' });
      assert.equal(first, again);
      assert.ok(first && first.memory instanceof WebAssembly.Memory, 'resolves to the instance exports');
      assert.equal(entry.initSync(), first, 'initSync() after init is also a no-op');
      instances.push(first);
    }
    assert.notEqual(instances[0].memory, instances[1].memory, 'the store and the rules have their own instance');
    assert.ok('projectionstore_new' in instances[0] && !('projectionstore_new' in instances[1]));
    assert.equal(rulesEntry.normalizeStartPolicy('new'), 'new');
  });
});

describe('what an app bundles (esbuild, as for a browser)', () => {
  /** `source` bundled and minified from tests/js, where `task-projection` resolves to pkg/. */
  function bundle(source) {
    const out = buildSync({
      stdin: { contents: source, resolveDir: here, sourcefile: 'app.js' },
      bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent',
    });
    const text = out.outputFiles[0].text;
    return { text, gzip: zlib.gzipSync(text, { level: 9 }).length };
  }
  // Strings of the recorder (js/trace.js) and of replayTrace (js/replay.js), kept by minification.
  const RECORDER = ['pendingActionWhy', 'droppedBytes'];
  const REPLAY = ['not a trace step'];

  // The recorder is `task-projection/trace`, opt-in: an app that imports only the store must not
  // carry it (docs/package.md, "Entries"), from whichever entry it takes the store.
  for (const entry of ['task-projection', 'task-projection/mvp', 'task-projection/fallback']) {
    test(`an app that imports only ProjectionStore from ${entry} carries no recorder and no replayTrace`, () => {
      const app = bundle(`import { ProjectionStore } from '${entry}';\nconsole.log(new ProjectionStore().version());\n`);
      for (const marker of [...RECORDER, ...REPLAY]) assert.ok(!app.text.includes(marker), `the bundle holds ${JSON.stringify(marker)}`);
      // What store.js keeps of it: the slot's name and the error naming the import.
      assert.ok(app.text.includes('task-projection.recorder.1'));
    });
  }

  test("import 'task-projection/trace' keeps the recorder (sideEffects), replayTrace only when used", () => {
    const plain = bundle(`import { ProjectionStore } from 'task-projection';\nconsole.log(new ProjectionStore().version());\n`);
    const recording = bundle(`import { ProjectionStore } from 'task-projection';\nimport 'task-projection/trace';\nconsole.log(new ProjectionStore().version());\n`);
    for (const marker of RECORDER) assert.ok(recording.text.includes(marker), `the recorder's ${JSON.stringify(marker)} was dropped`);
    for (const marker of REPLAY) assert.ok(!recording.text.includes(marker), `${JSON.stringify(marker)}: replayTrace bundled unused`);
    const replaying = bundle(`import { replayTrace } from 'task-projection/trace';\nconsole.log(replayTrace);\n`);
    for (const marker of [...RECORDER, ...REPLAY]) assert.ok(replaying.text.includes(marker), `${JSON.stringify(marker)} missing`);
    // The recorder is most of what recording costs (about 2 KB gzip), not the store's hooks.
    assert.ok(recording.gzip - plain.gzip > 1000, `${plain.gzip} → ${recording.gzip} B gzip`);
  });
});

describe('errors', () => {
  test('an engine error is an Error with code and field, and the instance stays usable', () => {
    const { compareRevisions, currentTurnId, normalizeStartPolicy } = rulesEntry;
    for (let i = 0; i < 500; i++) {
      assert.throws(
        () => compareRevisions({ epoch: 'abc', sequence: 1 }, { epoch: '1', sequence: 1 }),
        (err) => err instanceof Error && err.code === 'malformed_epoch' && typeof err.field === 'string',
      );
      assert.throws(
        () => currentTurnId(42),
        (err) => err instanceof Error && err.code === 'invalid_type' && err.field === 'turns' && err.message.includes('turns'),
      );
    }
    assert.equal(compareRevisions({ epoch: '10', sequence: 0 }, { epoch: '9', sequence: 5 }), 1);
    assert.equal(currentTurnId([]), null);
    assert.equal(normalizeStartPolicy('new'), 'new');
  });

  test('a bad element deep inside an argument names its path', () => {
    const message = (id) => ({
      id, session_id: 's1', task_id: 't1', turn_id: 'turn-1', author_type: 'agent', type: 'message',
      created_at: '2025-01-01T12:00:00.000000000Z',
    });
    assert.throws(
      () => rulesEntry.hasPendingPermission([message('m0'), message(7)]),
      (err) => err.code === 'invalid_type' && err.field === 'messages[1].id' && err.message.includes('messages[1].id'),
    );
    assert.equal(rulesEntry.hasPendingPermission([]), false);
  });
});

describe('production and development builds', () => {
  const call = (store, method) => {
    try {
      const result = store[method]('sess-1');
      return { ok: typeof result };
    } catch (error) {
      return { code: error.code, field: error.field };
    }
  };

  test('the production build refuses every development feature with development_only, arguments unread', async () => {
    for (const entry of ['task-projection', 'task-projection/mvp', 'task-projection/fallback']) {
      const { ProjectionStore, default: init } = await import(entry);
      if (entry.endsWith('mvp')) await init({ module_or_path: readFileSync(path.join(pkgDir, 'mvp', 'task_projection_bg.wasm')) });
      const store = new ProjectionStore();
      let reads = 0;
      const count = () => { reads += 1; };
      const arg = new Proxy({}, { get: count, has: count, ownKeys: count, getOwnPropertyDescriptor: count, getPrototypeOf: count });
      for (const method of ['explain', 'explainOwner', 'digest', 'stats', 'startRecording']) {
        assert.throws(() => store[method](arg), (e) => e.name === 'TaskProjectionError' && e.code === 'development_only' && e.field === 'this'
          && e.message.includes('"development" export condition'), `${entry}: ${method}`);
      }
      assert.equal(reads, 0, `${entry}: no argument read`);
      // What the production build does have works as in the development build.
      assert.equal(store.stopRecording(), null);
      assert.equal(typeof store.dehydrate(), 'object');
      store.free();
    }
  });

  test('the development build has them, through its subpath and through the development condition', () => {
    const source = `
      import { ProjectionStore } from 'task-projection';
      import { ProjectionStore as Explicit } from 'task-projection/development';
      const out = [ProjectionStore, Explicit].map((Store) => {
        const store = new Store();
        const r = [typeof store.explain('sess-1'), typeof store.explainOwner('task-1'), typeof store.digest(), typeof store.stats()];
        store.free();
        return r;
      });
      console.log(JSON.stringify({ out, same: ProjectionStore === Explicit }));`;
    const run = (conditions) => {
      const r = spawnSync(process.execPath, [...conditions, '--input-type=module', '-e', source], { cwd: new URL('.', import.meta.url).pathname, encoding: 'utf8' });
      return r.status === 0 ? JSON.parse(r.stdout) : { error: r.stderr };
    };
    const development = run(['--conditions=development']);
    assert.deepEqual(development, { out: [['object', 'object', 'string', 'object'], ['object', 'object', 'string', 'object']], same: true });
    // Without the condition `task-projection` is the production build (the child throws development_only).
    assert.match(run([]).error ?? '', /development_only|development build only/);
  });

  test('the development wasm is a separate file, larger than the production one', () => {
    const size = (...p) => statSync(path.join(pkgDir, ...p)).size;
    assert.ok(size('development', 'task_projection_bg.wasm') > size('task_projection_bg.wasm'));
  });
});
