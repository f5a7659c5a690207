// Node ESM consumer of the installed tarball: `import` by package name (the `node` condition),
// the loader, the fallback and the react helper. Prints one JSON line: { entry: answer }.
import init, * as tp from 'task-projection';
import * as fallback from 'task-projection/fallback';
import { loadTaskProjection } from 'task-projection/loader';
import { storeSubscription } from 'task-projection/react';
import { runScript } from './_shared/scenario.mjs';

const out = {};
const answerWith = (api) => {
  const store = new api.ProjectionStore();
  const sub = storeSubscription(store);
  let notified = 0;
  const unsubscribe = sub.subscribe(() => notified++);
  const a = runScript(store);
  const version = typeof sub.getSnapshot();
  unsubscribe();
  store.free();
  return { ...a, version };
};
{
  await init();
  out.import = answerWith(tp);
  out.compare = tp.compareRevisions({ epoch: '10', sequence: 1 }, { epoch: '9', sequence: 5 });
}
out.fallback = answerWith(fallback);
const loaded = await loadTaskProjection();
out.loader = { backend: loaded.backend, failures: loaded.failures.map((f) => f.backend), ...answerWith(loaded) };
console.log(JSON.stringify(out));
