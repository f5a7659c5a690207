// `replayTrace(text)`: a trace (docs/trace-format.md) replayed on a fresh store through the
// package's public methods, recorded again, each step's answers compared with the recorded ones:
// what `task-projection-replay --check` does natively (src/trace/native.rs). Its own module, only
// re-exported by the entries: a bundle that does not import it leaves it out. It replays on the
// development build (recording is a development feature): pkg/development/, beside this file in
// pkg/.
import { ProjectionStore } from './development/store.js';
import { taskProjectionError, typeName } from './development/read.js';

/** The calls a trace line may name. */
const CALLS = new Set([
  'applySessionList', 'applyTurnList', 'applyMessagePage', 'beginTaskFetch', 'applyTaskSnapshot',
  'applyMessageEvent', 'applyMessageEvents', 'applyTurnEvent', 'applySessionEvent',
  'applyStatusSummaryEvent', 'applyTaskUpdated', 'removeTask', 'applyFrame', 'beginSelection',
  'setActiveTask', 'settleSelection', 'respondStart', 'respondReply', 'removeSession',
]);

const bad = (n, problem) => taskProjectionError('invalid_value', 'text', `text: line ${n}: ${problem}`);

/** Line `n` as a JSON object, or a TaskProjectionError naming it. */
function object(n, text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    // Reported below, with the line.
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
  throw bad(n, 'not a JSON object');
}

/**
 * Replays a trace (`stopRecording()`'s text) on a fresh store, each line through this package's
 * public methods, and compares the answers each input changes with the recorded ones. `complete`
 * is false when the ring dropped lines or the recording started on a store that held something:
 * answers may then differ.
 */
export function replayTrace(text) {
  if (typeof text !== 'string') throw taskProjectionError('invalid_type', 'text', `text: expected a string, got ${typeName(text)}`);
  const lines = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() !== '') lines.push([i + 1, line]);
  });
  if (lines.length === 0) throw bad(1, 'empty trace, no header line');
  const header = object(lines[0][0], lines[0][1]);
  if (header.format !== 'task-projection-trace' || header.version !== 1) {
    throw bad(lines[0][0], 'not a task-projection-trace version 1 header');
  }
  const steps = lines.slice(1).map(([n, line]) => {
    const step = object(n, line);
    if (!CALLS.has(step.call) || !Array.isArray(step.args) || step.answers === null || typeof step.answers !== 'object') {
      throw bad(n, 'not a trace step ({ call, args, answers })');
    }
    return [n, step];
  });
  const store = new ProjectionStore();
  const tickets = new Map();
  let out;
  let again;
  try {
    store.startRecording({ maxBytes: 1 << 28 });
    out = steps.map(([line, step]) => {
      const args = step.args.slice();
      if (step.call === 'settleSelection' && tickets.has(args[0])) args[0] = tickets.get(args[0]);
      let result = null;
      let error = null;
      try {
        result = store[step.call](...args) ?? null;
        if (step.call === 'beginSelection' && typeof step.ticket === 'string') tickets.set(step.ticket, result.ticket);
      } catch (e) {
        error = e && typeof e.code === 'string' ? `${e.code} ${e.field}: ${e.message}` : String(e);
      }
      return {
        line, step: step.step, us: step.us, call: step.call, reason: null, recordedReason: step.reason ?? null,
        result, answers: {}, recorded: step.answers, error, same: false,
      };
    });
    again = store.stopRecording().split('\n').slice(1, -1);
  } finally {
    store.free();
  }
  // A refused input is not recorded: the replayed lines are the accepted steps', in order.
  let next = 0;
  for (const step of out) {
    if (step.error !== null) continue;
    const line = JSON.parse(again[next++]);
    step.answers = line.answers;
    step.reason = line.reason ?? null;
    step.same = step.reason === step.recordedReason && JSON.stringify(step.answers) === JSON.stringify(step.recorded);
  }
  return { complete: header.fresh === true && header.dropped === 0, same: out.every((step) => step.same), steps: out };
}
