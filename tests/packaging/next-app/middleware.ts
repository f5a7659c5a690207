// The edge runtime (the package's `edge-light` export condition), answering /api/edge. With
// cacheComponents (create-next-app's default) a route handler cannot choose the edge runtime
// (`export const runtime = 'edge'` fails the build: the edge runtime is deprecated in Next 16), so
// this is the one place it still runs in such an app: `middleware.ts`, which runs on the edge
// runtime by default (its successor `proxy.ts` runs on Node.js). Next warns that the
// "middleware" file convention is deprecated; that warning is expected. `explain`: which build the
// edge runtime resolved (`edge-light`, and `development` under `next dev`).
import { ProjectionStore } from 'task-projection';
import { explained, runScript } from './app/_shared/scenario';

export const config = { matcher: '/api/edge' };

export function middleware(): Response {
  // `EdgeRuntime` is a global of the edge runtime only: the answer says where it ran.
  const runtime = typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string' ? 'edge' : 'nodejs';
  const store = new ProjectionStore();
  try {
    return Response.json({ runtime, ...runScript(store), explain: explained(store) });
  } finally {
    store.free();
  }
}
