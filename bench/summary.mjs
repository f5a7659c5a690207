#!/usr/bin/env node
// What holding a status summary as the store's own copy costs (issue 41: read into frozen JSON
// data at the call, js/read.js `held`): µs per `applyStatusSummaryEvent` with a summary of the
// reference client's shape, per task of a 1,000-task `applyTaskSnapshot`, per `taskStatusSummary`
// query, and the copy alone (`held`), in Node with the package's `node` entry. The copy's share
// of each call is the figure to read (absolute times move 2–4× between machines).
//
//   node bench/summary.mjs [--runs N]        after `node scripts/build.mjs`
import { ProjectionStore } from '../pkg/node.js';
import { __testing } from '../pkg/read.js';

const argv = process.argv.slice(2);
const RUNS = Number(argv[argv.indexOf('--runs') + 1]) || 9;

/** A summary as the reference client's backend sends one (kdlbs/kandev TaskStatusSummary-like). */
const summary = (revision, i = 0) => ({
  revision,
  updated_at: `2026-12-06T12:00:${String(revision % 60).padStart(2, '0')}.000000000Z`,
  pending_action: revision % 3 === 0 ? 'clarification' : undefined,
  primary_session: { id: `sess-${i}`, state: 'RUNNING', agent_profile_id: 'claude', started_at: '2026-12-06T11:00:00Z' },
  foreground_activity: { kind: 'tool_call', title: 'Running cargo test', started_at: '2026-12-06T11:59:00Z' },
  queued_prompt_count: 1,
  active_error: null,
  git: { branch: `feature/${i}`, base: 'main', ahead: 3, behind: 0, dirty: true, files: [{ path: 'src/lib.rs', added: 12, removed: 3 }, { path: 'README.md', added: 1, removed: 0 }] },
  pull_request: { number: 42 + i, state: 'open', url: `https://example.invalid/pr/${42 + i}`, checks: { passed: 7, failed: 0, pending: 1 } },
});

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** µs per unit: the median over RUNS samples of `f` (which does `units` units), after a warm-up. */
function perUnit(units, f) {
  f();
  const samples = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    f();
    samples.push(((performance.now() - t0) * 1000) / units);
  }
  return median(samples);
}

const EVENTS = 20_000;
const events = Array.from({ length: EVENTS }, (_, i) => ({ task_id: `task-${i % 100}`, status_summary: summary(i + 1, i % 100) }));
const event = perUnit(EVENTS, () => {
  const store = new ProjectionStore();
  for (const e of events) store.applyStatusSummaryEvent(e);
  store.free();
});
const copy = perUnit(EVENTS, () => {
  for (const e of events) __testing.held(e.status_summary);
});

const TASKS = 1_000;
const tasks = Array.from({ length: TASKS }, (_, i) => ({ id: `task-${i}`, status_summary: summary(5, i), task_pending_action: null }));
const snapshot = perUnit(TASKS, () => {
  const store = new ProjectionStore();
  store.applyTaskSnapshot(store.beginTaskFetch(), tasks);
  store.free();
});

const store = new ProjectionStore();
store.applyTaskSnapshot(store.beginTaskFetch(), tasks);
let sink = 0;
const QUERIES = 100_000;
const query = perUnit(QUERIES, () => {
  for (let i = 0; i < QUERIES; i++) sink += store.taskStatusSummary(`task-${i % TASKS}`).revision;
});
store.free();

const pct = (part, whole) => `${((100 * part) / whole).toFixed(0)} %`;
console.log(`status summaries (Node ${process.version}, ${RUNS} runs, medians; sink ${sink > 0})`);
console.log(`  applyStatusSummaryEvent      ${event.toFixed(2)} µs per event; the copy (held) ${copy.toFixed(2)} µs: ${pct(copy, event)} of it`);
console.log(`  applyTaskSnapshot, 1,000     ${snapshot.toFixed(2)} µs per task; the copy ${copy.toFixed(2)} µs: ${pct(copy, snapshot)} of it`);
console.log(`  taskStatusSummary            ${query.toFixed(3)} µs per query (the held copy, no copy per query)`);
