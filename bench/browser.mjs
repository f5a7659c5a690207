// Chromium side of the benchmark: the package's `default` entries (/pkg/index.js, the store, and
// /pkg/rules/index.js, the stateless rules for the stateless pass; each init() fetches its .wasm),
// one part per page load (fresh wasm instances per part). The result
// lands in window.__bench for bench/run.mjs. Served with COOP/COEP so the page is
// cross-origin isolated and performance.now() has its fine (5 µs) resolution.
import initRules, * as rules from '/pkg/rules/index.js';
import { SIZES, eventBench, ingestBench, memoryBench, queryBench } from './store.bench.mjs';

const params = new URLSearchParams(location.search);
const part = params.get('part') ?? 'events';
// The production build (what apps ship) for speed; the parts that read `store.stats()` on the
// development build, which has it.
const STATS_PARTS = new Set(['memory', 'memory-boot', 'ingest']);
const store = await import(STATS_PARTS.has(part) ? '/pkg/development/index.js' : '/pkg/index.js');
const init = store.default;
const options = JSON.parse(params.get('options') ?? '{}');
const now = () => performance.now();
const tp = { ...store, ...rules };
const snapshotText = async () => (await fetch('/target/bench-data/snapshot.json')).text();

try {
  const wasm = await init();
  await initRules();
  let result;
  switch (part) {
    case 'events':
      result = (options.sizes ?? SIZES).map((n) => eventBench(tp, n, { now, recordingOn: true, ...options }));
      break;
    case 'queries':
      result = queryBench(tp, { now, ...options });
      break;
    case 'ingest':
      result = ingestBench(tp, await snapshotText(), { now, runs: options.runs ?? 5 });
      break;
    case 'memory':
      result = memoryBench(tp, wasm.memory, { mode: 'session', n: options.n ?? 50000 });
      break;
    case 'memory-boot':
      result = memoryBench(tp, wasm.memory, { mode: 'boot', snapshot: JSON.parse(await snapshotText()) });
      break;
    default:
      throw new Error(`unknown part ${part}`);
  }
  window.__bench = { ok: true, crossOriginIsolated: self.crossOriginIsolated, userAgent: navigator.userAgent, result };
} catch (error) {
  window.__bench = { ok: false, error: String(error?.stack ?? error) };
}
document.getElementById('out').textContent = JSON.stringify(window.__bench, null, 2);
