// `task-projection/devtools`: the devtools panel as a React component, `<ProjectionDevtools />`, and
// `mountDevtools` (one implementation: js/devtools-dom.js, also `task-projection/devtools/dom` for
// apps without React). The component renders nothing itself: once its store is known (the `store`
// prop, else the live store of the nearest `ProjectionStoreProvider`) it mounts the panel on
// `document.body` in an effect (never on the server, so no hydration mismatch), and unmounts it
// when it unmounts or its props change (keeping whether it was open).
import { useEffect, useRef } from 'react';
import { mountDevtools } from './devtools-dom.js';
import { useLiveStore } from './react.js';

export { mountDevtools };

/** The store of the nearest provider (`null` while it answers from its initialState), or
 * `undefined` outside any provider. useLiveStore reads the context first and throws after: the
 * hooks run in the same order either way. */
function useProviderStore() {
  try {
    return useLiveStore();
  } catch (_) {
    return undefined;
  }
}

/**
 * The devtools panel for `store`, or for the store of the nearest `ProjectionStoreProvider`
 * (nothing until the provider's store is open). Props: `store`, `connection` (what `connect()`
 * returned), `inspectorUrl`, `defaultOpen`. Render it in development only, e.g.
 * `{process.env.NODE_ENV === "development" && <ProjectionDevtools />}`.
 */
export function ProjectionDevtools({ store, connection = null, inspectorUrl = null, defaultOpen = false }) {
  const fromProvider = useProviderStore();
  const live = store !== undefined ? store : fromProvider;
  if (live === undefined) {
    const error = new Error('store: <ProjectionDevtools /> has no store: pass `store`, or render it inside <ProjectionStoreProvider>');
    error.name = 'TaskProjectionError';
    error.code = 'invalid_type';
    error.field = 'store';
    throw error;
  }
  // Whether the panel was open, across remounts (new props, StrictMode's second mount).
  const wasOpen = useRef(defaultOpen);
  // By its text: a new URL object with the same address is the same prop (anything else goes to
  // mountDevtools as it is, which refuses it).
  const url = typeof URL === 'function' && inspectorUrl instanceof URL ? String(inspectorUrl) : inspectorUrl;
  useEffect(() => {
    if (live === null) return undefined;
    const panel = mountDevtools(live, undefined, { connection, inspectorUrl: url, open: wasOpen.current });
    return () => {
      wasOpen.current = panel.isOpen();
      panel.unmount();
    };
  }, [live, connection, url]);
  return null;
}
