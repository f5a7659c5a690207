// The package's `ProjectionStore`: the wasm class, plus a fast path for the hot inputs (WebSocket
// message events and REST message pages). It reads the few fields the rules need in JS (cheap)
// and passes them to wasm as primitives in one call per message, instead of wasm reading each
// field across the boundary. Only messages whose fields all have their ordinary types take it;
// anything else (including every malformed payload) goes to the wasm decoder, which reports the
// typed error. The wasm side maps the fields with the decoder's own function
// (`MessageFields::into_message`); tests/js/store.fastpath.test.mjs checks both paths agree.
import { ProjectionStore as WasmProjectionStore } from './task_projection.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isText = (v) => v === undefined || v === null || typeof v === 'string';

/**
 * The fields of a message as the wasm side takes them, or `undefined` when the message has an
 * unusual shape (the wasm decoder then handles it).
 */
function messageFields(p) {
  if (!isObject(p)) return undefined;
  const id = p.id !== undefined ? p.id : p.message_id;
  const m = p.metadata;
  const hasMeta = isObject(m);
  if (typeof id !== 'string' || !(hasMeta || m === undefined || m === null)) return undefined;
  const status = hasMeta ? m.status : undefined;
  const pendingId = hasMeta ? m.pending_id : undefined;
  const total = hasMeta ? m.question_total : undefined;
  if (!isText(p.turn_id) || !isText(p.type) || !isText(status) || !isText(pendingId)) return undefined;
  if (!isText(p.created_at) || !isText(p.updated_at)) return undefined;
  return [id, p.turn_id, p.type, status, pendingId, typeof total === 'number' ? total : undefined, p.created_at, p.updated_at];
}

/** The arguments of `__applyMessageFields` for an event payload, or `undefined`. */
function eventArgs(k, payload) {
  const f = messageFields(payload);
  if (f === undefined || typeof payload.session_id !== 'string' || !isText(payload.task_id)) return undefined;
  const a = payload.pending_action;
  const action = a === undefined ? 0 : a === null ? 1 : a === 'clarification' ? 2 : a === 'permission' ? 3 : -1;
  if (action < 0) return undefined;
  const r = payload.pending_action_revision;
  let epoch;
  let sequence = 0;
  if (isObject(r)) {
    if (typeof r.epoch !== 'string' || !Number.isSafeInteger(r.sequence) || r.sequence < 0) return undefined;
    epoch = r.epoch;
    sequence = r.sequence;
  } else if (r !== undefined && r !== null) {
    return undefined;
  }
  return [k, payload.session_id, payload.task_id, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], action, epoch, sequence];
}

// Plain comparisons (no Object.hasOwn): old WebViews run this file too.
const kindCode = (kind) => (kind === 'added' ? 0 : kind === 'updated' ? 1 : kind === 'deleted' ? 2 : -1);

export class ProjectionStore extends WasmProjectionStore {
  applyMessageEvent(kind, payload) {
    const k = kindCode(kind);
    const args = k >= 0 ? eventArgs(k, payload) : undefined;
    if (args !== undefined) return this.__applyMessageFields(...args);
    return super.applyMessageEvent(kind, payload);
  }

  applyMessageEvents(kind, payloads) {
    // All or nothing, like the wasm path: every event must take the fast path, else the wasm
    // decoder takes the batch (and rejects it whole when one is malformed).
    const k = kindCode(kind);
    if (k >= 0 && Array.isArray(payloads) && payloads.length > 0) {
      const batch = [];
      for (let i = 0; i < payloads.length; i++) {
        const args = eventArgs(k, payloads[i]);
        if (args === undefined) return super.applyMessageEvents(kind, payloads);
        batch.push(args);
      }
      for (let i = 0; i < batch.length; i++) this.__applyMessageFields(...batch[i]);
      return undefined;
    }
    return super.applyMessageEvents(kind, payloads);
  }

  applyMessagePage(sessionId, messages) {
    // All or nothing: every row must take the fast path, else the wasm decoder takes the page
    // (and rejects it whole when a row is malformed).
    if (typeof sessionId === 'string' && Array.isArray(messages)) {
      const rows = [];
      for (let i = 0; i < messages.length; i++) {
        const f = messageFields(messages[i]);
        if (f === undefined) return super.applyMessagePage(sessionId, messages);
        rows.push(f);
      }
      if (rows.length === 0) return super.applyMessagePage(sessionId, messages);
      for (let i = 0; i < rows.length; i++) {
        const f = rows[i];
        this.__applyMessageFields(i === 0 ? 4 : 3, sessionId, undefined,
          f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], 0, undefined, 0);
      }
      return undefined;
    }
    return super.applyMessagePage(sessionId, messages);
  }
}
