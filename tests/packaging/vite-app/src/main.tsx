// A Vite app with no configuration at all (no wasm plugin): the package's `default` entry, whose
// init() fetches the .wasm that Vite emits from `new URL(..., import.meta.url)`.
// ?mode=loader uses loadTaskProjection() instead (task-projection/loader).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ProjectionDemo } from './_shared/ProjectionDemo';

const mode = new URLSearchParams(location.search).get('mode') === 'loader' ? 'loader' : 'static';
const root = document.getElementById('root');
if (!root) throw new Error('no #root');
createRoot(root).render(
  <StrictMode>
    <ProjectionDemo title={`Vite app (${mode})`} mode={mode} />
  </StrictMode>,
);
