// A route handler on the Node.js runtime. `await connection()`: answer per request (with
// cacheComponents a GET handler that reads no request data would be prerendered at build time;
// `export const dynamic = 'force-dynamic'` is refused there). `explain`: which build of the package
// the server resolved (the development build under `next dev`).
import { connection } from 'next/server';
import { ProjectionStore } from 'task-projection';
import { explained, runScript } from '../../_shared/scenario';

export async function GET(): Promise<Response> {
  await connection();
  const store = new ProjectionStore();
  try {
    return Response.json({ runtime: 'nodejs', ...runScript(store), explain: explained(store) });
  } finally {
    store.free();
  }
}
