// task-projection/persist (js/persist.js) in Node with a fake window (an EventTarget with a
// document) and a fake storage: the store's dehydrate() saved on pagehide and when the page
// becomes hidden, and no more after stop(); restore() giving a snapshot that hydrates into a store
// whose every answer equals the source's, marked restored until the stream's first hello; a
// corrupt or foreign entry removed and reported, never thrown; a failed save reported; nothing
// at all without a window.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { afterEach, describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { persist, restore } from 'task-projection/persist';
import { REST_ASKED, storeOf } from './readme-backend.mjs';

/** A Storage over a Map; `fail` makes the named method throw. */
function fakeStorage(fail = {}) {
  const items = new Map();
  const calls = [];
  const guard = (name) => {
    calls.push(name);
    if (fail[name]) throw fail[name];
  };
  return {
    items, calls,
    getItem: (k) => (guard('getItem'), items.has(k) ? items.get(k) : null),
    setItem: (k, v) => (guard('setItem'), items.set(k, String(v))),
    removeItem: (k) => (guard('removeItem'), items.delete(k)),
  };
}

/** A window as persist() sees one: pagehide on it, visibilitychange on its document, sessionStorage. */
function fakeWindow(sessionStorage = fakeStorage()) {
  const document = Object.assign(new EventTarget(), { visibilityState: 'visible' });
  const window = Object.assign(new EventTarget(), { document, sessionStorage });
  return {
    window, sessionStorage,
    pagehide: () => window.dispatchEvent(new Event('pagehide')),
    visibility: (state) => {
      document.visibilityState = state;
      document.dispatchEvent(new Event('visibilitychange'));
    },
  };
}

afterEach(() => {
  delete globalThis.window;
});

/** A store holding REST_ASKED: task-1 waits for a two-question bundle in sess-1. */
const askedStore = () => storeOf(ProjectionStore, REST_ASKED);

const SESSION_QUERIES = ['sessionPendingAction', 'currentTurnId', 'pendingClarification', 'hiddenMessageIds', 'hasPendingPermission'];
const TASK_QUERIES = ['taskPendingAction', 'taskStatusSummary', 'pendingOwner'];
/** Every answer of `store` about task-1, sess-1 and ids it never heard of. */
function answers(store) {
  const out = {};
  for (const id of ['sess-1', 'sess-404']) for (const q of SESSION_QUERIES) out[`${q}(${id})`] = store[q](id);
  for (const id of ['task-1', 'task-404']) for (const q of TASK_QUERIES) out[`${q}(${id})`] = store[q](id);
  out['pendingOwner(task-1, sess-1)'] = store.pendingOwner('task-1', 'sess-1');
  return out;
}

