// CPU profile of the store's message-event loop in Node: `node bench/profile.mjs [n] [seconds]`
// runs the event pass of bench/workload.mjs under the V8 sampling profiler (node:inspector) and
// prints the functions with the most self time. wasm frames are named when the module keeps its
// name section (TP_MODULE=<a module re-exporting a build that keeps names>, e.g. wasm-bindgen's
// output of target/wasm32-unknown-unknown/release/*.wasm without wasm-opt); the JS glue always is.
import inspector from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { preloadedStore } from './store.bench.mjs';
import { eventPass, passIds, passLength, passRevisions, sessionHistory } from './workload.mjs';

const tp = await import(process.env.TP_MODULE ?? 'task-projection');

export async function profileEvents(n = 5000, seconds = 2, top = 15) {
  const history = sessionHistory(n);
  const k = passLength(n);
  const pass = eventPass(history, k);
  const sid = history.session.id;
  const store = preloadedStore(tp, history);
  // The pass's added rows, deleted after each replay (untimed; ids change per replay).
  const deletes = () => pass.added.map((id) => ({ message_id: id, session_id: sid }));
  let sequence = 2000;
  const run = (ms) => {
    const end = performance.now() + ms;
    let events = 0;
    while (performance.now() < end) {
      sequence = passRevisions(pass, sequence);
      passIds(pass);
      for (const e of pass.events) {
        store.applyMessageEvent(e.kind, e.payload);
        store.sessionPendingAction(sid);
        store.pendingClarification(sid);
      }
      events += pass.events.length;
      for (const d of deletes()) store.applyMessageEvent('deleted', d);
    }
    return events;
  };
  run(300);
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) =>
    session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  run(seconds * 1000);
  const { profile } = await post('Profiler.stop');
  session.disconnect();
  store.free();

  const self = new Map();
  const interval = new Map();
  for (let i = 0; i < profile.samples.length; i += 1) {
    interval.set(profile.samples[i], (interval.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  for (const node of profile.nodes) {
    const t = interval.get(node.id) ?? 0;
    const f = node.callFrame;
    const where = f.url ? `${f.url.split('/').pop()}${f.functionName ? '' : `:${f.lineNumber + 1}`}` : '';
    const name = `${f.functionName || '(anonymous)'} ${where}`.trim();
    self.set(name, (self.get(name) ?? 0) + t);
    total += t;
  }
  const rows = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, t]) => ({ name, share: t / total }));
  const categories = new Map();
  for (const row of rows) {
    const c = CATEGORIES.find(([, re]) => re.test(row.name))?.[0] ?? 'other';
    categories.set(c, (categories.get(c) ?? 0) + row.share);
  }
  return {
    n,
    seconds,
    rows: rows.slice(0, top),
    categories: [...categories.entries()].sort((a, b) => b[1] - a[1]).map(([name, share]) => ({ name, share })),
  };
}

/** Rough buckets of self time, by frame name (wasm names need a module with its name section; the
 * nightly build's names carry a crate hash: `task_projection[…]::`). */
const CATEGORIES = [
  ['JS string -> wasm (as_string: encode + copy)', /string_get|getDataViewMemory0|get buffer|passStringToWasm|encodeInto|Wire>::string/],
  ['wasm string -> JS (from_str: TextDecoder)', /getStringFromWasm|decodeUTF8|decode encoding|generic_0000/],
  ['property reads (Reflect.get, key cache)', /Reflect|handleError|LocalKey|Hash for usize|HashMap<K,V,S,A>::entry|make_hash/],
  ['allocator', /dlmalloc|malloc|::free|realloc|__rdl_|__rust_alloc|RawVec|dealloc|drop_in_place<alloc/],
  ['wire decoding', /task_projection(\[\w+\])?::wire|decode::/],
  ['store + rules (incl. hashing)', /task_projection(\[\w+\])?::store|task_projection(\[\w+\])?::rules|partition_point|hashbrown|make_hash|foldhash|memcmp|projectionstore_|Hash for str|hash_one|__ashlti3/],
  ['wasm binding (src/wasm)', /task_projection(\[\w+\])?::wasm::/],
  ['other wasm-bindgen boundary', /wasm-to-js|js-to-wasm|__externref|wasm_bindgen|js_sys|JsValue|__wbg|__wbindgen|task_projection\.js/],
  ['JS side of the boundary (read.js, store.js: reads, UTF-8, handles)', /read\.js|store\.js/],
  ['garbage collector', /garbage/],
  ['benchmark loop', /profile\.mjs/],
  ['wasm (unnamed: build without names)', /wasm-function/],
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const [n = '5000', seconds = '2'] = process.argv.slice(2);
  const { rows, categories } = await profileEvents(Number(n), Number(seconds), 20);
  const pct = (x) => `${(x * 100).toFixed(1).padStart(5)}%`;
  for (const c of categories) console.log(`${pct(c.share)}  ${c.name}`);
  console.log('top frames:');
  for (const r of rows) console.log(`${pct(r.share)}  ${r.name}`);
}
