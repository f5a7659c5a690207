// The BroadcastChannel between a demo page that records (`/?record`: the package's devtools panel,
// js/devtools-recording.js, speaks it) and the inspector (`/inspect/`, inspect.ts): the inspector
// asks (`attach`), the page answers with its trace so far and again after each change of its store.
export const CHANNEL = 'task-projection-trace';

export type TraceMessage =
  | { type: 'attach' }
  | { type: 'trace'; source: string; text: string };
