// Demo page entry: loads the package's browser build (the development build, served by the server
// at /pkg/ and imported by URL: see www/build.mjs), mounts the package's devtools panel
// (`task-projection/devtools/dom`, from the same /pkg/) on the page's store and connection, then
// connects to the reference server.
import init, { ProjectionStore } from 'task-projection';
import { mountDevtools } from 'task-projection/devtools/dom';
import { App } from './app';
import { byId } from './dom';
import { paint } from './view';

/** Where the panel's "Open in inspector" goes: the inspector, attaching to this page (`#live`). */
const INSPECTOR = '/inspect/#live';

declare global {
  interface Window {
    /** For tests and the curious: the app, its store and its devtools panel (`app.devtools`). */
    demo?: App;
  }
}

function showError(text: string): void {
  const banner = byId('error-banner');
  banner.hidden = false;
  banner.textContent = text;
}

async function main(): Promise<void> {
  try {
    await init();
  } catch (e) {
    showError(`Could not load the engine (/pkg/): ${e instanceof Error ? e.message : String(e)}`);
    document.body.dataset['ready'] = 'error';
    return;
  }
  const store = new ProjectionStore();
  // `?record`: the package's recorder (/pkg/trace.js; not loaded otherwise), and the panel records
  // from its mount, before the store's first input (a `fresh` trace).
  const record = new URLSearchParams(location.search).has('record');
  if (record) {
    try {
      await import('task-projection/trace');
    } catch (e) {
      showError(`Could not load the recorder (/pkg/trace.js): ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const app = new App(store, paint);
  const connection = app.connect();
  app.devtools = mountDevtools(store, document.body, { connection, inspectorUrl: INSPECTOR, record });
  window.demo = app;
  app.start();
}

window.addEventListener('error', (ev) => {
  const banner = document.getElementById('error-banner');
  if (banner) {
    banner.hidden = false;
    banner.textContent = `Unexpected error: ${ev.message}`;
  }
});
window.addEventListener('unhandledrejection', (ev) => {
  const banner = document.getElementById('error-banner');
  if (banner) {
    banner.hidden = false;
    banner.textContent = `Unexpected error: ${ev.reason instanceof Error ? ev.reason.message : String(ev.reason)}`;
  }
});

void main();