describe('persist (js/persist.js)', () => {
  test('saves dehydrate() on pagehide and when the page becomes hidden; stop() ends it', () => {
    const page = fakeWindow();
    globalThis.window = page.window;
    const store = askedStore();
    const saved = persist(store, { key: 'tasks' });
    assert.equal(page.sessionStorage.items.size, 0, 'nothing saved before the page is left');
    page.pagehide();
    assert.deepEqual(JSON.parse(page.sessionStorage.items.get('tasks')), JSON.parse(JSON.stringify(store.dehydrate())));
    page.sessionStorage.items.clear();
    page.visibility('visible');
    assert.equal(page.sessionStorage.items.size, 0, 'becoming visible saves nothing');
    page.visibility('hidden');
    assert.ok(page.sessionStorage.items.has('tasks'), 'saved when hidden');
    page.sessionStorage.items.clear();
    saved.stop();
    page.pagehide();
    page.visibility('hidden');
    assert.equal(page.sessionStorage.items.size, 0, 'no save after stop()');
    saved.save();
    assert.ok(page.sessionStorage.items.has('tasks'), 'save() saves now');
    store.free();
  });

  test('restore(): the saved snapshot hydrates into a store that answers as the source, restored until the first hello', async () => {
    const page = fakeWindow();
    globalThis.window = page.window;
    const source = askedStore();
    persist(source, { key: 'tasks' });
    page.pagehide();
    // The next load.
    const snapshot = restore({ key: 'tasks' });
    assert.equal(snapshot?.format, 'task-projection/snapshot');
    assert.deepEqual(snapshot, JSON.parse(JSON.stringify(source.dehydrate())));
    const store = snapshot ? ProjectionStore.hydrate(snapshot, { restored: true }) : new ProjectionStore();
    assert.deepEqual(answers(store), answers(source));
    assert.equal(answers(store)['pendingClarification(sess-1)']?.pending_id, 'p-1');
    assert.equal(store.restored(), true, 'restored until the stream confirms it');
    // A change like any other: a "restored" hint (useStoreAnswer((s) => s.restored())) re-renders.
    const changes = [];
    store.subscribe((c) => changes.push(c));
    const version = store.version();
    store.applyFrame({ type: 'server.hello', payload: { epoch: '1733043600', stream: 's-1', offset: 40, resumed: true } });
    assert.equal(store.restored(), false, 'the first hello ends "restored"');
    assert.ok(store.version() > version, 'version() moves when restored() changes');
    await tick();
    assert.equal(changes.length, 1, 'subscribers hear of it');
    assert.ok(page.sessionStorage.items.has('tasks'), 'restore() leaves the entry (pagehide saves over it)');
    source.free();
    store.free();
  });

  test('restore(): no entry, or no storage, is undefined', () => {
    assert.equal(restore({ key: 'tasks', storage: fakeStorage() }), undefined);
    assert.equal(restore({ key: 'tasks' }), undefined, 'no window: no sessionStorage');
    // A window whose sessionStorage throws on access (storage blocked in a sandboxed frame).
    globalThis.window = Object.defineProperty(new EventTarget(), 'sessionStorage', { get: () => { throw new Error('SecurityError'); } });
    assert.equal(restore({ key: 'tasks' }), undefined);
  });

  test('restore(): a corrupt or foreign entry is removed and reported, never thrown', () => {
    const storage = fakeStorage();
    const cases = [
      '{"format":"task-projection/snap',
      'null',
      '[1,2]',
      JSON.stringify({ format: 'other', version: 1 }),
      JSON.stringify({ format: 'task-projection/snapshot', version: 999 }),
    ];
    for (const text of cases) {
      storage.items.set('tasks', text);
      const errors = [];
      assert.equal(restore({ key: 'tasks', storage, onError: (e) => errors.push(e) }), undefined, text);
      assert.ok(!storage.items.has('tasks'), `removed: ${text}`);
      assert.equal(errors.length, 1, text);
      assert.ok(errors[0] instanceof Error);
    }
    // Without onError too, and with an onError that throws.
    storage.items.set('tasks', '{');
    assert.equal(restore({ key: 'tasks', storage }), undefined);
    storage.items.set('tasks', '{');
    assert.equal(restore({ key: 'tasks', storage, onError: () => { throw new Error('boom'); } }), undefined);
    assert.ok(!storage.items.has('tasks'));
    // A storage that throws on read.
    const broken = fakeStorage({ getItem: new Error('unavailable') });
    const errors = [];
    assert.equal(restore({ key: 'tasks', storage: broken, onError: (e) => errors.push(e.message) }), undefined);
    assert.deepEqual(errors, ['unavailable']);
  });

  test('a save that fails (a full storage, a disposed store) is reported, not thrown from the event', () => {
    const full = fakeStorage({ setItem: new Error('QuotaExceededError') });
    const page = fakeWindow(full);
    globalThis.window = page.window;
    const errors = [];
    const store = askedStore();
    persist(store, { key: 'tasks', onError: (e) => errors.push(e.message) });
    page.pagehide();
    assert.deepEqual(errors, ['QuotaExceededError']);

    const other = fakeWindow();
    globalThis.window = other.window;
    const disposed = [];
    persist(store, { key: 'tasks', onError: (e) => disposed.push(e.code) });
    store.free();
    other.pagehide();
    assert.deepEqual(disposed, ['disposed']);
    assert.equal(other.sessionStorage.items.size, 0);
  });

  test('without a window nothing runs (server rendering, Node)', () => {
    let dehydrated = 0;
    const store = { dehydrate: () => (dehydrated += 1, {}) };
    const storage = fakeStorage();
    const handle = persist(store, { key: 'tasks', storage });
    handle.save();
    handle.stop();
    assert.equal(dehydrated, 0);
    assert.deepEqual(storage.calls, []);
  });

  test('bad arguments are TypeErrors', () => {
    assert.throws(() => persist({ dehydrate: () => ({}) }, {}), /persist: options\.key/);
    assert.throws(() => persist({}, { key: 'k' }), /persist: expected a ProjectionStore/);
    assert.throws(() => restore({ key: '' }), /restore: options\.key/);
    assert.throws(() => restore(), /restore: options\.key/);
  });
});
