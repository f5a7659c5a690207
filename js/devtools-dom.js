// `task-projection/devtools/dom` (and, re-exported, `task-projection/devtools`): the devtools panel
// without any framework. `mountDevtools(store, element, options)` adds a floating toggle and a panel
// that lists the tasks and sessions the store holds with their answers, explains one in words
// (`explain`, `explainOwner`), shows the rejected inputs, the connection and the stream position,
// and records a trace (save it, or open it in the inspector).
//
// - It imports no store module and no wasm: it works on the store it is given (of any entry), through
//   the public queries and one development-only hook of js/store.js, `store[DEVTOOLS](read)`, which
//   hands `read` the ids the store holds (`__held`) and puts back the `lastReason()` that the panel's
//   queries overwrite. So the panel changes no answer, no `version()` and no `lastReason()`. On the
//   production build that hook throws `development_only`: the panel says it needs the development
//   build, and throws nothing.
// - Everything is in a shadow root on its own host element (`<task-projection-devtools>`), styles
//   included; the host's `all: initial` keeps the page's inherited styles out. No inline style
//   attribute or `<style>` element where the browser has constructed stylesheets: the styles go
//   through the CSSOM, so a page whose Content-Security-Policy allows no inline style
//   (`style-src 'self'`, as the reference server's) shows the panel styled.
// - The list is virtualized (fixed-height rows, only those in view are in the DOM, each answered when
//   it is drawn), so a store of 10,000 sessions opens and scrolls at once. It re-renders on the
//   store's change notifications, at most once per animation frame, and every second while open
//   for what changes without one (the stream offset, the log of rejected inputs).
// - It subscribes to the store only while it is open (or an inspector follows its recording);
//   `unmount()` lets go of every subscription, timer and channel.
import {
  ACTION_WHY, CONNECTION_WORDS, DETAIL_WORDS, MISSING_WORDS, OWNER_WHY, PERMISSION_WHY, QUESTION_WHY, REJECTED_WHY,
  REQUEST_STANDING, TASK_ACTION_WHY, TURN_STANDING, TURN_WHY, actionWords, inputWords, ownerWords, permissionWords,
  questionWords, revisionText, stateWords, summaryWords, turnWords, words,
} from './devtools-words.js';
import { CHANNEL, MAX_BYTES, Recording, download, recorderInstalled, traceFileName } from './devtools-recording.js';

/** js/store.js's devtools hook. */
const DEVTOOLS = Symbol.for('task-projection.devtools.1');
/** Each row's height in px (two lines): the list's virtualization counts on it. */
const ROW = 52;
/** Rows drawn above and below the view. */
const OVERSCAN = 8;
/** The list's height when the page has no layout (a DOM without one: tests). */
const NO_LAYOUT_HEIGHT = 480;
/** Re-render while open, for what changes without a notification. */
const TICK_MS = 1000;
/** At most one trace sent to an attached inspector per this many ms. */
const SEND_MS = 200;
/** Rejected inputs listed in an explanation (the store keeps its last 64). */
const MAX_REJECTED = 20;

/** A TaskProjectionError, shaped as the package's others (js/read.js: this module imports no store
 * module, so that it serves every entry's stores and brings no wasm). */
function typedError(code, field, message) {
  const error = new Error(`${field}: ${message}`);
  error.name = 'TaskProjectionError';
  error.code = code;
  error.field = field;
  return error;
}

const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const isObject = (v) => v !== null && typeof v === 'object';
const thousands = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const plural = (n, one, many) => `${thousands(n)} ${n === 1 ? one : many}`;
/** Code point order of ids (no locale: fast, and the same everywhere). */
const byId = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
/** Sets a node's text when it differs (a live region re-announces a text set again). */
const setText = (node, text) => {
  if (node.textContent !== text) node.textContent = text;
};

function checkStore(store) {
  if (!isObject(store) || typeof store.subscribe !== 'function' || typeof store.version !== 'function' || typeof store[DEVTOOLS] !== 'function') {
    throw typedError('invalid_type', 'store', `expected a ProjectionStore of task-projection, got ${typeName(store)}`);
  }
}

function checkElement(element) {
  if (element === undefined || element === null) {
    if (typeof document === 'object' && document !== null && document.body) return document.body;
    throw typedError('invalid_type', 'element', 'no document here: pass the element to add the panel to');
  }
  if (!isObject(element) || element.nodeType !== 1 || !isObject(element.ownerDocument)) {
    throw typedError('invalid_type', 'element', `expected a DOM element, got ${typeName(element)}`);
  }
  return element;
}

function checkOptions(options) {
  if (options === undefined || options === null) return { connection: null, inspectorUrl: null, open: false, record: false };
  if (!isObject(options)) throw typedError('invalid_type', 'options', `expected an object, got ${typeName(options)}`);
  const { connection = null, inspectorUrl = null, open = false, record = false } = options;
  if (connection !== null && (!isObject(connection) || typeof connection.state !== 'function' || typeof connection.subscribe !== 'function')) {
    throw typedError('invalid_type', 'options.connection', `expected what connect() returns (state() and subscribe()), got ${typeName(connection)}`);
  }
  if (inspectorUrl !== null && typeof inspectorUrl !== 'string' && !(typeof URL === 'function' && inspectorUrl instanceof URL)) {
    throw typedError('invalid_type', 'options.inspectorUrl', `expected a string or URL, got ${typeName(inspectorUrl)}`);
  }
  if (typeof open !== 'boolean') throw typedError('invalid_type', 'options.open', `expected a boolean, got ${typeName(open)}`);
  if (typeof record !== 'boolean') throw typedError('invalid_type', 'options.record', `expected a boolean, got ${typeName(record)}`);
  return { connection, inspectorUrl: inspectorUrl === null ? null : String(inspectorUrl), open, record };
}

