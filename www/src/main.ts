// Demo page entry: loads the package's browser build (served by the server at /pkg/, mapped by the
// import map in index.html), then connects to the reference server.
import init, { ProjectionStore } from 'task-projection';
import { App } from './app';
import { byId } from './dom';
import { paint } from './view';

/** dist/record.js (www/src/record.ts): its own bundle, loaded only with `?record`. */
const RECORD = './record.js';

declare global {
  interface Window {
    /** For tests and the curious: the app and its store. */
    demo?: App;
    /** With `?record`: the recording of the store (`text()`: the trace so far). */
    recording?: import('./record').Recording;
  }
}

async function main(): Promise<void> {
  try {
    await init();
  } catch (e) {
    const banner = byId('error-banner');
    banner.hidden = false;
    banner.textContent = `Could not load the engine (/pkg/): ${e instanceof Error ? e.message : String(e)}`;
    document.body.dataset['ready'] = 'error';
    return;
  }
  const store = new ProjectionStore();
  // `?record`: the recorder starts before the store's first input (a `fresh` trace).
  if (new URLSearchParams(location.search).has('record')) {
    try {
      const { record } = (await import(RECORD)) as typeof import('./record');
      window.recording = record(store);
    } catch (e) {
      const banner = byId('error-banner');
      banner.hidden = false;
      banner.textContent = `Could not start the recording (/pkg/trace.js): ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  const app = new App(store, paint);
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
