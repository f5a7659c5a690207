// A server component: the package runs during server rendering (the `node` export condition:
// the wasm is embedded and instantiated at import), so the answer is in the HTML.
import { ProjectionStore } from 'task-projection';
import { compareRevisions, normalizeStartPolicy } from 'task-projection/rules';
import { runScript, SCRIPT } from './_shared/scenario';

export const dynamic = 'force-dynamic';

export default function Home() {
  const store = new ProjectionStore();
  try {
    const a = runScript(store);
    return (
      <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 760, margin: '2rem auto' }}>
        <h1>Next.js server component</h1>
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
      </main>
    );
  } finally {
    store.free();
  }
}
