// A call before the browser entry's `await init()` has finished throws a TaskProjectionError
// `not_initialized` (field `init`) that names init(), instead of a TypeError from inside
// wasm-bindgen's glue; after init the same calls work. Each case runs in its own Node process
// importing the browser entry (`index.js`) by path: in this process the `node` entry (which
// initializes at import) shares the glue module, so it would already be initialized.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';

const pkg = new URL('../../pkg/', import.meta.url).href;

/** Runs `body` (an async ES module body) in a fresh Node process; returns what it printed, parsed. */
function fresh(body) {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', body], { encoding: 'utf8' });
  return JSON.parse(out);
}

const caught = `
const caught = (f) => {
  try { f(); return { ok: true }; } catch (e) { return { name: e.name, code: e.code, field: e.field, message: e.message, isError: e instanceof Error }; }
};`;

describe('before init() the entries throw not_initialized, then work', () => {
  for (const [entry, dir] of [['default', ''], ['mvp', 'mvp/']]) {
    test(`the store (${entry} entry)`, () => {
      const r = fresh(`${caught}
        import fs from 'node:fs';
        const tp = await import('${pkg}${dir}index.js');
        const before = caught(() => new tp.ProjectionStore());
        const again = caught(() => new tp.ProjectionStore());
        tp.initSync({ module: fs.readFileSync(new URL('${pkg}${dir}task_projection_bg.wasm')) });
        const store = new tp.ProjectionStore();
        store.applySessionList('t1', [{ id: 's1', task_id: 't1', state: 'RUNNING', pending_action: null }]);
        console.log(JSON.stringify({ before, again, after: store.sessionPendingAction('s1') }));`);
      for (const e of [r.before, r.again]) {
        assert.equal(e.isError, true);
        assert.equal(e.name, 'TaskProjectionError');
        assert.equal(e.code, 'not_initialized');
        assert.equal(e.field, 'init');
        assert.match(e.message, /await init\(\)/);
      }
      assert.equal(r.after, null);
    });

    test(`the stateless rules (${entry} entry)`, () => {
      const r = fresh(`${caught}
        import fs from 'node:fs';
        const rules = await import('${pkg}rules/${dir}index.js');
        const before = caught(() => rules.compareRevisions({ epoch: '2', sequence: 1 }, { epoch: '1', sequence: 9 }));
        const list = caught(() => rules.pendingClarificationBundle([], {}));
        await rules.default({ module_or_path: fs.readFileSync(new URL('${pkg}rules/${dir}task_projection_bg.wasm')) });
        console.log(JSON.stringify({ before, list, after: rules.compareRevisions({ epoch: '2', sequence: 1 }, { epoch: '1', sequence: 9 }) }));`);
      for (const e of [r.before, r.list]) {
        assert.equal(e.code, 'not_initialized');
        assert.equal(e.field, 'init');
      }
      assert.equal(r.after, 1);
    });
  }

  test('the node entry needs no init', () => {
    const r = fresh(`
      const tp = await import('${pkg}node.js');
      const rules = await import('${pkg}rules/node.js');
      const store = new tp.ProjectionStore();
      console.log(JSON.stringify({ version: store.version() >= 0, cmp: rules.compareRevisions({ epoch: '1', sequence: 1 }, { epoch: '1', sequence: 2 }) }));`);
    assert.deepEqual(r, { version: true, cmp: -1 });
  });
});
