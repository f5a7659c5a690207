// `task-projection/connect`: a store fed from the reference server's WebSocket (docs/server-api.md).
// Opens the socket, hands every frame to `store.applyFrame`, calls `refetch` when the outcome asks
// for it (a connection's `server.hello` that did not resume the stream: what was published while
// there was none is lost; `session.created`: the task's session list), and reconnects after a
// close with exponential backoff and jitter, until `close()`. A reconnection asks the server to
// resume the stream (`?since=<offset>&stream=<stream>`) after the last frame the store took (or,
// first, where the store says its state stands: `streamPosition()`), so a resumed hello needs no
// refetch. Plain JS, no wasm of its own (its errors are read.js's): any
// object with `applyFrame` works (the store of any entry). It decides nothing about the data: the
// frame's outcome (the store's rules) says what to refetch; it only keeps the connection's place
// in the stream.

import { taskProjectionError } from './read.js';

/** A TaskProjectionError `invalid_type` for argument `field`. */
const misuse = (field, message) => taskProjectionError('invalid_type', field, `${field}: ${message}`);

const report = (error) => {
  if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
  else setTimeout(() => { throw error; });
};

/**
 * `url` with the query parameters `since` and `stream` set to `since` and `stream` (any previous
 * ones removed; the other parameters, the path and a fragment kept as they are written). Text
 * only, so a relative URL stays relative.
 */
function resumeUrl(url, since, stream) {
  const hashAt = url.indexOf('#');
  const hash = hashAt < 0 ? '' : url.slice(hashAt);
  const rest = hashAt < 0 ? url : url.slice(0, hashAt);
  const queryAt = rest.indexOf('?');
  const base = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const kept = [];
  if (queryAt >= 0) {
    for (const part of rest.slice(queryAt + 1).split('&')) {
      if (part === '') continue;
      const name = new URLSearchParams(part).keys().next().value;
      if (name !== 'since' && name !== 'stream') kept.push(part);
    }
  }
  kept.push(`since=${since}`, `stream=${encodeURIComponent(stream)}`);
  return `${base}?${kept.join('&')}${hash}`;
}

