// Node side of the benchmark: `node bench/node.mjs <part> [options as JSON]` runs one part
// against the package's `node` entry (resolved by name through pkg/package.json's "exports";
// bench/run.mjs links bench/node_modules/task-projection -> pkg/) and prints one JSON line.
// Parts: events, paths, queries, ingest, memory, memory-boot, scale (options: n, default 10⁶; runs). Each
// part runs in a fresh process, so the wasm instance (and its memory) is fresh too.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { SIZES, eventBench, ingestBench, inputPathsBench, memoryBench, queryBench, scaleBench, subscriberBench } from './store.bench.mjs';
// TP_MODULE / TP_RULES_MODULE: another build's store / rules entry to compare (a module with the
// same exports and default init).
const [part = 'events', raw = '{}'] = process.argv.slice(2);
// The production build (what apps ship) for speed; the parts that read `store.stats()` (memory,
// ingest) on the development build, which has it (both hold the same state).
const STATS_PARTS = new Set(['memory', 'memory-boot', 'ingest']);
const store = await import(process.env.TP_MODULE ?? (STATS_PARTS.has(part) ? 'task-projection/development' : 'task-projection'));
const rules = await import(process.env.TP_RULES_MODULE ?? 'task-projection/rules');
const tp = { ...store, ...rules };
const init = store.default;
// The flight recorder, for the events part's `recording` pass (absent from older builds).
await import('task-projection/trace').catch(() => undefined);
await rules.default();

const options = JSON.parse(raw);
const now = () => performance.now();
const wasm = await init();

let result;
switch (part) {
  case 'events':
    result = (options.sizes ?? SIZES).map((n) => eventBench(tp, n, { now, recordingOn: true, ...options }));
    break;
  case 'paths':
    result = inputPathsBench(tp, options.n ?? 5000, { now });
    result.rows.eventWithFlush = (await subscriberBench(tp, options.n ?? 5000, { now })).eventWithFlush;
    break;
  case 'ingest':
    result = ingestBench(tp, fs.readFileSync(options.snapshot, 'utf8'), { now, runs: options.runs ?? 5 });
    break;
  case 'memory':
    result = memoryBench(tp, wasm.memory, { mode: 'session', n: options.n ?? 50000 });
    break;
  case 'memory-boot':
    result = memoryBench(tp, wasm.memory, {
      mode: 'boot',
      snapshot: JSON.parse(fs.readFileSync(options.snapshot, 'utf8')),
    });
    break;
  case 'queries':
    result = queryBench(tp, { now, ...options });
    break;
  case 'scale':
    result = scaleBench(tp, options.n ?? 1_000_000, { now, runs: options.runs ?? 3 });
    break;
  default:
    throw new Error(`unknown part ${part}`);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
