// Node ESM consumer of the installed tarball: `import` by package name (the `node` condition),
// the stateless rules (`task-projection/rules` and its fallback, directly and through the loader),
// the loader, the fallback and the react helper. Prints one JSON line: { entry: answer }.
import init, * as tp from 'task-projection';
import * as fallback from 'task-projection/fallback';
import * as rules from 'task-projection/rules';
import * as rulesFallback from 'task-projection/rules/fallback';
import { loadTaskProjection, loadTaskProjectionRules } from 'task-projection/loader';
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
  out.compare = rules.compareRevisions({ epoch: '10', sequence: 1 }, { epoch: '9', sequence: 5 });
  out.storeHasRules = 'compareRevisions' in tp;
}
out.fallback = answerWith(fallback);
const loaded = await loadTaskProjection();
out.loader = { backend: loaded.backend, failures: loaded.failures.map((f) => f.backend), ...answerWith(loaded) };
const loadedRules = await loadTaskProjectionRules();
const revisions = [{ epoch: '10', sequence: 1 }, { epoch: '9', sequence: 5 }];
out.rules = {
  fallback: rulesFallback.compareRevisions(...revisions),
  loader: { backend: loadedRules.backend, compare: loadedRules.compareRevisions(...revisions) },
};
console.log(JSON.stringify(out));
