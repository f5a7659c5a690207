'use client';
// The client side of every fixture app (copied into each app by tests/packaging/prepare.mjs; edit
// it here): feeds a ProjectionStore the scripted REST + WebSocket sequence of ./scenario as it
// "arrives" (timers) and renders the pending question and its owner session through
// task-projection/react: <ProjectionStoreProvider open={...}> (one store per page, opened once
// the wasm is initialized; the fallback on the server and during hydration) and one hook per
// answer.
//
// mode "static": `import init, { ProjectionStore } from "task-projection"` and `await init()`.
// mode "loader": `loadTaskProjection()` from task-projection/loader (wasm, else MVP wasm, else JS).
// Once the script is applied it shows `explained(store)`: which build the app resolved.
import { Component, memo, useEffect, useRef, useState, type ReactNode } from 'react';
import init, { ProjectionStore } from 'task-projection';
import { loadTaskProjection } from 'task-projection/loader';
import {
  ProjectionStoreProvider, usePendingClarification, usePendingOwner, useProjectionStore, useSessionPendingAction,
  useStoreAnswer, useTaskPendingAction,
} from 'task-projection/react';
import { explained, OWNER_SESSION, QUESTIONS, SCRIPT, TASK_ID } from './scenario';

/** Which build opened the store (shown on the page; the tests check it). */
let backend = '';
/** How often an `open` function ran (the provider calls it once per page, StrictMode or not). */
let opens = 0;
/** How often the answer's effect mounted: 2 under StrictMode in development (mount, unmount,
 * mount), 1 otherwise. */
let mounts = 0;

// Defined once at module scope: the provider calls each at most once per page.
const openStatic = async (): Promise<ProjectionStore> => {
  opens += 1;
  await init();
  backend = 'wasm (static import)';
  return new ProjectionStore();
};
const openLoader = async (): Promise<ProjectionStore> => {
  opens += 1;
  const tp = await loadTaskProjection();
  backend = tp.backend;
  return new tp.ProjectionStore();
};

/** The question bundle, in a component of its own with no props: it renders when its answer
 * changes, not when the rest of the page does (`data-renders` counts its renders). */
const Question = memo(function Question() {
  const renders = useRef(0);
  renders.current += 1;
  const bundle = usePendingClarification(OWNER_SESSION);
  return (
    <div data-testid="question" data-renders={renders.current}>
      <p>
        pending question bundle <b data-testid="pending-id">{bundle ? bundle.pending_id : 'none'}</b>:
      </p>
      <ol data-testid="questions">
        {(bundle ? bundle.message_ids : []).map((id) => (
          <li key={id}>{QUESTIONS[id] ?? id}</li>
        ))}
      </ol>
    </div>
  );
});

const Owner = memo(function Owner() {
  const pendingAction = useSessionPendingAction(OWNER_SESSION);
  const taskPendingAction = useTaskPendingAction(TASK_ID);
  const owner = usePendingOwner(TASK_ID);
  return (
    <>
      <p>
        pending action: <b data-testid="pending-action">{pendingAction ?? 'none'}</b> · task:{' '}
        <b data-testid="task-pending">{taskPendingAction ?? 'none'}</b>
      </p>
      <p>
        owner session: <b data-testid="owner">{owner === '' ? '(task only)' : owner}</b>
      </p>
    </>
  );
});

/** Plays the script into the provider's store, then renders the answers. */
function Answer() {
  const store = useProjectionStore();
  const version = useStoreAnswer((s) => s.version());
  const [applied, setApplied] = useState(0);
  useEffect(() => {
    mounts += 1;
    const timers: ReturnType<typeof setTimeout>[] = [];
    let at = 0;
    SCRIPT.forEach((step, i) => {
      at += step.delay;
      timers.push(
        setTimeout(() => {
          step.apply(store);
          setApplied(i + 1);
        }, at),
      );
    });
    return () => {
      for (const t of timers) clearTimeout(t);
    };
  }, [store]);
  const done = applied === SCRIPT.length;
  return (
    <section data-testid="answer" data-done={done ? 'true' : 'false'}>
      <p>
        backend: <b data-testid="backend">{backend}</b> · store version <span data-testid="version">{version}</span> ·
        events applied <span data-testid="applied">{applied}</span>/{SCRIPT.length} · opened{' '}
        <span data-testid="opens">{opens}</span> · mounted <span data-testid="mounts">{mounts}</span>
      </p>
      <Owner />
      <Question />
      {/* The development build explains; the production build throws development_only. */}
      <p>
        explain(): <span data-testid="explain">{done ? explained(store) : ''}</span>
      </p>
      <ul data-testid="log">
        {SCRIPT.slice(0, applied).map((s) => (
          <li key={s.label}>{s.label}</li>
        ))}
      </ul>
    </section>
  );
}

export function ProjectionDemo({ title, mode = 'static' }: { title: string; mode?: 'static' | 'loader' }) {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 760, margin: '2rem auto' }}>
      <h1>{title}</h1>
      <Boundary>
        <ProjectionStoreProvider open={mode === 'loader' ? openLoader : openStatic} fallback={<p data-testid="loading">loading task-projection…</p>}>
          <Answer />
        </ProjectionStoreProvider>
      </Boundary>
    </main>
  );
}

/** Shows an error the provider throws (an `open` that failed) instead of a blank page. */
class Boundary extends Component<{ children: ReactNode }, { error: string | null }> {
  override state: { error: string | null } = { error: null };

  static getDerivedStateFromError(e: unknown): { error: string } {
    return { error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }

  override render(): ReactNode {
    return this.state.error !== null ? <p data-testid="error">{this.state.error}</p> : this.props.children;
  }
}