function checkTarget(target) {
  if (target === undefined || target === null) return null;
  if (isObject(target) && typeof target.sessionId === 'string') return { kind: 'sessions', id: target.sessionId };
  if (isObject(target) && typeof target.taskId === 'string') return { kind: 'tasks', id: target.taskId };
  throw typedError('invalid_type', 'target', `expected { sessionId } or { taskId }, got ${typeName(target)}`);
}

/** `h(doc)` → an element builder: `h(tag, attributes, ...children)`; text is always text. */
function builder(doc) {
  return (tag, attrs, ...children) => {
    const node = doc.createElement(tag);
    if (attrs) {
      for (const key of Object.keys(attrs)) {
        const v = attrs[key];
        if (v === undefined || v === null || v === false) continue;
        if (key === 'class') node.className = v;
        // Through the CSSOM, not the `style` attribute (which a CSP without 'unsafe-inline' refuses).
        else if (key === 'style') node.style.cssText = v;
        else if (key.startsWith('on')) node.addEventListener(key.slice(2), v);
        else node.setAttribute(key, v === true ? '' : String(v));
      }
    }
    for (const c of children.flat(Infinity)) {
      if (c !== undefined && c !== null && c !== false) node.append(typeof c === 'object' ? c : String(c));
    }
    return node;
  };
}

const STYLE = `
:host { all: initial; }
* { box-sizing: border-box; }
.toggle, .panel { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; }
button { font: inherit; color: inherit; cursor: pointer; }
button:disabled { cursor: default; opacity: .5; }
:focus-visible { outline: 2px solid #0b63ce; outline-offset: 1px; }
[hidden] { display: none !important; }
.toggle { position: fixed; right: 16px; bottom: 16px; z-index: 2147483000; border: 1px solid #8c959f; border-radius: 999px;
  background: #1b1f24; color: #fff; padding: 8px 14px; box-shadow: 0 2px 8px rgba(0,0,0,.25); font-weight: 600; }
.toggle[aria-expanded="true"] { background: #0b63ce; border-color: #0b63ce; }
.panel { position: fixed; right: 16px; bottom: 64px; z-index: 2147483000; width: min(780px, calc(100vw - 32px));
  height: min(620px, calc(100vh - 96px)); display: flex; flex-direction: column; background: #fff; border: 1px solid #d0d7de;
  border-radius: 10px; box-shadow: 0 8px 28px rgba(0,0,0,.28); overflow: hidden; }
header { display: flex; align-items: center; gap: 8px; padding: 8px 12px; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
h2 { font-size: 14px; margin: 0; flex: 1; }
h3 { font-size: 14px; margin: 0 0 4px; overflow-wrap: anywhere; }
h3:focus { outline: none; }
h3:focus-visible { outline: 2px solid #0b63ce; }
.close, .back { border: 1px solid #d0d7de; border-radius: 6px; background: #fff; padding: 2px 10px; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; padding: 6px 12px; border-bottom: 1px solid #eaeef2; }
.bar button { border: 1px solid #d0d7de; border-radius: 6px; background: #fff; padding: 3px 10px; }
.notice { padding: 8px 12px; background: #fff8c5; border-bottom: 1px solid #d4a72c; font-weight: 600; }
.error { color: #a40e26; }
.details { display: block; font-size: 11px; color: #57606a; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.muted { color: #57606a; }
.body { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
.list-pane { display: flex; flex-direction: column; min-height: 0; border-right: 1px solid #d0d7de; }
.tabs { display: flex; gap: 4px; padding: 6px 8px 0; }
[role="tab"] { border: 1px solid #d0d7de; border-bottom: none; border-radius: 6px 6px 0 0; background: #f6f8fa; padding: 4px 10px; }
[role="tab"][aria-selected="true"] { background: #fff; font-weight: 600; box-shadow: inset 0 2px 0 #0b63ce; }
.filter { display: flex; gap: 8px; align-items: center; padding: 6px 8px; border-top: 1px solid #d0d7de; }
input { font: inherit; flex: 1; min-width: 0; padding: 4px 8px; border: 1px solid #8c959f; border-radius: 6px; }
.count { font-size: 12px; color: #57606a; white-space: nowrap; }
.scroller { flex: 1; min-height: 0; overflow-y: auto; position: relative; }
ul.rows { list-style: none; margin: 0; padding: 0; position: relative; }
ul.rows > li { position: absolute; left: 0; right: 0; height: ${ROW}px; }
.row { display: block; width: 100%; height: ${ROW}px; text-align: left; border: 0; border-bottom: 1px solid #eaeef2; background: #fff;
  padding: 6px 10px 6px 22px; position: relative; overflow: hidden; }
.row:hover { background: #f6f8fa; }
.row[aria-current="true"] { background: #ddf4ff; }
.row .l1, .row .l2 { display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.row .l2 { font-size: 12px; color: #57606a; }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-weight: 600; }
.dot { position: absolute; left: 8px; top: 12px; width: 8px; height: 8px; border-radius: 50%; background: #d0d7de; }
.dot[data-action="clarification"], .dot[data-action="permission"] { background: #bf3989; }
.dot[data-action="nothing"] { background: #1a7f37; }
.empty { padding: 12px; color: #57606a; }
.detail { overflow-y: auto; padding: 10px 12px; min-height: 0; }
.detail p { margin: 6px 0; }
.detail ul { margin: 4px 0 8px; padding-left: 18px; }
.detail li { margin: 2px 0; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 10px; margin: 6px 0 10px; }
dt { color: #57606a; }
dd { margin: 0; overflow-wrap: anywhere; }
.unknown { font-style: italic; color: #9a6700; }
.link { border: 0; background: none; padding: 0; color: #0b63ce; text-decoration: underline; }
.back { display: none; margin-bottom: 6px; }
@media (max-width: 640px) {
  .panel { left: 0; right: 0; bottom: 0; width: 100%; height: 88vh; height: 88dvh; border-radius: 12px 12px 0 0; border-width: 1px 0 0; }
  .toggle[aria-expanded="true"] { display: none; }
  .body { grid-template-columns: minmax(0, 1fr); }
  .list-pane { border-right: 0; }
  .panel.showing-detail .list-pane { display: none; }
  .panel:not(.showing-detail) .detail { display: none; }
  .back { display: inline-block; }
}
@media (prefers-color-scheme: dark) {
  .toggle, .panel { color: #e6edf3; }
  .panel, .row, input, .close, .back, .bar button { background: #0d1117; color: #e6edf3; border-color: #30363d; }
  header, [role="tab"] { background: #161b22; border-color: #30363d; }
  [role="tab"][aria-selected="true"] { background: #0d1117; }
  .row:hover { background: #161b22; }
  .row[aria-current="true"] { background: #0c2d6b; }
  .row .l2, .muted, .details, .count, dt, .empty { color: #8b949e; }
  .notice { background: #3b2300; border-color: #9e6a03; }
  .unknown { color: #d29922; }
  .link { color: #4493f8; }
}
`;

