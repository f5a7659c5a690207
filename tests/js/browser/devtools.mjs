// The devtools panel's page (tests/js/devtools.browser.test.mjs): the package's development build
// and its panel, served from /pkg/ as an app would get them, on the store of devtools-fixture.mjs.
import init, { ProjectionStore } from '/pkg/development/index.js';
import { mountDevtools } from '/pkg/devtools-dom.js';
import { manySessions, scenario } from '/tests/js/devtools-fixture.mjs';

const params = new URLSearchParams(location.search);
if (params.has('hostile')) document.getElementById('hostile').media = 'all';
if (params.has('trace')) await import('/pkg/trace.js');
await init();
const store = scenario(new ProjectionStore());
const sessions = Number(params.get('sessions') ?? 0);
if (sessions > 0) manySessions(store, sessions);
store.applyStreamPosition({ stream: 'st-1', offset: 418 });
const connection = { state: () => 'open', subscribe: () => () => {} };
const panel = mountDevtools(store, document.body, { connection, inspectorUrl: params.has('trace') ? '/inspect/#live' : undefined });

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
const shadow = panel.host.shadowRoot;

window.devtools = {
  store,
  panel,
  /** Opens the panel: the ms of the call (it draws synchronously) and until the next frame. */
  async open() {
    const t0 = performance.now();
    panel.open();
    const call = performance.now() - t0;
    await nextFrame();
    return { call, frame: performance.now() - t0, rows: shadow.querySelectorAll('button.row').length };
  },
  /** Scrolls the list to row `index`: the ms until that row is drawn (a frame later). */
  async scrollTo(index) {
    const scroller = shadow.querySelector('.scroller');
    const t0 = performance.now();
    scroller.scrollTop = index * 52;
    await nextFrame();
    const drawn = shadow.querySelector(`li[data-index="${index}"]`) !== null;
    return { ms: performance.now() - t0, drawn };
  },
  /** Types `text` into the filter: the ms until the list shows the result. */
  async filter(text) {
    const input = shadow.querySelector('[data-testid="filter"]');
    const t0 = performance.now();
    input.value = text;
    input.dispatchEvent(new Event('input'));
    await nextFrame();
    return { ms: performance.now() - t0, count: shadow.querySelector('[data-testid="count"]').textContent };
  },
};
window.ready = true;
