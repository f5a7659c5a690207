// The package's `ProjectionStore`: the wasm class, plus a fast path for the hot WebSocket event.
// `applyMessageEvent` reads the few fields the rules need in JS (cheap) and passes them to wasm
// as primitives in one call, instead of wasm reading each field across the boundary. Only
// payloads whose fields all have their ordinary types take it; anything else (including every
// malformed payload) goes to the wasm decoder, which reports the typed error. The wasm side
// maps the fields with the same function as its decoder (`MessageFields::into_message`), and a
// differential test checks both paths agree.
import { ProjectionStore as WasmProjectionStore } from './task_projection.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isText = (v) => v === undefined || v === null || typeof v === 'string';

export class ProjectionStore extends WasmProjectionStore {
  applyMessageEvent(kind, payload) {
    const k = kind === 'added' ? 0 : kind === 'updated' ? 1 : kind === 'deleted' ? 2 : -1;
    fast: if (k >= 0 && isObject(payload)) {
      const p = payload;
      const id = p.id !== undefined ? p.id : p.message_id;
      const m = p.metadata;
      const hasMeta = isObject(m);
      if (typeof id !== 'string' || typeof p.session_id !== 'string') break fast;
      if (!(hasMeta || m === undefined || m === null)) break fast;
      const status = hasMeta ? m.status : undefined;
      const pendingId = hasMeta ? m.pending_id : undefined;
      const total = hasMeta ? m.question_total : undefined;
      if (!isText(p.task_id) || !isText(p.turn_id) || !isText(p.type) || !isText(status) || !isText(pendingId)) break fast;
      if (!isText(p.created_at) || !isText(p.updated_at)) break fast;
      const a = p.pending_action;
      const action = a === undefined ? 0 : a === null ? 1 : a === 'clarification' ? 2 : a === 'permission' ? 3 : -1;
      if (action < 0) break fast;
      const r = p.pending_action_revision;
      let epoch;
      let sequence = 0;
      if (isObject(r)) {
        if (typeof r.epoch !== 'string' || !Number.isSafeInteger(r.sequence) || r.sequence < 0) break fast;
        epoch = r.epoch;
        sequence = r.sequence;
      } else if (r !== undefined && r !== null) {
        break fast;
      }
      return this.__applyMessageFields(
        k, p.session_id, p.task_id, id, p.turn_id, p.type, status, pendingId,
        typeof total === 'number' ? total : undefined, p.created_at, p.updated_at, action, epoch, sequence,
      );
    }
    return super.applyMessageEvent(kind, payload);
  }
}
