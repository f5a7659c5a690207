// `task-projection/persist`: instant resume for web views (opt-in, plain JS, no wasm). `persist`
// saves `store.dehydrate()` as JSON into `storage` (default `sessionStorage`) when the page is
// hidden or left (`visibilitychange` to hidden, `pagehide`: the last moments a mobile browser or a
// WebView reliably gives a page); `restore` reads it back on the next load:
//
//   const snapshot = restore({ key: "tasks" });
//   const store = snapshot ? ProjectionStore.hydrate(snapshot, { restored: true }) : new ProjectionStore();
//   persist(store, { key: "tasks" });
//
// `store.restored()` is then true until the stream's first hello or a task snapshot confirms or
// replaces what was restored. Without a `window` (server rendering, Node) nothing runs.

/** The snapshot format and version this package reads (`ProjectionStore.hydrate`). */
const FORMAT = 'task-projection/snapshot';
const VERSION = 1;

function checkKey(key, fn) {
  if (typeof key !== 'string' || key === '') throw new TypeError(`${fn}: options.key: expected a non-empty string`);
}

/** `options.storage`, else the window's sessionStorage (reading it throws where storage is blocked), else null. */
function storageOf(options) {
  if (options.storage != null) return options.storage;
  try {
    return globalThis.window?.sessionStorage ?? null;
  } catch (_) {
    return null;
  }
}

function report(options, error) {
  if (typeof options.onError !== 'function') return;
  try {
    options.onError(error);
  } catch (_) {
    // an onError that throws must not break the page's unload
  }
}

/**
 * Saves `store.dehydrate()` under `options.key` in `options.storage` (default `sessionStorage`;
 * any object with getItem/setItem/removeItem) on `pagehide` and when the page becomes hidden.
 * A failed save (quota, a disposed store) goes to `options.onError`. Returns `{ save, stop }`:
 * `save()` saves now; `stop()` removes the listeners. Without a `window`, does nothing.
 */
export function persist(store, options) {
  const o = options ?? {};
  checkKey(o.key, 'persist');
  if (store === null || typeof store !== 'object' || typeof store.dehydrate !== 'function') {
    throw new TypeError('persist: expected a ProjectionStore (an object with dehydrate)');
  }
  const win = globalThis.window;
  const storage = storageOf(o);
  if (win == null || typeof win.addEventListener !== 'function' || storage === null) return Object.freeze({ save() {}, stop() {} });
  const doc = win.document;
  const save = () => {
    try {
      storage.setItem(o.key, JSON.stringify(store.dehydrate()));
    } catch (error) {
      report(o, error);
    }
  };
  const onHidden = () => {
    if (doc.visibilityState === 'hidden') save();
  };
  win.addEventListener('pagehide', save);
  doc?.addEventListener?.('visibilitychange', onHidden);
  return Object.freeze({
    save,
    stop() {
      win.removeEventListener('pagehide', save);
      doc?.removeEventListener?.('visibilitychange', onHidden);
    },
  });
}

/**
 * The snapshot `persist` saved under `options.key`, parsed, or `undefined` (none, no storage, no
 * window). Never throws: an entry that is not a snapshot this package reads (corrupt JSON, another
 * format or version) is removed and passed to `options.onError`.
 */
export function restore(options) {
  const o = options ?? {};
  checkKey(o.key, 'restore');
  const storage = storageOf(o);
  if (storage === null) return undefined;
  let text;
  try {
    text = storage.getItem(o.key);
  } catch (error) {
    report(o, error);
    return undefined;
  }
  if (text == null) return undefined;
  try {
    const snapshot = JSON.parse(text);
    if (snapshot === null || typeof snapshot !== 'object' || snapshot.format !== FORMAT || snapshot.version !== VERSION) {
      throw new Error(`restore: the entry "${o.key}" is not a ${FORMAT} version ${VERSION}`);
    }
    return snapshot;
  } catch (error) {
    try {
      storage.removeItem(o.key);
    } catch (_) {
      // nothing more to do
    }
    report(o, error);
    return undefined;
  }
}
