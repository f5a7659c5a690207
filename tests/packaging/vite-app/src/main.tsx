// A Vite app with no configuration at all (no wasm plugin): the package's `default` entry, whose
// init() fetches the .wasm that Vite emits from `new URL(..., import.meta.url)`.
// ?mode=loader uses loadTaskProjection() instead (task-projection/loader); ?mode=devtools shows the
// devtools panel (mountDevtools from task-projection/devtools/dom).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { DevtoolsDemo } from './_shared/DevtoolsDemo';
import { ProjectionDemo } from './_shared/ProjectionDemo';

const param = new URLSearchParams(location.search).get('mode');
const mode = param === 'loader' ? 'loader' : 'static';
const root = document.getElementById('root');
if (!root) throw new Error('no #root');
createRoot(root).render(
  <StrictMode>
    {param === 'devtools' ? <DevtoolsDemo variant="dom" /> : <ProjectionDemo title={`Vite app (${mode})`} mode={mode} />}
  </StrictMode>,
);
