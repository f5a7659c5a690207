'use client';
// The client side of every fixture app (copied into each app by tests/packaging/prepare.mjs; edit
// it here): feeds a ProjectionStore the scripted REST + WebSocket sequence of ./scenario as it
// "arrives" (timers) and renders the pending question and its owner session through
// useSyncExternalStore + task-projection/react's storeSubscription.
//
// mode "static": `import init, { ProjectionStore } from "task-projection"` and `await init()`.
// mode "loader": `loadTaskProjection()` from task-projection/loader (wasm, else MVP wasm, else JS).
import { useEffect, useState, useSyncExternalStore } from 'react';
import init, { ProjectionStore } from 'task-projection';
import { loadTaskProjection } from 'task-projection/loader';
import { storeSubscription, type StoreSubscription } from 'task-projection/react';
import { SCRIPT, answer } from './scenario';

interface Live {
  store: ProjectionStore;
  sub: StoreSubscription;
  backend: string;
}

async function open(mode: 'static' | 'loader'): Promise<Omit<Live, 'sub'>> {
  if (mode === 'loader') {
    const tp = await loadTaskProjection();
    return { store: new tp.ProjectionStore(), backend: tp.backend };
  }
  await init();
  return { store: new ProjectionStore(), backend: 'wasm (static import)' };
}

function Answer({ live, applied }: { live: Live; applied: number }) {
  // Re-renders exactly when the store's version changes (at most once per batch of events).
  const version = useSyncExternalStore(live.sub.subscribe, live.sub.getSnapshot, live.sub.getSnapshot);
  const a = answer(live.store);
  const done = applied === SCRIPT.length;
  return (
    <section data-testid="answer" data-done={done ? 'true' : 'false'}>
      <p>
        backend: <b data-testid="backend">{live.backend}</b> · store version <span data-testid="version">{version}</span> ·
        events applied <span data-testid="applied">{applied}</span>/{SCRIPT.length}
      </p>
      <p>
        pending action: <b data-testid="pending-action">{a.pendingAction ?? 'none'}</b> · task:{' '}
        <b data-testid="task-pending">{a.taskPendingAction ?? 'none'}</b>
      </p>
      <p>
        owner session: <b data-testid="owner">{a.owner === '' ? '(task only)' : a.owner}</b>
      </p>
      <p>
        pending question bundle <b data-testid="pending-id">{a.pendingId ?? 'none'}</b>:
      </p>
      <ol data-testid="questions">
        {a.questions.map((q) => (
          <li key={q}>{q}</li>
        ))}
      </ol>
      <ul data-testid="log">
        {SCRIPT.slice(0, applied).map((s) => (
          <li key={s.label}>{s.label}</li>
        ))}
      </ul>
    </section>
  );
}

export function ProjectionDemo({ title, mode = 'static' }: { title: string; mode?: 'static' | 'loader' }) {
  const [live, setLive] = useState<Live | null>(null);
  const [applied, setApplied] = useState(0);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    let store: ProjectionStore | null = null;
    const timers: ReturnType<typeof setTimeout>[] = [];
    open(mode).then(
      (opened) => {
        if (cancelled) {
          opened.store.free();
          return;
        }
        const s = opened.store;
        store = s;
        setLive({ ...opened, sub: storeSubscription(s) });
        let at = 0;
        SCRIPT.forEach((step, i) => {
          at += step.delay;
          timers.push(
            setTimeout(() => {
              step.apply(s);
              setApplied(i + 1);
            }, at),
          );
        });
      },
      (e: unknown) => setError(e instanceof Error ? `${e.name}: ${e.message}` : String(e)),
    );
    return () => {
      cancelled = true;
      for (const t of timers) clearTimeout(t);
      if (store) {
        store.dispose();
        store.free();
      }
    };
  }, [mode]);

  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 760, margin: '2rem auto' }}>
      <h1>{title}</h1>
      {error !== null ? <p data-testid="error">{error}</p> : null}
      {live === null ? <p data-testid="loading">loading task-projection…</p> : <Answer live={live} applied={applied} />}
    </main>
  );
}
