// A node:test reporter that writes leaf-test counts as JSON, grouped by file and top-level
// test/suite (so scripts/test.sh can print per-runner counts). Used next to the spec reporter:
//   node --test --test-reporter=spec --test-reporter-destination=stdout \
//        --test-reporter=./scripts/node-test-counts.mjs --test-reporter-destination=counts.json
// A test's subtests finish before it does, so an event is a leaf when the previous event of the
// same file was not one level deeper.
import path from 'node:path';

export default async function* countsReporter(source) {
  const groups = {};
  const lastNesting = new Map(); // file -> nesting of its previous pass/fail event
  const pending = new Map(); // file -> [{ nesting, status }] leaf results waiting for their top-level test
  const totals = { pass: 0, fail: 0, skip: 0, todo: 0 };

  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    const file = data.file ? path.basename(data.file) : '(unknown file)';
    const previous = lastNesting.get(file) ?? -1;
    lastNesting.set(file, data.nesting);
    const isSuite = data.details?.type === 'suite';
    const isLeaf = !isSuite && previous !== data.nesting + 1;
    if (isLeaf) {
      const status = data.skip ? 'skip' : data.todo ? 'todo' : event.type === 'test:pass' ? 'pass' : 'fail';
      if (!pending.has(file)) pending.set(file, []);
      pending.get(file).push(status);
    }
    if (data.nesting === 0) {
      const key = `${file} › ${data.name}`;
      const counts = (groups[key] ??= { pass: 0, fail: 0, skip: 0, todo: 0 });
      for (const status of pending.get(file) ?? []) {
        counts[status] += 1;
        totals[status] += 1;
      }
      // A top-level test that failed outside its subtests (e.g. a hook) counts as one failure.
      if (event.type === 'test:fail' && !(pending.get(file) ?? []).includes('fail')) {
        counts.fail += 1;
        totals.fail += 1;
      }
      pending.set(file, []);
    }
  }
  yield `${JSON.stringify({ totals, groups }, null, 2)}\n`;
}
