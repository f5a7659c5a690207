// Which build of the store plain Node resolves: `task-projection` by `import` and by `require`
// (production by default; the development build under `node --conditions=development`), and the
// `task-projection/development` subpath (the development build under any condition). Prints one
// JSON line: { entry: explained(store) } (tests/packaging/shared/scenario.ts).
import { createRequire } from 'node:module';
import * as imported from 'task-projection';
import * as development from 'task-projection/development';
import { explained, runScript } from './_shared/scenario.mjs';

const explain = (api) => {
  const store = new api.ProjectionStore();
  runScript(store);
  const e = explained(store);
  store.free();
  return e;
};
console.log(JSON.stringify({
  import: explain(imported),
  require: explain(createRequire(import.meta.url)('task-projection')),
  development: explain(development),
}));
