'use client';
// The devtools panel in the fixture apps (copied into each app by tests/packaging/prepare.mjs; edit
// it here): the store of ./scenario, played at once when the provider's store opens, and the panel
// on it: `<ProjectionDevtools />` from task-projection/devtools below the provider (variant
// "react": next-app/app/devtools/page.tsx), or `mountDevtools` from task-projection/devtools/dom in
// an effect (variant "dom": the Vite app's ?mode=devtools). The panel starts open. The store is
// `window.__store` for the tests, which compare the panel with its explanations.
import { useEffect, useState } from 'react';
import init, { ProjectionStore } from 'task-projection';
import { ProjectionDevtools } from 'task-projection/devtools';
import { mountDevtools } from 'task-projection/devtools/dom';
import { ProjectionStoreProvider, useProjectionStore } from 'task-projection/react';
import { SCRIPT } from './scenario';

const openStore = async (): Promise<ProjectionStore> => {
  await init();
  const store = new ProjectionStore();
  for (const step of SCRIPT) step.apply(store);
  (window as unknown as { __store?: ProjectionStore }).__store = store;
  return store;
};

/** The framework-free panel, mounted from an effect. */
function DomPanel() {
  const store = useProjectionStore();
  useEffect(() => {
    const panel = mountDevtools(store, document.body, { open: true });
    return () => panel.unmount();
  }, [store]);
  return null;
}

function Ready() {
  const store = useProjectionStore();
  const [version, setVersion] = useState(-1);
  useEffect(() => setVersion(store.version()), [store]);
  return <p data-testid="devtools-ready" data-version={version}>The script is applied (store version {version}).</p>;
}

export function DevtoolsDemo({ variant }: { variant: 'react' | 'dom' }) {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 760, margin: '2rem auto' }}>
      <h1>Devtools ({variant === 'react' ? '<ProjectionDevtools />' : 'mountDevtools'})</h1>
      <ProjectionStoreProvider open={openStore} fallback={<p data-testid="loading">loading task-projection…</p>}>
        <Ready />
        {variant === 'react' ? <ProjectionDevtools defaultOpen /> : <DomPanel />}
      </ProjectionStoreProvider>
    </main>
  );
}
