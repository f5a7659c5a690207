// `boundedLoad`, shipped with the store (`task-projection`): plain JS that runs no engine rule,
// only waits for a session-list load, so an app settles a selection without a wasm call.
import { taskProjectionError, typeName } from './read.js';

/** The longest timer a platform keeps (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2147483647;

/**
 * `boundedLoad(load, timeoutMs)`: waits for a session-list load at most `timeoutMs` and resolves
 * (never rejects) to the `settleSelection` outcome: `{ sessions }`, `{ error }` (the load
 * rejected, threw, or is not a promise) or `{ error: "timeout", timedOut: true }`. NaN or a
 * timeout ≤ 0 times out at once; one beyond a timer's range, or Infinity, waits for the load.
 */
export function boundedLoad(load, timeoutMs) {
  return new Promise((resolve) => {
    let done = false;
    let timer;
    const finish = (outcome) => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      resolve(outcome);
    };
    if (typeof timeoutMs !== 'number' && timeoutMs !== undefined) {
      finish({ error: taskProjectionError('invalid_type', 'timeoutMs', `timeoutMs: expected a number, got ${typeof timeoutMs}`) });
      return;
    }
    let then;
    try {
      if (load !== null && (typeof load === 'object' || typeof load === 'function')) then = load.then;
    } catch (error) {
      finish({ error });
      return;
    }
    if (typeof then !== 'function') {
      finish({ error: taskProjectionError('invalid_type', 'load', `load: expected a promise, got ${typeName(load)}`) });
      return;
    }
    const ms = timeoutMs === undefined || timeoutMs !== timeoutMs || timeoutMs <= 0 ? 0 : timeoutMs;
    if (ms < MAX_TIMER_MS) timer = setTimeout(() => finish({ error: 'timeout', timedOut: true }), Math.ceil(ms));
    try {
      then.call(
        load,
        (sessions) => finish({ sessions }),
        // A rejection without a reason still reads as a failed load.
        (error) => finish({ error: error === undefined ? null : error }),
      );
    } catch (error) {
      finish({ error });
    }
  });
}