/**
 * Connects `store` to `url`. Options: `refetch({ what: "all" | "sessions", taskId?, reason })`
 * (required; may return a promise), `onFrame(outcome, data)` (after each frame the store took:
 * e.g. to keep the app's own copy of message content), `onStatus(status, detail)` (`"connecting"`, `"open"`,
 * `"waiting"` with the delay in ms, `"closed"`), `onError(error)` (a frame the store rejected, a
 * refetch that failed; default `reportError`), `minDelayMs` (250) and `maxDelayMs` (10,000) for the
 * backoff, `openTimeoutMs` (10,000: a socket that has not opened by then is closed and retried, as
 * a server that holds an upgrade without answering never closes it), and for tests `WebSocket`,
 * `setTimeout`, `clearTimeout`, `random`. Returns `{ close, state, subscribe }`: `state()` is the last
 * status (`"connecting"` at first; `"closed"` only after `close()`, as a dropped connection goes on
 * to `"waiting"` at once), and `subscribe(listener)` calls `listener(status, detail)` with every
 * status after `onStatus` (the devtools panel shows it), returning the function that stops it.
 *
 * `inbox: { workspaceId }` (SPEC §14): whenever the store says its inbox must be read again
 * (`store.inbox(workspaceId).reread`: not read yet, a session moved in a way it cannot place, a
 * truncated page lost a row, a snooze ended), `refetch({ what: "inbox", workspaceId, reason })`
 * is called, one at a time (`readInbox` does the read); checked at the start, after every frame,
 * after each such read that changed the store, and when the earliest snooze ends.
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
  const openTimeout = Number.isFinite(o.openTimeoutMs) && o.openTimeoutMs > 0 ? o.openTimeoutMs : 10_000;
  const later = o.setTimeout ?? globalThis.setTimeout;
  const cancel = o.clearTimeout ?? globalThis.clearTimeout;
  const random = o.random ?? Math.random;
  const inbox = o.inbox;
  if (inbox !== undefined && (inbox === null || typeof inbox !== 'object' || typeof inbox.workspaceId !== 'string' || typeof store.inbox !== 'function')) {
    throw misuse('options.inbox', 'expected { workspaceId } (a string) and a store with inbox()');
  }
  const workspaceId = inbox === undefined ? null : inbox.workspaceId;

  let socket = null;
  let timer = null;
  // The open timeout of the socket being opened (`openTimeoutMs`).
  let guard = null;
  let failures = 0;
  let stopped = false;
  // The place in the server's event stream: the last hello's `stream`, and the offset of the last
  // frame the store took (after a hello that did not resume: that hello's `offset`, the last event
  // before the connection, which the refetch it asked for covers; after a resumed one: unchanged,
  // since the server replays every event after the `since` it was sent). `null`: unknown (an old
  // server, or no offset yet), and then a reconnection does not ask to resume.
  let stream = null;
  let since = null;
  // A store that knows where its state stands (hydrated from a server-rendered snapshot, or told
  // by `applyStreamPosition` after a REST read) resumes from there on the first connection too.
  if (typeof store.streamPosition === 'function') {
    const position = store.streamPosition();
    if (position !== null && typeof position === 'object' && typeof position.stream === 'string' && typeof position.offset === 'number') {
      stream = position.stream;
      since = position.offset;
    }
  }
  // The refetches asked since the last hello that was not resumed (`round` counts those hellos):
  // how many have not settled, and whether one failed. A reconnection resumes only when none is
  // outstanding and none failed: a resumed stream brings no refetch, so what a failed or unfinished
  // refetch left out would stay missing (without resuming, the next hello refetches everything).
  let round = 0;
  let unsettled = 0;
  let refetchFailed = false;

  // The last status and the listeners of `subscribe` (each entry once, removed by its unsubscribe).
  let current = 'connecting';
  let watchers = [];

  const status = (s, detail) => {
    current = s;
    try {
      onStatus(s, detail);
    } catch (error) {
      report(error);
    }
    const listeners = watchers;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i].listener(s, detail);
      } catch (error) {
        report(error);
      }
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
    const mine = round;
    unsettled += 1;
    const settled = (ok) => {
      if (mine !== round) return; // a later full refetch supersedes it
      unsettled -= 1;
      if (!ok) refetchFailed = true;
    };
    try {
      Promise.resolve(o.refetch(request)).then(() => settled(true), (error) => {
        settled(false);
        fail(error);
      });
    } catch (error) {
      settled(false);
      fail(error);
    }
  };
  // The inbox: a read in flight, and the timer of the earliest snooze's end.
  let inboxReading = false;
  let snoozeTimer = null;
  let snoozeAt = null;
  const version = () => (typeof store.version === 'function' ? store.version() : NaN);
  /** Asks for an inbox read when the store says so (and none is in flight). */
  const checkInbox = () => {
    if (workspaceId === null || stopped || inboxReading) return;
    let answer;
    try {
      answer = store.inbox(workspaceId);
    } catch (error) {
      fail(error);
      return;
    }
    const end = answer.nextSnoozeExpiry;
    if (end !== snoozeAt) {
      snoozeAt = end;
      if (snoozeTimer !== null) cancel(snoozeTimer);
      snoozeTimer = null;
      const ms = end === null ? NaN : Date.parse(end) - Date.now();
      if (Number.isFinite(ms)) {
        snoozeTimer = later(() => {
          snoozeTimer = null;
          checkInbox();
        }, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
      }
    }
    if (!answer.reread) return;
    inboxReading = true;
    const before = version();
    const done = () => {
      inboxReading = false;
      // Again only when the read changed the store (no loop over a read that applied nothing).
      if (version() !== before) checkInbox();
    };
    try {
      Promise.resolve(o.refetch({ what: 'inbox', workspaceId, reason: answer.reason })).then(done, (error) => {
        inboxReading = false;
        fail(error);
      });
    } catch (error) {
      inboxReading = false;
      fail(error);
    }
  };
  /** The URL of the next connection: `url`, asking to resume where the store is. */
  const target = () => {
    const plain = String(url);
    if (stream === null || since === null || unsettled !== 0 || refetchFailed) return plain;
    return resumeUrl(plain, since, stream);
  };
  /** Keeps the place in the stream from a frame's outcome (see `stream`, `since`). */
  const track = (outcome) => {
    if (outcome.type === 'server.hello') {
      stream = typeof outcome.stream === 'string' ? outcome.stream : null;
      if (outcome.refetch !== null) {
        since = typeof outcome.offset === 'number' ? outcome.offset : null;
        round += 1;
        unsettled = 0;
        refetchFailed = false;
      }
    } else if (typeof outcome.offset === 'number') {
      since = outcome.offset;
    }
  };

  function open() {
    timer = null;
    if (stopped) return;
    status('connecting');
    let s;
    try {
      s = new Socket(target());
    } catch (error) {
      fail(error);
      wait();
      return;
    }
    socket = s;
    // A handshake that never ends (a server or proxy holding the upgrade open) would leave the
    // connection "connecting" for good: give up on it and retry.
    const timeout = later(() => {
      if (guard === timeout) guard = null;
      if (socket !== s) return;
      socket = null;
      try {
        s.close();
      } catch (_) {
        // not open yet
      }
      status('closed', 'timeout');
      wait();
    }, openTimeout);
    guard = timeout;
    // This socket's timeout only (a late close of an older socket leaves the current one's).
    const unguard = () => {
      if (guard !== timeout) return;
      cancel(timeout);
      guard = null;
    };
    s.onopen = () => {
      unguard();
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
        fail(error); // a malformed frame: the store changed nothing (nor the place in the stream)
        return;
      }
      track(outcome);
      if (onFrame !== null) {
        try {
          onFrame(outcome, event.data);
        } catch (error) {
          fail(error);
        }
      }
      if (outcome.refetch === 'all') ask({ what: 'all', reason: outcome.reason });
      else if (outcome.refetch === 'sessions') ask({ what: 'sessions', taskId: outcome.taskId, reason: outcome.reason });
      checkInbox();
    };
    s.onclose = (event) => {
      unguard();
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
  checkInbox();
  return Object.freeze({
    /** Stops: closes the socket (code 1000) and reconnects no more. */
    close() {
      if (stopped) return;
      stopped = true;
      if (timer !== null) cancel(timer);
      timer = null;
      if (guard !== null) cancel(guard);
      guard = null;
      if (snoozeTimer !== null) cancel(snoozeTimer);
      snoozeTimer = null;
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
      // Nothing follows a close: the listeners are let go.
      watchers = [];
    },

    /** `"connecting"`, `"open"`, `"waiting"` (for the next attempt) or `"closed"` (after `close()`). */
    state() {
      return current;
    },

    /** Calls `listener(status, detail)` after each status change (as `onStatus`); returns the
     * function that stops it. */
    subscribe(listener) {
      if (typeof listener !== 'function') throw misuse('listener', 'expected a function');
      const entry = { listener };
      if (!stopped) watchers = watchers.concat(entry);
      return () => {
        watchers = watchers.filter((w) => w !== entry);
      };
    },
  });
}

// The user's answer (SPEC §13): js/respond.js (no wasm, no read.js: react.js imports it too).
export { respond, permissionBody } from './respond.js';

/**
 * Reads the workspace's inbox page (`GET <baseUrl>/api/v1/clarification-inbox?workspace_id=`,
 * with the requester's cookie) into `store` (SPEC §14): `applyInboxPage`, placed at the store's
 * `streamPosition()` when the read began for a server whose page names no place; a failed read
 * (network, non-2xx, a body that is not JSON) is `inboxReadFailed` and resolves `{ ok: false,
 * error }`; a page the store refuses (malformed) rejects with its typed error (the store
 * changed nothing). Options: `baseUrl` (default `""`, same origin), `limit`, `fetch`.
 */
export async function readInbox(store, workspaceId, options) {
  if (store === null || typeof store !== 'object' || typeof store.applyInboxPage !== 'function') throw misuse('store', 'expected a ProjectionStore');
  if (typeof workspaceId !== 'string' || workspaceId === '') throw misuse('workspaceId', 'expected a non-empty string');
  const o = options ?? {};
  const fetcher = o.fetch ?? globalThis.fetch;
  if (typeof fetcher !== 'function') throw misuse('options.fetch', 'no fetch in this environment: pass one');
  const base = typeof o.baseUrl === 'string' ? o.baseUrl.replace(/\/+$/, '') : '';
  const limit = Number.isSafeInteger(o.limit) && o.limit > 0 ? `&limit=${o.limit}` : '';
  const at = typeof store.streamPosition === 'function' ? store.streamPosition() : null;
  let page;
  try {
    const response = await fetcher(`${base}/api/v1/clarification-inbox?workspace_id=${encodeURIComponent(workspaceId)}${limit}`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`inbox read: HTTP ${response.status}`);
    page = await response.json();
  } catch (error) {
    store.inboxReadFailed(workspaceId, at);
    return { ok: false, error };
  }
  store.applyInboxPage(workspaceId, page, at);
  return { ok: true, error: null };
}
