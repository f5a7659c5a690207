// Step 6: smoke checks of the assembled package: node.js instantiates, the fallback runs with
// WebAssembly deleted, the MVP entry takes the MVP bytes.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { OUT_NAME, fail, fallbackDir, log, mvpDir, pkgDir, root } from './common.mjs';

// --- 6. smoke checks -------------------------------------------------------------------------------
function smoke(name, source, flags = []) {
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', source], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) fail(`${name}:\n${r.stderr}`);
  log(`smoke check: ${name}: ${r.stdout.trim()}`);
}
const check = `
  const fns = Object.keys(m).filter((k) => typeof m[k] === 'function');
  if (fns.length < 3) throw new Error('exports only: ' + Object.keys(m).join(', '));
  if (m.normalizeStartPolicy(' new ') !== 'new') throw new Error('normalizeStartPolicy(" new ") !== "new"');
  const s = new m.ProjectionStore();
  s.applySessionList('t', [{ id: 's', task_id: 't', state: 'WAITING_FOR_INPUT' }]);
  s.applyTurnList('s', [{ id: 'u', session_id: 's', started_at: '2026-01-01T00:00:00Z' }]);
  s.applyMessageEvent('added', { message_id: 'q', session_id: 's', task_id: 't', turn_id: 'u', type: 'clarification_request',
    metadata: { status: 'pending', pending_id: 'p', question_total: 1 }, created_at: '2026-01-01T00:00:01Z' });
  if (s.sessionPendingAction('s') !== 'clarification') throw new Error('store: ' + s.sessionPendingAction('s'));
  s.free();
  console.log(fns.length + ' functions, store ok');`;

/** The store and a stateless call through pkg/node.js, pkg/fallback/ (no WebAssembly) and pkg/mvp/. */
export function smokeChecks() {
  const nodeJsPath = path.join(pkgDir, 'node.js');
  smoke('pkg/node.js', `const m = await import(${JSON.stringify(pathToFileURL(nodeJsPath).href)});${check}`);
  smoke(
    'pkg/fallback/index.js without WebAssembly',
    `delete globalThis.WebAssembly;
     const m = await import(${JSON.stringify(pathToFileURL(path.join(fallbackDir, 'index.js')).href)});${check}`,
  );
  smoke(
    'pkg/mvp/index.js (initSync with the MVP bytes)',
    `const m = await import(${JSON.stringify(pathToFileURL(path.join(mvpDir, 'index.js')).href)});
     m.initSync({ module: (await import('node:fs')).readFileSync(${JSON.stringify(path.join(mvpDir, `${OUT_NAME}_bg.wasm`))}) });${check}`,
  );
}
