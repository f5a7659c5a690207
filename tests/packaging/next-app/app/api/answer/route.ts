// A route handler on the Node.js runtime.
import { ProjectionStore } from 'task-projection';
import { runScript } from '../../_shared/scenario';

export const dynamic = 'force-dynamic';

export function GET(): Response {
  const store = new ProjectionStore();
  try {
    return Response.json({ runtime: 'nodejs', ...runScript(store) });
  } finally {
    store.free();
  }
}
