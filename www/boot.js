// The page's only classic script, loaded before app.js: when app.js or a module it imports (the
// package under /pkg/) fails to load, the module script's element fires `error`, which does not
// bubble: caught here in the capture phase, it shows the error banner. (An inline onerror
// attribute would do the same, but the server's Content-Security-Policy allows no inline script.)
window.addEventListener('error', (event) => {
  const script = event.target;
  if (!(script instanceof HTMLScriptElement) || script.type !== 'module') return;
  const banner = document.getElementById('error-banner');
  if (banner) {
    banner.hidden = false;
    banner.textContent = 'Could not load the page script or the engine (/pkg/development/index.js).';
  }
  document.body.dataset.ready = 'error';
}, true);
