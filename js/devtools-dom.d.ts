// Declarations of `task-projection/devtools/dom` (js/devtools-dom.js): the devtools panel without
// React. `task-projection/devtools` re-exports `mountDevtools` beside `<ProjectionDevtools />`.
import type { ConnectionState } from './connect.js';
import type { ProjectionStore } from './task_projection.js';

/** The connection the panel shows: what `connect()` (`task-projection/connect`) returns. */
export interface DevtoolsConnection {
  state(): ConnectionState;
  subscribe(listener: (state: ConnectionState, detail?: number | 'timeout') => void): () => void;
}

export interface DevtoolsOptions {
  /** What `connect()` returned: the panel shows its state, and follows its changes. */
  connection?: DevtoolsConnection | null;
  /**
   * Where "Open in inspector" opens a window (the button is hidden without it), e.g. the
   * repository's inspector, `"/inspect/#live"` (it attaches on `#live`). The panel answers on the
   * inspector's BroadcastChannel (`task-projection-trace`: `{ type: "attach" }` →
   * `{ type: "trace", source, text }`), so an inspector of the same origin follows the recording.
   */
  inspectorUrl?: string | URL | null;
  /** Start open. Default `false`: only the toggle shows. */
  open?: boolean;
  /**
   * Start recording at once, as "Start recording" does (needs `import "task-projection/trace"`;
   * else the panel says so). Mounted before the store's first input, the trace is `fresh`: every
   * input from the first one. Default `false`.
   */
  record?: boolean;
}

/** What `open()` can show at once: a session's explanation, or a task's. */
export type DevtoolsTarget = { sessionId: string } | { taskId: string };

/** A mounted panel. */
export interface DevtoolsHandle {
  /** Opens the panel; with a target, on its explanation (and focuses it). */
  open(target?: DevtoolsTarget): void;
  /** Closes the panel (the toggle stays). */
  close(): void;
  /** Opens or closes the panel. */
  toggle(): void;
  isOpen(): boolean;
  /** Removes the panel and the toggle; lets go of its store subscription, its connection
   * listener, its timers and its channel, and stops a recording it started. Idempotent. */
  unmount(): void;
  /** The panel's host element, `<task-projection-devtools>`: the panel is in its (open) shadow root. */
  readonly host: HTMLElement;
}

/**
 * Adds the devtools panel for `store` to `element` (default `document.body`): a floating toggle
 * ("Projection") that opens a panel listing the tasks and sessions the store holds with their
 * answers ("not known yet" for an `undefined` one), and, for the one you click (or Enter), why:
 * `explain(sessionId)` / `explainOwner(taskId)` in words, with the codes in smaller details lines,
 * and the inputs the store rejected. It also shows the connection's state, the stream position, and
 * records a trace (with `import "task-projection/trace"`): start, stop, save as `.ndjson`, open in
 * the inspector. Everything is inside a shadow root; keyboard: Tab, Enter or Space on a row, arrow
 * keys in the list and the tabs, Escape closes the explanation, then the panel.
 *
 * It needs the store's development build (`task-projection/development`, or the `development`
 * export condition: `next dev`, `vite`); on the production build it says so and shows only the
 * connection and the stream position. It changes nothing of the store: no answer, no `version()`,
 * no `lastReason()`.
 *
 * Throws a TaskProjectionError `invalid_type` for a `store` that is not a ProjectionStore, an
 * `element` that is not an element (or no `document` without one), and bad options.
 * @example
 * import { mountDevtools } from "task-projection/devtools/dom";
 * const devtools = mountDevtools(store, document.body, { connection: link, inspectorUrl: "/inspect/#live" });
 * devtools.open({ sessionId: "sess-1" });
 * // later: devtools.unmount();
 */
export function mountDevtools(store: ProjectionStore, element?: Element | null, options?: DevtoolsOptions): DevtoolsHandle;
