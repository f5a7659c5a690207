// `task-projection/connect`: a store fed from the reference server's WebSocket (docs/server-api.md).
// Opens the socket, hands every frame to `store.applyFrame`, calls `refetch` when the outcome asks
// for it (every connection's `server.hello`: what was published while there was none is lost;
// `session.created`: the task's session list), and reconnects after a close with exponential
// backoff and jitter, until `close()`. Plain JS, no wasm of its own (its errors are read.js's):
// any object with `applyFrame` works (the store of any entry). It decides nothing about the data:
// the frame's outcome (the store's rules) says what to refetch.

import { taskProjectionError } from './read.js';

/** A TaskProjectionError `invalid_type` for argument `field`. */
const misuse = (field, message) => taskProjectionError('invalid_type', field, `${field}: ${message}`);

const report = (error) => {
  if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
  else setTimeout(() => { throw error; });
};

/**
 * Connects `store` to `url`. Options: `refetch({ what: "all" | "sessions", taskId?, reason })`
 * (required; may return a promise), `onFrame(outcome, data)` (after each frame the store took:
 * e.g. to keep the app's own copy of message content), `onStatus(status, detail)` (`"connecting"`, `"open"`,
 * `"waiting"` with the delay in ms, `"closed"`), `onError(error)` (a frame the store rejected, a
 * refetch that failed; default `reportError`), `minDelayMs` (250) and `maxDelayMs` (10,000) for the
 * backoff, and for tests `WebSocket`, `setTimeout`, `clearTimeout`, `random`. Returns `{ close }`.
 */
export function connect(url, store, options) {
  if (typeof url !== 'string' && !(url instanceof URL)) throw misuse('url', 'expected a string or URL');
  if (store === null || typeof store !== 'object' || typeof store.applyFrame !== 'function') {
    throw misuse('store', 'expected a ProjectionStore (an object with applyFrame)');
  }
  const o = options ?? {};
  if (typeof o.refetch !== 'function') throw misuse('options.refetch', 'expected a function');
  const Socket = o.WebSocket ?? globalThis.WebSocket;
  if (typeof Socket !== 'function') throw misuse('options.WebSocket', 'no WebSocket in this environment: pass one');
  const onStatus = typeof o.onStatus === 'function' ? o.onStatus : () => {};
  const onError = typeof o.onError === 'function' ? o.onError : report;
  const onFrame = typeof o.onFrame === 'function' ? o.onFrame : null;
  const minDelay = Number.isFinite(o.minDelayMs) && o.minDelayMs >= 0 ? o.minDelayMs : 250;
  const maxDelay = Number.isFinite(o.maxDelayMs) && o.maxDelayMs >= minDelay ? o.maxDelayMs : Math.max(minDelay, 10_000);
  const later = o.setTimeout ?? globalThis.setTimeout;
  const cancel = o.clearTimeout ?? globalThis.clearTimeout;
  const random = o.random ?? Math.random;

  let socket = null;
  let timer = null;
  let failures = 0;
  let stopped = false;

  const status = (s, detail) => {
    try {
      onStatus(s, detail);
    } catch (error) {
      report(error);
    }
  };
  const fail = (error) => {
    try {
      onError(error);
    } catch (e) {
      report(e);
    }
  };
  const ask = (request) => {
    try {
      Promise.resolve(o.refetch(request)).catch(fail);
    } catch (error) {
      fail(error);
    }
  };

  function open() {
    timer = null;
    if (stopped) return;
    status('connecting');
    let s;
    try {
      s = new Socket(String(url));
    } catch (error) {
      fail(error);
      wait();
      return;
    }
    socket = s;
    s.onopen = () => {
      if (socket !== s) return;
      failures = 0;
      status('open');
    };
    s.onmessage = (event) => {
      if (socket !== s) return;
      let outcome;
      try {
        outcome = store.applyFrame(event.data);
      } catch (error) {
        fail(error); // a malformed frame: the store changed nothing
        return;
      }
      if (onFrame !== null) {
        try {
          onFrame(outcome, event.data);
        } catch (error) {
          fail(error);
        }
      }
      if (outcome.refetch === 'all') ask({ what: 'all', reason: outcome.reason });
      else if (outcome.refetch === 'sessions') ask({ what: 'sessions', taskId: outcome.taskId, reason: outcome.reason });
    };
    s.onclose = (event) => {
      if (socket !== s) return;
      socket = null;
      status('closed', event && event.code);
      if (!stopped) wait();
    };
    s.onerror = () => {}; // a close follows
  }

  function wait() {
    if (stopped) return;
    const delay = Math.round(Math.min(maxDelay, minDelay * 2 ** Math.min(failures, 30)) * (0.5 + random() / 2));
    failures += 1;
    status('waiting', delay);
    timer = later(open, delay);
  }

  open();
  return Object.freeze({
    /** Stops: closes the socket (code 1000) and reconnects no more. */
    close() {
      if (stopped) return;
      stopped = true;
      if (timer !== null) cancel(timer);
      timer = null;
      const s = socket;
      socket = null;
      if (s) {
        try {
          s.close(1000);
        } catch (_) {
          // already closing
        }
      }
      status('closed');
    },
  });
}
