// A route handler on the edge runtime (the `edge-light` export condition).
import { ProjectionStore } from 'task-projection';
import { runScript } from '../../_shared/scenario';

export const runtime = 'edge';
export const dynamic = 'force-dynamic';

export function GET(): Response {
  const store = new ProjectionStore();
  try {
    return Response.json({ runtime: 'edge', ...runScript(store) });
  } finally {
    store.free();
  }
}
