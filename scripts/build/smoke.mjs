// Step 6: smoke checks of the assembled package, per module: node.js instantiates, the fallback
// runs with WebAssembly deleted, the MVP entry takes the MVP bytes.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MODULES, OUT_NAME, fail, log, rel, root, variantsOf } from './common.mjs';

// --- 6. smoke checks -------------------------------------------------------------------------------
function smoke(name, source, flags = []) {
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', source], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) fail(`${name}:\n${r.stderr}`);
  log(`smoke check: ${name}: ${r.stdout.trim()}`);
}

/** What each module's entry must answer (`m` is the entry's namespace). */
const CHECKS = {
  store: `
  const fns = Object.keys(m).filter((k) => typeof m[k] === 'function');
  if (String(fns) !== 'ProjectionStore,boundedLoad,default,initSync') throw new Error('exports: ' + fns.join(', '));
  const s = new m.ProjectionStore();
  s.applySessionList('t', [{ id: 's', task_id: 't', state: 'WAITING_FOR_INPUT' }]);
  s.applyTurnList('s', [{ id: 'u', session_id: 's', started_at: '2026-01-01T00:00:00Z' }]);
  if (s.sessionPendingAction('s') !== undefined) throw new Error('store: known before its rows');
  s.applyMessagePage('s', []);
  s.applyMessageEvent('added', { message_id: 'q', session_id: 's', task_id: 't', turn_id: 'u', type: 'clarification_request',
    metadata: { status: 'pending', pending_id: 'p', question_total: 1 }, created_at: '2026-01-01T00:00:01Z' });
  if (s.sessionPendingAction('s') !== 'clarification') throw new Error('store: ' + s.sessionPendingAction('s'));
  s.free();
  console.log(fns.length + ' functions, store ok');`,
  rules: `
  const fns = Object.keys(m).filter((k) => typeof m[k] === 'function');
  if (fns.length !== 20 || 'ProjectionStore' in m) throw new Error('exports: ' + fns.join(', '));
  if (m.normalizeStartPolicy(' new ') !== 'new') throw new Error('normalizeStartPolicy(" new ") !== "new"');
  const turns = [{ id: 'a', started_at: '2026-01-01T00:00:00Z' }, { id: 'b', started_at: '2026-01-01T00:00:01Z' }];
  if (m.currentTurnId(turns) !== 'b') throw new Error('currentTurnId: ' + m.currentTurnId(turns));
  console.log(fns.length + ' functions, rules ok');`,
};

/** The store's development features: present in the development build, a typed error in the others. */
const DEVELOPMENT_CHECK = (development) => `
  if (typeof m.ProjectionStore === 'function') {
    const d = new m.ProjectionStore();
    let code = 'none';
    try { d.explain('s'); } catch (e) { code = e.code; }
    d.free();
    if (code !== ${development ? "'none'" : "'development_only'"}) throw new Error('explain(): ' + code);
  }`;

/** Each module through its node.js, fallback/ (no WebAssembly) and mvp/. */
export function smokeChecks() {
  for (const module of MODULES) {
    const check = CHECKS[module.checks ?? module.name] + DEVELOPMENT_CHECK(module.name === 'store-development');
    const url = (...parts) => JSON.stringify(pathToFileURL(path.join(module.dir, ...parts)).href);
    smoke(`${rel(path.join(module.dir, 'node.js'))}`, `const m = await import(${url('node.js')});${check}`);
    if (!variantsOf(module).includes('mvp')) continue;
    smoke(
      `${rel(path.join(module.dir, 'fallback', 'index.js'))} without WebAssembly`,
      `delete globalThis.WebAssembly;
       const m = await import(${url('fallback', 'index.js')});${check}`,
    );
    smoke(
      `${rel(path.join(module.dir, 'mvp', 'index.js'))} (initSync with the MVP bytes)`,
      `const m = await import(${url('mvp', 'index.js')});
       m.initSync({ module: (await import('node:fs')).readFileSync(${JSON.stringify(path.join(module.dir, 'mvp', `${OUT_NAME}_bg.wasm`))}) });${check}`,
    );
  }
}
