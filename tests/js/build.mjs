// Which build of the store `task-projection` resolves to in this process: the production build
// (pkg/) by default, the development build (pkg/development/) under `node --conditions=development`
// (scripts/test.sh runs the suite so, then the files that prove both builds alike without it).
export const ENTRY = import.meta.resolve('task-projection');
/** The directory of the resolved build: its store.js and read.js are the ones its store uses. */
export const BUILD_DIR = new URL('./', ENTRY);
export const DEVELOPMENT = BUILD_DIR.pathname.endsWith('/development/');
export const BUILD = DEVELOPMENT ? 'development' : 'production';

// The test hooks of every copy of store.js (each entry's stores are its own copy's).
const HOOKS = await Promise.all(
  ['', 'development/', 'mvp/', 'fallback/'].map(async (dir) => (await import(new URL(`../../pkg/${dir}store.js`, import.meta.url))).__testing),
);

/** Whether `store`'s build has the development features (`explain`, `digest`, ...). */
export function hasDevelopmentFeatures(store) {
  try {
    store.digest();
    return true;
  } catch (error) {
    if (error?.code === 'development_only') return false;
    throw error;
  }
}

const ids = new WeakMap();
let nextId = 0;
const identity = (value) => {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return typeof value === 'bigint' ? `${value}n` : String(value);
  if (!ids.has(value)) ids.set(value, `#${++nextId}`);
  return ids.get(value);
};

/**
 * The state a store holds, for "a rejected call changed nothing": its digest in a development
 * build; in a production one the snapshot's text as the wasm writes it with the identity of each
 * held summary (the caller's objects, which `dehydrate()` would copy, and cannot when cyclic).
 * Both builds' states say the same thing of two stores: equal or not.
 */
export function stateOf(store, { byValue = false } = {}) {
  if (hasDevelopmentFeatures(store)) return store.digest();
  for (const hooks of HOOKS) {
    const state = hooks.state(store);
    // `byValue`: the summaries' JSON instead of their identity (a hydrated store holds copies).
    // The digest leaves out where the store stands in the event stream (the epoch and the stream
    // position: what a `server.hello` moves); so does this.
    if (state !== undefined) {
      const { epoch, stream, offset, ...held } = JSON.parse(state.text);
      return `${JSON.stringify(held)} ${state.summaries.map(byValue ? (v) => JSON.stringify(v) : identity).join(',')}`;
    }
  }
  throw new Error('stateOf: a store of no known copy of store.js');
}
