// What keeps a test page's module from reporting (it fails to load, or throws while it
// evaluates) is kept here for tests/engines/, whose WebDriver reads no console. A classic script,
// loaded before the page's module: `pageError` is global to the page's other scripts.
window.__pageErrors = [];
const pageError = (text) => {
  if (!window.__pageErrors.length) window.__pageErrors.firstAt = performance.now();
  window.__pageErrors.push(text);
};
addEventListener('error', (e) => pageError(e instanceof ErrorEvent ? `${e.message} (${e.filename}:${e.lineno})` : `failed to load ${e.target?.src ?? e.target?.href ?? e.target}`), true);
addEventListener('unhandledrejection', (e) => pageError(`unhandled rejection: ${e.reason}`));
