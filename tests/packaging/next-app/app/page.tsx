// A server component: the package runs during server rendering (the `node` export condition:
// the wasm is embedded and instantiated at import), so the answer is in the HTML.
//
// With cacheComponents (create-next-app's default) a page that reads no request data is
// prerendered once, at build time. `await connection()` makes the answer render per request, as
// `export const dynamic = 'force-dynamic'` did before (a segment config cacheComponents refuses);
// request data must be read inside <Suspense>: the shell is prerendered, the answer streams into
// the same HTML response.
import { connection } from 'next/server';
import { Suspense } from 'react';
import { ProjectionStore } from 'task-projection';
import { compareRevisions, normalizeStartPolicy } from 'task-projection/rules';
import { runScript, SCRIPT } from './_shared/scenario';

export default function Home() {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 760, margin: '2rem auto' }}>
      <h1>Next.js server component</h1>
      <Suspense fallback={<p>Rendering the answer…</p>}>
        <ServerAnswer />
      </Suspense>
    </main>
  );
}

async function ServerAnswer() {
  await connection();
  const store = new ProjectionStore();
  try {
    const a = runScript(store);
    return (
      <section data-testid="server-answer">
        <p>
          {SCRIPT.length} events applied on the server: pending action <b data-testid="pending-action">{a.pendingAction ?? 'none'}</b>,
          owner session <b data-testid="owner">{a.owner}</b>, bundle <b data-testid="pending-id">{a.pendingId ?? 'none'}</b>
        </p>
        <ol data-testid="questions">
          {a.questions.map((q) => (
            <li key={q}>{q}</li>
          ))}
        </ol>
        <p>
          compareRevisions(10/1, 9/5) = <b data-testid="compare">{compareRevisions({ epoch: '10', sequence: 1 }, { epoch: '9', sequence: 5 })}</b>,
          normalizeStartPolicy(&quot; new &quot;) = <b data-testid="policy">{normalizeStartPolicy(' new ')}</b>
        </p>
      </section>
    );
  } finally {
    store.free();
  }
}
