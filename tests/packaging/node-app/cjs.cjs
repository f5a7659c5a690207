// Node CommonJS consumer of the installed tarball: `require` by package name (require(esm),
// Node >= 20.19), the fallback and the react helper. Prints one JSON line: { entry: answer }.
const tp = require('task-projection');
const fallback = require('task-projection/fallback');
const rules = require('task-projection/rules');
const { storeSubscription } = require('task-projection/react');
const { runScript } = require('./_shared/scenario.cjs');

const answerWith = (api) => {
  const store = new api.ProjectionStore();
  storeSubscription(store);
  const a = runScript(store);
  store.free();
  return a;
};
console.log(JSON.stringify({
  require: answerWith(tp),
  compare: rules.compareRevisions({ epoch: '10', sequence: 1 }, { epoch: '9', sequence: 5 }),
  fallback: answerWith(fallback),
}));
