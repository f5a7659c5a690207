// Demo page entry: loads the package's browser build (served by the server at /pkg/, mapped by the
// import map in index.html), then connects to the reference server.
import init, { ProjectionStore } from 'task-projection';
import { App } from './app';
import { byId } from './dom';
import { paint } from './view';

declare global {
  interface Window {
    /** For tests and the curious: the app and its store. */
    demo?: App;
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
  const app = new App(new ProjectionStore(), paint);
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