/**
 * The panel's styles in its shadow root: a constructed stylesheet (allowed by a Content-Security-
 * Policy without 'unsafe-inline' for styles), else a `<style>` element.
 */
function adoptStyles(root, view, h) {
  const Sheet = view.CSSStyleSheet;
  if (typeof Sheet === 'function' && Array.isArray(root.adoptedStyleSheets)) {
    try {
      const sheet = new Sheet();
      sheet.replaceSync(STYLE);
      root.adoptedStyleSheets = [sheet];
      return;
    } catch (_) {
      // no constructable stylesheets here: the element below
    }
  }
  root.append(h('style', {}, STYLE));
}

/**
 * Adds the devtools panel for `store` to `element` (default: `document.body`): a floating toggle
 * and, once opened, the panel. Options: `connection` (what `connect()` returned: its state is
 * shown), `inspectorUrl` (where "Open in inspector" goes; no button without it), `open` (start
 * open), `record` (start recording at once). Returns `{ open(target?), close(), toggle(), isOpen(), unmount(), host }`; `open({ sessionId })`
 * or `open({ taskId })` opens on that explanation. Bad arguments are TaskProjectionErrors.
 */
export function mountDevtools(store, element, options) {
  checkStore(store);
  const parent = checkElement(element);
  const o = checkOptions(options);
  const doc = parent.ownerDocument;
  const view = doc.defaultView ?? globalThis;
  const h = builder(doc);
  const later = (f, ms) => view.setTimeout(f, ms);
  const frame = typeof view.requestAnimationFrame === 'function' ? (f) => view.requestAnimationFrame(f) : (f) => view.setTimeout(f, 16);
  const cancelFrame = typeof view.cancelAnimationFrame === 'function' ? (id) => view.cancelAnimationFrame(id) : (id) => view.clearTimeout(id);

  // ---- state ----
  let mounted = true;
  let opened = false;
  /** `undefined` until asked (the first render): whether the store has the development hook's answers. */
  let development;
  let tab = 'sessions';
  let filter = '';
  let selected = null; // { kind: 'sessions' | 'tasks', id }
  let scheduled = 0;
  let scheduledList = 0;
  let ticker = 0;
  let unsubscribe = null;
  let unwatchConnection = null;
  // What the store holds, sorted, as of `held.version` (rebuilt when the version or the counts move).
  const held = { version: -1, sessionCount: -1, taskCount: -1, sessions: [], tasks: [], sessionsOfTask: new Map() };
  // The rows shown (the current tab, filtered) and the answers of the rows drawn, by id, at `rowsVersion`.
  let rows = [];
  let rowsKey = '';
  const drawn = new Map();
  let rowsVersion = -1;
  // Recording.
  let recording = null;
  let trace = null;
  let recordingError = null;
  let channel = null;
  let attached = false;
  let sendTimer = 0;
  const source = `devtools-${Math.random().toString(36).slice(2, 8)}`;

  // ---- DOM ----
  const host = doc.createElement('task-projection-devtools');
  // On the element and important: the page's styles reach no further than this element.
  host.style.cssText = 'all: initial !important; position: fixed !important; width: 0 !important; height: 0 !important; z-index: 2147483000 !important;';
  const root = host.attachShadow({ mode: 'open' });
  const panelId = 'tp-devtools-panel';
  const toggleButton = h('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', 'aria-controls': panelId, 'aria-label': 'Task projection devtools', title: 'Task projection devtools', onclick: () => toggle() }, 'Projection');
  const closeButton = h('button', { type: 'button', class: 'close', 'aria-label': 'Close the devtools', onclick: () => close() }, '×');
  const notice = h('p', { class: 'notice', role: 'status', hidden: true });
  const connectionLine = h('span', { 'data-testid': 'connection' });
  const streamLine = h('span', { 'data-testid': 'stream' });
  const versionLine = h('span', { class: 'details', 'data-testid': 'version' });
  const statusBar = h('div', { class: 'bar', 'aria-label': 'Connection' }, connectionLine, streamLine, versionLine);
  const recordButton = h('button', { type: 'button', 'data-testid': 'record', onclick: () => toggleRecording() }, 'Start recording');
  const saveButton = h('button', { type: 'button', 'data-testid': 'save-trace', disabled: true, onclick: () => saveTrace() }, 'Save trace');
  const inspectButton = h('button', { type: 'button', 'data-testid': 'open-inspector', disabled: true, hidden: o.inspectorUrl === null, onclick: () => openInspector() }, 'Open in inspector');
  const recordingLine = h('span', { 'data-testid': 'recording', role: 'status' });
  const recordingBar = h('div', { class: 'bar', 'aria-label': 'Recording' }, recordButton, saveButton, inspectButton, recordingLine);
  const tabs = {
    sessions: h('button', { type: 'button', role: 'tab', id: 'tp-tab-sessions', 'aria-controls': 'tp-list', 'aria-selected': 'true', tabindex: '0' }, 'Sessions'),
    tasks: h('button', { type: 'button', role: 'tab', id: 'tp-tab-tasks', 'aria-controls': 'tp-list', 'aria-selected': 'false', tabindex: '-1' }, 'Tasks'),
  };
  const tabList = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'What the store holds' }, tabs.sessions, tabs.tasks);
  const filterInput = h('input', { type: 'search', placeholder: 'Filter by id', 'aria-label': 'Filter by id', 'data-testid': 'filter', autocomplete: 'off', spellcheck: 'false' });
  const count = h('span', { class: 'count', 'aria-live': 'polite', 'data-testid': 'count' });
  const list = h('ul', { class: 'rows', 'aria-label': 'Sessions', 'data-testid': 'list' });
  const empty = h('p', { class: 'empty', hidden: true });
  const scroller = h('div', { class: 'scroller', id: 'tp-list', role: 'tabpanel', 'aria-labelledby': 'tp-tab-sessions' }, list, empty);
  const listPane = h('div', { class: 'list-pane' }, tabList, h('div', { class: 'filter' }, filterInput, count), scroller);
  const backButton = h('button', { type: 'button', class: 'back', onclick: () => unselect(true) }, '← Back to the list');
  const detailBody = h('div', { 'data-testid': 'detail' });
  const detail = h('section', { class: 'detail', 'aria-label': 'Explanation', 'data-testid': 'detail-pane' }, backButton, detailBody);
  const body = h('div', { class: 'body' }, listPane, detail);
  const panel = h('section', { class: 'panel', id: panelId, role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'tp-title', hidden: true },
    h('header', {}, h('h2', { id: 'tp-title' }, 'Task projection'), closeButton), notice, statusBar, recordingBar, body);
  adoptStyles(root, view, h);
  root.append(toggleButton, panel);
  parent.append(host);

  // ---- events ----
  for (const kind of ['sessions', 'tasks']) tabs[kind].addEventListener('click', () => selectTab(kind, false));
  tabList.addEventListener('keydown', (event) => {
    const other = tab === 'sessions' ? 'tasks' : 'sessions';
    const to = { ArrowLeft: other, ArrowRight: other, Home: 'sessions', End: 'tasks' }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    selectTab(to, true);
  });
  filterInput.addEventListener('input', () => {
    filter = filterInput.value.trim();
    scroller.scrollTop = 0;
    schedule();
  });
  scroller.addEventListener('scroll', () => scheduleList());
  list.addEventListener('click', (event) => {
    const button = event.target.closest?.('button.row');
    if (button) select(tab, button.dataset.id, event.detail === 0);
  });
  list.addEventListener('keydown', (event) => {
    const button = event.target.closest?.('button.row');
    if (!button) return;
    const at = Number(button.dataset.index);
    const page = Math.max(1, Math.floor(viewHeight() / ROW) - 1);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, PageDown: at + page, PageUp: at - page, Home: 0, End: rows.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    focusRow(to);
  });
  detailBody.addEventListener('click', (event) => {
    const link = event.target.closest?.('button.link');
    if (link) select(link.dataset.kind, link.dataset.id, event.detail === 0);
  });
  root.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !opened) return;
    event.preventDefault();
    if (selected !== null && detail.contains(event.target)) unselect(true);
    else close(true);
  });

  // ---- opening, closing, selecting ----
  function setOpen(next, focus) {
    if (!mounted || next === opened) return;
    opened = next;
    panel.hidden = !opened;
    toggleButton.setAttribute('aria-expanded', String(opened));
    if (opened) {
      ticker = view.setInterval(() => schedule(), TICK_MS);
      if (o.connection !== null && unwatchConnection === null) unwatchConnection = o.connection.subscribe(() => schedule());
      paint();
      if (focus) ((selected !== null && detailHeading()) || (body.hidden ? closeButton : tabs[tab])).focus();
    } else {
      view.clearInterval(ticker);
      ticker = 0;
      if (unwatchConnection !== null) unwatchConnection();
      unwatchConnection = null;
      if (focus) toggleButton.focus();
    }
    syncSubscription();
  }

  function toggle() {
    setOpen(!opened, true);
  }

  function close(focus = false) {
    setOpen(false, focus);
  }

  function selectTab(kind, focus) {
    if (tab !== kind) {
      tab = kind;
      for (const k of ['sessions', 'tasks']) {
        tabs[k].setAttribute('aria-selected', String(k === kind));
        tabs[k].setAttribute('tabindex', k === kind ? '0' : '-1');
      }
      scroller.setAttribute('aria-labelledby', `tp-tab-${kind}`);
      list.setAttribute('aria-label', kind === 'sessions' ? 'Sessions' : 'Tasks');
      scroller.scrollTop = 0;
      paint();
    }
    if (focus) tabs[kind].focus();
  }

  function select(kind, id, focus) {
    if (kind !== tab) selectTab(kind, false);
    selected = { kind, id };
    panel.classList.add('showing-detail');
    paint();
    if (focus) detailHeading()?.focus();
  }

  function unselect(focus) {
    const was = selected;
    selected = null;
    panel.classList.remove('showing-detail');
    paint();
    if (focus && was !== null) {
      const at = rows.findIndex((r) => r.id === was.id);
      if (at >= 0) focusRow(at);
      else tabs[tab].focus();
    }
  }

  const detailHeading = () => detailBody.querySelector('h3');

  // ---- rendering ----
  function schedule() {
    if (!mounted || !opened || scheduled !== 0) return;
    scheduled = frame(() => {
      scheduled = 0;
      paint();
    });
  }

  function scheduleList() {
    if (!mounted || !opened || scheduledList !== 0) return;
    scheduledList = frame(() => {
      scheduledList = 0;
      // A changed store redraws everything; a scroll draws only the rows that came into view.
      if (store.version() !== held.version) paint();
      else guarded(() => drawRows(true));
    });
  }

  /** Runs `f`, showing (not throwing) what it threw: the panel never breaks the app. */
  function guarded(f) {
    try {
      f();
    } catch (error) {
      showError(error);
    }
  }

  function paint() {
    if (!mounted || !opened) return;
    guarded(() => {
      drawStatus();
      if (development === undefined) development = probeDevelopment();
      if (!development) {
        notice.hidden = false;
        notice.textContent = 'The panel needs the development build of task-projection: import "task-projection/development", or let the bundler use the "development" export condition (next dev and vite do).';
        recordingBar.hidden = true;
        body.hidden = true;
        return;
      }
      notice.hidden = true;
      drawRecording();
      store[DEVTOOLS]((ids) => {
        takeHeld(ids);
        drawRows(false);
        drawDetail();
      });
    });
  }

  /** Whether the store answers the hook (the development build), or throws `development_only`. */
  function probeDevelopment() {
    try {
      store[DEVTOOLS](() => undefined);
      return true;
    } catch (error) {
      if (isObject(error) && error.code === 'development_only') return false;
      throw error;
    }
  }

  function showError(error) {
    notice.hidden = false;
    const disposed = isObject(error) && error.code === 'disposed';
    notice.replaceChildren(
      disposed ? 'The store was disposed: there is nothing more to show.' : 'The panel could not read the store.',
      h('span', { class: 'details' }, isObject(error) && typeof error.message === 'string' ? `${error.code ?? error.name}: ${error.message}` : String(error)),
    );
  }

  function drawStatus() {
    if (o.connection === null) {
      connectionLine.replaceChildren('Connection: ', h('span', { class: 'muted' }, 'not given to the panel'));
    } else {
      let state;
      try {
        state = o.connection.state();
      } catch (error) {
        state = `unreadable (${String(error)})`;
      }
      connectionLine.replaceChildren('Connection: ', h('strong', { 'data-state': state }, CONNECTION_WORDS[state] ?? 'unknown'));
    }
    const position = store.streamPosition();
    if (position === null) {
      streamLine.replaceChildren('Event stream: ', h('span', { class: 'unknown' }, 'position not known yet'));
    } else {
      streamLine.replaceChildren('Event stream: at ', h('strong', {}, thousands(position.offset)), h('span', { class: 'details' }, `stream ${JSON.stringify(position.stream)} · offset ${position.offset}`));
    }
    versionLine.textContent = `version ${store.version()}`;
  }

  /** What the store holds (`__held`), sorted, when it moved. */
  function takeHeld(ids) {
    const version = store.version();
    if (version === held.version && ids.sessions.length === held.sessionCount && ids.tasks.length === held.taskCount) return;
    held.version = version;
    held.sessionCount = ids.sessions.length;
    held.taskCount = ids.tasks.length;
    const tasksOf = ids.sessionTasks;
    const sessions = new Array(ids.sessions.length);
    const sessionsOfTask = new Map();
    for (let i = 0; i < sessions.length; i++) {
      const task = Array.isArray(tasksOf) && typeof tasksOf[i] === 'string' ? tasksOf[i] : null;
      sessions[i] = { id: ids.sessions[i], task };
      if (task !== null) sessionsOfTask.set(task, (sessionsOfTask.get(task) ?? 0) + 1);
    }
    // Sessions by task, then id: a task's sessions side by side.
    sessions.sort((a, b) => byId(a.task ?? '', b.task ?? '') || byId(a.id, b.id));
    held.sessions = sessions;
    held.tasks = ids.tasks.map((id) => ({ id, task: null })).sort((a, b) => byId(a.id, b.id));
    held.sessionsOfTask = sessionsOfTask;
  }

  function viewHeight() {
    return scroller.clientHeight > 0 ? scroller.clientHeight : NO_LAYOUT_HEIGHT;
  }

  /** Draws the rows in view (`scrolled`: only a scroll moved, the answers drawn still hold). */
  function drawRows(scrolled) {
    const all = tab === 'sessions' ? held.sessions : held.tasks;
    const key = `${tab}\n${filter}\n${held.version}\n${all.length}`;
    if (key !== rowsKey) {
      rowsKey = key;
      rows = filter === '' ? all : all.filter((r) => r.id.includes(filter) || (r.task !== null && r.task.includes(filter)));
    }
    if (!scrolled && rowsVersion !== held.version) {
      drawn.clear();
      rowsVersion = held.version;
    }
    setText(tabs.sessions, `Sessions (${thousands(held.sessions.length)})`);
    setText(tabs.tasks, `Tasks (${thousands(held.tasks.length)})`);
    const noun = tab === 'sessions' ? ['session', 'sessions'] : ['task', 'tasks'];
    setText(count, filter === '' ? plural(rows.length, ...noun) : `${thousands(rows.length)} of ${plural(all.length, ...noun)}`);
    empty.hidden = rows.length > 0;
    if (rows.length === 0) {
      setText(empty, all.length === 0 ? `The store holds no ${noun[0]} yet.` : `No ${noun[0]} id contains “${filter}”.`);
    }
    list.style.height = `${rows.length * ROW}px`;
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((top + viewHeight()) / ROW) + OVERSCAN);
    // Answers for the rows not drawn at this version: asked inside the hook (lastReason put back).
    const missing = [];
    for (let i = first; i < last; i++) if (!drawn.has(`${tab}\n${rows[i].id}`)) missing.push(rows[i]);
    if (missing.length > 0) {
      if (scrolled) store[DEVTOOLS](() => answerRows(missing));
      else answerRows(missing);
    }
    // Reuse the drawn row elements (focus stays on a row that is still in view).
    const keep = new Map();
    for (const li of Array.from(list.children)) {
      const i = Number(li.dataset.index);
      if (i >= first && i < last && rows[i] && li.dataset.key === `${tab}\n${rows[i].id}` && li.dataset.version === String(rowsVersion)) keep.set(i, li);
      else li.remove();
    }
    for (let i = first; i < last; i++) {
      const current = selected !== null && selected.kind === tab && selected.id === rows[i].id;
      let li = keep.get(i);
      if (li === undefined) {
        li = rowElement(rows[i], i);
        list.append(li);
      }
      li.firstChild.setAttribute('aria-current', String(current));
    }
  }

  function answerRows(missing) {
    for (const r of missing) drawn.set(`${tab}\n${r.id}`, tab === 'sessions' ? sessionAnswers(r.id) : taskAnswers(r.id));
  }

  function sessionAnswers(id) {
    return {
      action: store.sessionPendingAction(id),
      question: store.pendingClarification(id),
      turn: store.currentTurnId(id),
      permission: store.hasPendingPermission(id),
    };
  }

  function taskAnswers(id) {
    return { action: store.taskPendingAction(id), owner: store.pendingOwner(id), summary: store.taskStatusSummary(id) };
  }

  function rowElement(r, i) {
    const a = drawn.get(`${tab}\n${r.id}`);
    const dot = a.action === undefined ? 'unknown' : a.action === null ? 'nothing' : a.action;
    let l1;
    let l2;
    if (tab === 'sessions') {
      l1 = [h('span', { class: 'id' }, r.id), h('span', { class: 'muted' }, r.task === null ? ' · task not known yet' : ` · task ${r.task}`)];
      l2 = `Waits for: ${actionWords(a.action)} · Question: ${questionWords(a.question)} · Turn: ${turnWords(a.turn)} · Permission: ${permissionWords(a.permission)}`;
    } else {
      const n = held.sessionsOfTask.get(r.id) ?? 0;
      l1 = [h('span', { class: 'id' }, r.id), h('span', { class: 'muted' }, ` · ${plural(n, 'session', 'sessions')}`)];
      l2 = `Waits for: ${actionWords(a.action)} · Opens: ${ownerWords(a.owner)} · Summary: ${summaryWords(a.summary)}`;
    }
    const button = h('button', { type: 'button', class: 'row', 'data-id': r.id, 'data-index': i, 'data-action': dot, 'aria-current': 'false' },
      h('span', { class: 'dot', 'data-action': dot, 'aria-hidden': 'true' }), h('span', { class: 'l1' }, l1), h('span', { class: 'l2' }, l2));
    return h('li', { 'data-id': r.id, 'data-key': `${tab}\n${r.id}`, 'data-index': i, 'data-version': rowsVersion, 'aria-setsize': rows.length, 'aria-posinset': i + 1, style: `top: ${i * ROW}px` }, button);
  }

  /** Scrolls row `i` into view, draws it, and focuses it. */
  function focusRow(i) {
    if (rows.length === 0) return;
    const at = Math.max(0, Math.min(rows.length - 1, i));
    const height = viewHeight();
    if (at * ROW < scroller.scrollTop) scroller.scrollTop = at * ROW;
    else if ((at + 1) * ROW > scroller.scrollTop + height) scroller.scrollTop = (at + 1) * ROW - height;
    guarded(() => drawRows(true));
    list.querySelector(`li[data-index="${at}"] > button`)?.focus();
  }

  // ---- explanations ----
  function drawDetail() {
    if (selected === null) {
      detailBody.replaceChildren(h('p', { class: 'muted' }, 'Choose a session or a task (click, or Enter) to see why the store answers what it does.'));
      return;
    }
    const heading = detailHeading();
    const hadFocus = heading !== null && root.activeElement === heading;
    detailBody.replaceChildren(...(selected.kind === 'sessions' ? sessionDetail(selected.id) : taskDetail(selected.id)).filter((n) => n !== null));
    if (hadFocus) detailHeading()?.focus();
  }

  /** An answer in words, marked when it is not known yet, with its reason in a details line. */
  function answer(label, value, text, reason, extra = '') {
    return [
      h('dt', {}, label),
      h('dd', { 'data-answer': label, 'data-known': String(value !== undefined) }, value === undefined ? h('span', { class: 'unknown' }, text) : text,
        h('span', { class: 'details' }, `${reason}${extra}`)),
    ];
  }

  const details = (text) => h('span', { class: 'details' }, text);
  const link = (kind, id, text) => h('button', { type: 'button', class: 'link', 'data-kind': kind, 'data-id': id }, text);

  function missingLine(missing) {
    if (missing.length === 0) return null;
    return h('p', { 'data-testid': 'why-missing' }, 'Not known yet: the store waits for ', missing.map((m) => MISSING_WORDS[m] ?? 'an input').join(', then '), '.',
      details(missing.join(' · ')));
  }

  function rejectedLines(rejected) {
    const out = [h('p', { 'data-testid': 'why-rejected', 'data-count': String(rejected.length) },
      h('strong', {}, 'Late updates ignored: '), rejected.length ? thousands(rejected.length) : 'none', '.')];
    if (rejected.length) {
      out.push(h('ul', { 'data-testid': 'why-rejected-list' }, rejected.slice(0, MAX_REJECTED).map((r) =>
        h('li', { 'data-reason': r.reason, 'data-input': r.input },
          `${inputWords(r.input)} ${words(REJECTED_WHY, r.reason)}${r.detail ? ` (${DETAIL_WORDS[r.detail] ?? 'for another reason'})` : ''}.`,
          details(`${r.input} · ${r.reason}${r.detail ? ` · ${r.detail}` : ''} · revision ${revisionText(r.revision)} < held ${revisionText(r.held)}${r.message_id ? ` · message ${r.message_id}` : ''}`)))));
    }
    return out;
  }

  /** A query's answer (already asked) with the reason the store gave for it. */
  const withReason = (answer) => [answer, store.lastReason()];

  function sessionDetail(id) {
    const [action, actionReason] = withReason(store.sessionPendingAction(id));
    const [question, questionReason] = withReason(store.pendingClarification(id));
    const [turn, turnReason] = withReason(store.currentTurnId(id));
    const [permission, permissionReason] = withReason(store.hasPendingPermission(id));
    const e = store.explain(id);
    const out = [
      h('h3', { tabindex: '-1', 'data-kind': 'session', 'data-id': id }, 'Session ', h('span', { class: 'id' }, id)),
      h('p', { class: 'muted' }, e.task_id === null ? 'Its task is not known yet.' : ['Of task ', link('tasks', e.task_id, e.task_id), '.'],
        e.state !== null ? ` ${stateWords(e.state, action)}.` : '', details(`state ${e.state ?? 'none'}${e.listed ? ' · listed' : ' · not listed'}`)),
      h('dl', { 'data-testid': 'answers' },
        answer('Waits for', action, actionWords(action), actionReason),
        answer('Question', question, questionWords(question), questionReason, question ? ` · pending ${question.pending_id ?? 'none'} · messages ${question.message_ids.join(', ')}` : ''),
        answer('Current turn', turn, turnWords(turn), turnReason),
        answer('Permission', permission, permissionWords(permission), permissionReason)),
    ];
    if (e.removed) out.push(h('p', {}, 'Its task was deleted: its answers are known, and clean.'));
    else if (!e.known) out.push(h('p', {}, 'The store holds nothing about this session yet.'));
    out.push(missingLine(e.missing));
    const current = e.current_turn;
    out.push(h('p', { 'data-testid': 'why-current-turn', 'data-reason': current.reason },
      current.known ? [h('strong', {}, current.id ? `Turn ${current.id}` : 'No turn'), ' is current: '] : 'Which turn is current is not known yet: ',
      words(TURN_WHY, current.reason), '.', details(current.reason)));
    if (e.turns.length > 1 || e.turns.some((t) => t.standing !== 'current' && t.standing !== 'outranked')) {
      out.push(h('ul', { 'data-testid': 'why-turns' }, e.turns.map((t) =>
        h('li', { 'data-standing': t.standing, 'data-turn-id': t.id }, `Turn ${t.id}: ${TURN_STANDING[t.standing] ?? 'no words for where it stands'}`,
          details(`${t.standing} · ${t.open ? 'open' : 'completed'}`)))));
    }
    out.push(h('p', { 'data-testid': 'why-question', 'data-reason': e.clarification.reason },
      h('strong', {}, 'Question: '), words(QUESTION_WHY, e.clarification.reason), '.', details(`${e.clarification.reason}${e.clarification.pending_id ? ` · pending ${e.clarification.pending_id}` : ''}`)));
    if (e.requests.length) {
      out.push(h('ul', { 'data-testid': 'why-requests' }, e.requests.map((r) =>
        h('li', { 'data-standing': r.standing, 'data-message-id': r.id }, `Question ${r.id} (${r.turn_id ? `turn ${r.turn_id}` : 'no turn'}): ${REQUEST_STANDING[r.standing] ?? 'no words for where it stands'}`,
          details(`${r.standing}${r.pending_id ? ` · pending ${r.pending_id}` : ''}`)))));
    }
    const p = e.pending_action;
    out.push(h('p', { 'data-testid': 'why-action', 'data-reason': p.reason },
      h('strong', {}, 'Waits for: '), p.known ? actionWords(p.value) : h('span', { class: 'unknown' }, 'not known yet'), ': ', words(ACTION_WHY, p.reason), '.',
      details(`${p.reason} · projection ${e.projection.known ? `${e.projection.action ?? 'clean'} at ${revisionText(e.projection.revision)}` : 'none received'}`)));
    out.push(h('p', { 'data-testid': 'why-permission', 'data-reason': e.permission.reason },
      h('strong', {}, 'Permission: '), words(PERMISSION_WHY, e.permission.reason), '.', details(e.permission.reason)));
    out.push(...rejectedLines(e.rejected));
    return out;
  }

  function taskDetail(id) {
    const [action, actionReason] = withReason(store.taskPendingAction(id));
    const [owner, ownerReason] = withReason(store.pendingOwner(id));
    const [summary, summaryReason] = withReason(store.taskStatusSummary(id));
    const e = store.explainOwner(id);
    const out = [
      h('h3', { tabindex: '-1', 'data-kind': 'task', 'data-id': id }, 'Task ', h('span', { class: 'id' }, id)),
      h('dl', { 'data-testid': 'answers' },
        answer('Waits for', action, actionWords(action), actionReason),
        answer('Opens', owner, ownerWords(owner), ownerReason),
        answer('Summary', summary, summaryWords(summary), summaryReason, e.summary_revision !== null ? ` · revision ${e.summary_revision}` : '')),
    ];
    if (e.removed) out.push(h('p', {}, 'The task was deleted: its answers are known, and clean.'));
    else if (!e.known) out.push(h('p', {}, 'The store holds nothing about this task yet.'));
    out.push(missingLine(e.missing));
    const who = e.owner;
    out.push(h('p', { 'data-testid': 'why-owner', 'data-reason': who.reason },
      who.known ? [h('strong', {}, 'Clicking the task opens '), who.session_id ? link('sessions', who.session_id, who.session_id) : 'the task itself', ': '] : 'Which session a click opens is not known yet: ',
      words(OWNER_WHY, who.reason), '.', details(`${who.reason}${who.session_id ? ` · session ${who.session_id}` : ''}${e.preferred ? ` · preferred ${e.preferred.session_id}${e.preferred.eligible ? '' : ' (of another task)'}` : ''}`)));
    const p = e.pending_action;
    out.push(h('p', { 'data-testid': 'why-action', 'data-reason': p.reason },
      h('strong', {}, 'Waits for: '), p.known ? actionWords(p.value) : h('span', { class: 'unknown' }, 'not known yet'), ': ', words(TASK_ACTION_WHY, p.reason), '.', details(p.reason)));
    if (e.sessions === null) {
      out.push(h('p', { 'data-testid': 'why-sessions' }, 'Its sessions have not loaded yet.'));
    } else {
      out.push(h('p', { 'data-testid': 'why-sessions' }, h('strong', {}, 'Sessions: '), e.sessions.length ? `${thousands(e.sessions.length)}, newest first.` : 'none.'));
      if (e.sessions.length) {
        out.push(h('ul', { 'data-testid': 'why-session-list' }, e.sessions.map((s) =>
          h('li', { 'data-session-id': s.id }, link('sessions', s.id, s.id), s.is_primary ? ' (main)' : '', `: ${stateWords(s.state, s.pending_action)}`,
            s.pending_action ? `, waits for ${actionWords(s.pending_action)}` : '', details(`${s.state ?? 'no state'}${s.pending_action ? ` · ${s.pending_action}` : ''}`)))));
      }
    }
    out.push(...rejectedLines(e.rejected));
    return out;
  }

  // ---- recording ----
  function drawRecording() {
    const installed = recorderInstalled();
    recordingBar.hidden = false;
    recordButton.hidden = !installed;
    saveButton.hidden = !installed;
    inspectButton.hidden = !installed || o.inspectorUrl === null;
    if (!installed) {
      recordingLine.replaceChildren('Recording needs ', h('code', {}, "import 'task-projection/trace'"), ' in the app.');
      return;
    }
    const on = recording !== null && recording.on;
    recordButton.textContent = on ? 'Stop recording' : 'Start recording';
    recordButton.setAttribute('aria-pressed', String(on));
    saveButton.disabled = !on && trace === null;
    inspectButton.disabled = !on && trace === null;
    if (recordingError !== null) {
      recordingLine.replaceChildren(recordingError.words, details(recordingError.code));
    } else if (on) {
      setText(recordingLine, 'Recording every input the store takes.');
    } else if (trace !== null) {
      setText(recordingLine, `Stopped: the trace holds ${plural(recording.steps, 'step', 'steps')}.`);
    } else {
      setText(recordingLine, 'Not recording.');
    }
  }

  function toggleRecording() {
    recordingError = null;
    if (recording !== null && recording.on) {
      guarded(() => {
        trace = recording.stop();
        send();
      });
    } else {
      try {
        recording = new Recording(store, MAX_BYTES);
        trace = null;
        openChannel();
      } catch (error) {
        const code = isObject(error) && typeof error.code === 'string' ? error.code : 'error';
        const known = {
          invalid_value: 'The store is recording already (the app started it): stop that recording first.',
          recording_unavailable: "Recording needs import 'task-projection/trace' in the app.",
        };
        recordingError = { words: known[code] ?? 'The recording could not start.', code: `${code}: ${isObject(error) ? error.message : String(error)}` };
      }
    }
    syncSubscription();
    paint();
  }

  /** The trace so far (the recording goes on), or the stopped one. */
  function currentTrace() {
    if (recording !== null && recording.on) return recording.text();
    return trace;
  }

  function saveTrace() {
    guarded(() => {
      const text = currentTrace();
      if (text !== null) download(doc, text, traceFileName());
    });
  }

  function openInspector() {
    if (o.inspectorUrl === null) return;
    view.open(o.inspectorUrl, '_blank');
  }

  function openChannel() {
    const Channel = view.BroadcastChannel ?? globalThis.BroadcastChannel;
    if (channel !== null || typeof Channel !== 'function') return;
    channel = new Channel(CHANNEL);
    channel.onmessage = (event) => {
      if (!isObject(event.data) || event.data.type !== 'attach') return;
      attached = true;
      syncSubscription();
      send();
    };
  }

  /** The trace to an attached inspector (`{ type: "trace", source, text }`, www/src/channel.ts). */
  function send() {
    if (sendTimer !== 0) view.clearTimeout(sendTimer);
    sendTimer = 0;
    if (channel === null || !attached || !mounted) return;
    guarded(() => {
      const text = currentTrace();
      if (text !== null) channel.postMessage({ type: 'trace', source, text });
    });
  }

  // ---- the store's notifications ----
  function syncSubscription() {
    const need = mounted && (opened || (attached && recording !== null && recording.on));
    if (need && unsubscribe === null) {
      unsubscribe = store.subscribe(() => {
        schedule();
        if (attached && recording !== null && recording.on && sendTimer === 0) sendTimer = later(send, SEND_MS);
      });
    } else if (!need && unsubscribe !== null) {
      unsubscribe();
      unsubscribe = null;
    }
  }

  function unmount() {
    if (!mounted) return;
    close();
    mounted = false;
    if (scheduled !== 0) cancelFrame(scheduled);
    if (scheduledList !== 0) cancelFrame(scheduledList);
    scheduled = scheduledList = 0;
    if (sendTimer !== 0) view.clearTimeout(sendTimer);
    sendTimer = 0;
    syncSubscription();
    if (channel !== null) channel.close();
    channel = null;
    // A recording the panel started ends with it (one the app started is the app's).
    if (recording !== null && recording.on) {
      try {
        recording.stop();
      } catch (_) {
        // the store was disposed: nothing recorded any more
      }
    }
    recording = null;
    host.remove();
  }

  // `record`: the recording starts now (before the store's first input, the trace is `fresh`).
  if (o.record) toggleRecording();
  if (o.open) setOpen(true, false);

  return Object.freeze({
    /** Opens the panel (on the explanation of `{ sessionId }` or `{ taskId }` when given). */
    open(target) {
      const t = checkTarget(target);
      if (!mounted) return;
      if (t !== null) {
        selected = t;
        panel.classList.add('showing-detail');
        if (tab !== t.kind) selectTab(t.kind, false);
      }
      if (opened) paint();
      setOpen(true, true);
      if (t !== null) detailHeading()?.focus();
    },
    /** Closes the panel (the toggle stays). */
    close() {
      close(false);
    },
    /** Opens or closes the panel. */
    toggle() {
      setOpen(!opened, false);
    },
    /** Whether the panel is open. */
    isOpen() {
      return opened;
    },
    /** Removes the panel and lets go of its subscriptions, timers and channel. */
    unmount,
    /** The panel's host element (its shadow root holds the panel). */
    host,
  });
}
