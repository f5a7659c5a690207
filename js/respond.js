// `respond` (exported by `task-projection/connect`, used by `useRespond` and `usePermission` in
// `task-projection/react`): the user's answer to a clarification bundle or a permission posted and
// fed to the store (SPEC §13). Plain JS with
// no import, so the React bindings can use it without the wasm glue; the decisions are the store's.

/** A typed error (`code`, `field`) for a misused argument. */
function misuse(field, message) {
  const error = new TypeError(`${field}: ${message}`);
  error.name = 'TaskProjectionError';
  error.code = 'invalid_type';
  error.field = field;
  return error;
}

const report = (error) => {
  if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
  else setTimeout(() => {
    throw error;
  });
};

const IN_FLIGHT = new WeakMap();
const own = (o, k) => (o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

/**
 * Answers or skips clarification bundle `pendingId` of session `sessionId` for the user (SPEC §13)
 * and gives the store every part of the outcome: the store's `respondStart` (a bundle that is not
 * live throws its typed error; a double click joins the request in flight, so one request is
 * sent), a POST of `body` (`{ answers }` or `{ reject: true }`, the server's body) to
 * `${baseUrl}/api/v1/clarification/${pendingId}/respond` with the app's `fetch` (default the
 * global one), `respondReply` with what came back (a timeout after `timeoutMs`, 15,000 by default,
 * is `{ error: 'timeout' }`; no reply `{ error: 'network' }`; a body the store refuses is read as
 * no body: unreadable, nothing hidden), then the reply's position (`session` as a session event,
 * `status_summary` as a summary event). Resolves to `respondReply`'s result with `attempt`, the
 * HTTP `status` (`null` without one), the winner's `response` (`null` without one) and the parsed
 * `body`, and `sent`, the body posted (what a retry sends again); it rejects only for the typed errors of a call that cannot start. It decides nothing:
 * the store's rules read the reply. With `kind: 'permission'` it answers the permission
 * `pendingId` the session is blocked on instead (`store.pendingPermission`): `body` is
 * `permissionBody(...)`, posted to `${baseUrl}/api/v1/permissions/respond`.
 */
export function respond(store, options) {
  if (options === null || typeof options !== 'object') throw misuse('options', 'expected an object');
  const { sessionId, pendingId, body, baseUrl = '', timeoutMs = 15000, kind } = options;
  const fetcher = options.fetch ?? globalThis.fetch;
  if (typeof fetcher !== 'function') throw misuse('options.fetch', 'expected a function');
  if (body === null || typeof body !== 'object') throw misuse('options.body', 'expected the request body, { answers } or { reject: true }');
  if (typeof baseUrl !== 'string') throw misuse('options.baseUrl', 'expected a string');
  const started = store.respondStart(sessionId, pendingId, kind);
  let pending = IN_FLIGHT.get(store);
  if (pending === undefined) IN_FLIGHT.set(store, (pending = new Map()));
  const joined = pending.get(started.attempt);
  if (!started.fresh && joined !== undefined) return joined;
  const url = kind === 'permission' ? `${baseUrl}/api/v1/permissions/respond` : `${baseUrl}/api/v1/clarification/${encodeURIComponent(pendingId)}/respond`;
  const promise = post(store, fetcher, url, body, timeoutMs, started.attempt).finally(() => pending.delete(started.attempt));
  pending.set(started.attempt, promise);
  return promise;
}

/**
 * The body of a permission's respond (the reference client's `permission.respond`) for the app's
 * `permission_request` row `message`: approve or deny with the option `optionId` the user picked
 * from `message.metadata.options` (a deny is `rejected: true`); a deny without an option cancels
 * the request (`cancelled: true`).
 */
export function permissionBody(message, approve, optionId) {
  if (message === null || typeof message !== 'object') throw misuse('message', 'expected the permission_request message');
  const metadata = own(message, 'metadata');
  const cancelled = !approve && optionId === undefined;
  return {
    task_id: own(message, 'task_id'),
    session_id: own(message, 'session_id'),
    request_id: own(metadata, 'request_id'),
    pending_id: own(metadata, 'pending_id'),
    ...(cancelled ? {} : { option_id: optionId }),
    cancelled,
    rejected: !approve && !cancelled,
  };
}

async function post(store, fetcher, url, body, timeoutMs, attempt) {
  const controller = typeof AbortController === 'function' ? new AbortController() : undefined;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (controller !== undefined) controller.abort();
  }, timeoutMs);
  let reply;
  let parsed;
  try {
    const res = await fetcher(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller === undefined ? undefined : controller.signal,
      credentials: 'same-origin',
    });
    let text = '';
    try {
      text = await res.text();
    } catch {
      // An unreadable body: read as none.
    }
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    reply = { status: res.status, body: parsed };
  } catch {
    reply = { error: timedOut ? 'timeout' : 'network' };
  } finally {
    clearTimeout(timer);
  }
  let result;
  try {
    result = store.respondReply(attempt, reply);
  } catch {
    // A body the store refuses (a field of the wrong type): as if none was read.
    parsed = undefined;
    result = store.respondReply(attempt, reply.error === undefined ? { status: reply.status } : reply);
  }
  const session = own(parsed, 'session');
  const sessionId = own(session, 'id');
  const taskId = own(session, 'task_id');
  try {
    if (typeof sessionId === 'string' && own(session, 'pending_action') !== undefined) {
      store.applySessionEvent({
        session_id: sessionId,
        ...(typeof taskId === 'string' ? { task_id: taskId } : {}),
        pending_action: own(session, 'pending_action'),
        pending_action_revision: own(session, 'pending_action_revision'),
      });
    }
    const summary = own(parsed, 'status_summary');
    if (typeof taskId === 'string' && summary !== null && typeof summary === 'object') {
      store.applyStatusSummaryEvent({ task_id: taskId, status_summary: summary });
    }
  } catch (error) {
    // The position is an optimization (events carry it too): a malformed one is reported, not thrown.
    report(error);
  }
  return { ...result, attempt, status: reply.status ?? null, response: own(parsed, 'response') ?? null, body: parsed, sent: body };
}
