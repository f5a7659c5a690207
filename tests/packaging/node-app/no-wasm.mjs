// Run with WebAssembly unavailable (node --jitless, or after `delete globalThis.WebAssembly`):
// imports only the loader and the fallback. Prints one JSON line.
import * as fallback from 'task-projection/fallback';
import { loadTaskProjection, loadTaskProjectionRules } from 'task-projection/loader';
import { runScript } from './_shared/scenario.mjs';

const answerWith = (api) => {
  const store = new api.ProjectionStore();
  const a = runScript(store);
  store.free();
  return a;
};
const loaded = await loadTaskProjection();
const rules = await loadTaskProjectionRules();
console.log(JSON.stringify({
  webAssembly: typeof WebAssembly,
  fallback: answerWith(fallback),
  loader: { backend: loaded.backend, failures: loaded.failures.map((f) => `${f.backend}: ${f.error.name}`), ...answerWith(loaded) },
  rules: { backend: rules.backend, policy: rules.normalizeStartPolicy(' new ') },
}));
