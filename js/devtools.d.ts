// Declarations of `task-projection/devtools` (js/devtools.js): the devtools panel as a React
// component, and `mountDevtools` (js/devtools-dom.js, also `task-projection/devtools/dom` for apps
// without React).
import type { ProjectionStore } from './task_projection.js';
import type { DevtoolsConnection } from './devtools-dom.js';

export { mountDevtools } from './devtools-dom.js';
export type { DevtoolsConnection, DevtoolsHandle, DevtoolsOptions, DevtoolsTarget } from './devtools-dom.js';

export interface ProjectionDevtoolsProps {
  /** The store to show; default: the live store of the nearest `ProjectionStoreProvider`
   * (nothing is shown until it is open). */
  store?: ProjectionStore;
  /** What `connect()` returned: its state is shown. */
  connection?: DevtoolsConnection | null;
  /** Where "Open in inspector" opens a window (no button without it), e.g. `"/inspect/#live"`. */
  inspectorUrl?: string | URL | null;
  /** Start open. Default `false`. */
  defaultOpen?: boolean;
}

/**
 * The devtools panel (`mountDevtools`) for a React app: renders nothing in place, and mounts the
 * panel on `document.body` once its store is known (in an effect: never on the server). Render it
 * in development only; the production build of the store shows one line saying so.
 * Throws a TaskProjectionError `invalid_type` (`field` `"store"`) without a `store` prop outside
 * any `ProjectionStoreProvider`.
 * @example
 * <ProjectionStoreProvider open={openStore}>
 *   <App />
 *   {process.env.NODE_ENV === "development" && <ProjectionDevtools inspectorUrl="/inspect/#live" />}
 * </ProjectionStoreProvider>
 */
export function ProjectionDevtools(props: ProjectionDevtoolsProps): null;
