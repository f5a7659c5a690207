// The BroadcastChannel between a demo page that records (`/?record`, record.ts) and the inspector
// (`/inspect/`, inspect.ts): the inspector asks (`attach`), the demo answers with its trace so far
// and again after each change of its store.
export const CHANNEL = 'task-projection-trace';

export type TraceMessage =
  | { type: 'attach' }
  | { type: 'trace'; source: string; text: string };
