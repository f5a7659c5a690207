// What the tests of the user's actions share: a happy-dom window for React (closed after the
// file's tests) and a fake server for `respond`'s `fetch`.
import { after } from 'node:test';
import { Window } from 'happy-dom';

const dom = new Window({ url: 'http://localhost/' });
Object.assign(globalThis, { window: dom, document: dom.document, IS_REACT_ACT_ENVIRONMENT: true });
if (globalThis.navigator === undefined) globalThis.navigator = dom.navigator;
after(() => dom.happyDOM.close());

/** React's root, once the window is in place. */
export const { createRoot } = await import('react-dom/client');

/**
 * A fake server: each call answers with the next reply (`{ status, body }`, a string body sent as
 * it is, or an Error to throw); calls recorded (`{ url, init }`).
 */
export function server(...replies) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    const reply = replies.shift();
    if (reply instanceof Error) throw reply;
    await new Promise((r) => setTimeout(r, 5));
    return { status: reply.status, text: async () => (typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)) };
  };
  return { fetch, calls };
}
