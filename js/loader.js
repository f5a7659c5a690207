// The core of `task-projection/loader` (shipped as loader-core.js; scripts/build.mjs generates
// the entries that call it with the backends of each export condition). Written for old engines
// too (no optional chaining, no ??, no AggregateError): it is what runs where the wasm cannot.
//
//   const tp = await loadTaskProjection();   // tp.backend: "wasm" | "mvp" | "js"
//   const store = new tp.ProjectionStore();

/**
 * Tries each `[backend, load]` in order and resolves to the first that loads: a frozen object
 * with the entry's exports plus `backend` (its name) and `failures` (`[{ backend, error }]` of
 * the ones tried before it). Any failure falls through to the next: no `WebAssembly` global, a
 * CompileError from a wasm feature the engine lacks, a blocked fetch, a CSP without
 * 'wasm-unsafe-eval', ... Rejects with an Error (`failures` attached) when none loads.
 *
 * Options: `backends` (names allowed, in the built-in order; default all), `onFallback(backend,
 * error)` (called for each failed backend), `wasm` / `mvpWasm` (passed to that entry's init():
 * a URL, Response, bytes or module, for apps that serve the .wasm files themselves).
 */
export function loadFirst(candidates, options) {
  const opts = options || {};
  const failures = [];
  let i = 0;
  function next() {
    while (i < candidates.length && opts.backends && opts.backends.indexOf(candidates[i][0]) < 0) i++;
    if (i >= candidates.length) {
      const names = failures.map((f) => `${f.backend}: ${f.error && f.error.message ? f.error.message : String(f.error)}`);
      const error = new Error(`task-projection: no backend could be loaded (${names.join('; ') || 'none allowed'})`);
      error.name = 'TaskProjectionLoadError';
      error.failures = failures;
      return Promise.reject(error);
    }
    const backend = candidates[i][0];
    const load = candidates[i][1];
    i++;
    let attempt;
    try {
      attempt = Promise.resolve(load(opts));
    } catch (error) {
      attempt = Promise.reject(error);
    }
    return attempt.then(
      (ns) => {
        const api = {};
        for (const key of Object.keys(ns)) api[key] = ns[key];
        api.backend = backend;
        api.failures = failures.slice();
        return Object.freeze(api);
      },
      (error) => {
        failures.push({ backend, error });
        if (typeof opts.onFallback === 'function') opts.onFallback(backend, error);
        return next();
      },
    );
  }
  return next();
}
