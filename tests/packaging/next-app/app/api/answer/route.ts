// A route handler on the Node.js runtime. `await connection()`: answer per request (with
// cacheComponents a GET handler that reads no request data would be prerendered at build time;
// `export const dynamic = 'force-dynamic'` is refused there).
import { connection } from 'next/server';
import { ProjectionStore } from 'task-projection';
import { runScript } from '../../_shared/scenario';

export async function GET(): Promise<Response> {
  await connection();
  const store = new ProjectionStore();
  try {
    return Response.json({ runtime: 'nodejs', ...runScript(store) });
  } finally {
    store.free();
  }
}
