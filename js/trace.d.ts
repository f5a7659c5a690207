// Declarations of `task-projection/trace` (js/trace.js). Importing the module installs the flight
// recorder of `store.startRecording()` / `store.stopRecording()` (declared on `ProjectionStore`),
// for the stores of every entry (`task-projection`, `/mvp`, `/fallback`, the loader's):
//
//   import "task-projection/trace";
//
// Until then `startRecording()` throws a TaskProjectionError `recording_unavailable`, so an app
// that never records carries none of the recorder's code.

/** One step of `replayTrace`: the input, this engine's answers and the recorded ones. */
export interface TraceReplayStep {
  /** The step's line in the trace (1-based). */
  line: number;
  step: number;
  /** Monotonic microseconds, as recorded. */
  us: number;
  call: string;
  /** The reason this engine gives (`null` for inputs without one, or when it refused it). */
  reason: string | null;
  recordedReason: string | null;
  /** What the call returned (a token, `{ ticket, reload }`, a navigation), else `null`. */
  result: unknown;
  /** The answers the input changed: `{ sessions?: { [id]: … }, tasks?: { [id]: … } }`. */
  answers: Record<string, unknown>;
  recorded: Record<string, unknown>;
  /** The typed error's `code field: message` when this engine refused the input. */
  error: string | null;
  /** Same answers and reason as recorded. */
  same: boolean;
}

/** What `replayTrace` found. */
export interface TraceReplay {
  /** The recording started on an empty store and the ring dropped nothing. */
  complete: boolean;
  /** Every step gave the recorded answers and reason. */
  same: boolean;
  steps: TraceReplayStep[];
}

/**
 * Replays a trace (`stopRecording()`'s text) on a fresh store of `task-projection`'s default
 * build (in a browser after its `await init()`; in Node and edge runtimes ready at import) and
 * compares each step's answers with the recorded ones (natively: `task-projection-replay
 * --check`). A malformed trace throws `invalid_value` (`field` `text`) naming the line; a
 * non-string `invalid_type`.
 * @example
 * import { replayTrace } from "task-projection/trace";
 * const { same, steps } = replayTrace(fs.readFileSync("trace.ndjson", "utf8"));
 */
export function replayTrace(text: string): TraceReplay;
