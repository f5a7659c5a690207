// The workspace inbox through the package (SPEC §14): pages of the reference server's shape
// placed by their stream position, the rows kept right from frames, the store's own copies of
// rows (nothing the caller holds is kept), typed errors for malformed pages (nothing changed),
// listeners told, and a convergence property over random histories. In the development build
// (the production build leaves the inbox out until its bytes are paid for: it throws
// `development_only`, tested here too).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProjectionStore } from 'task-projection';
import { DEVELOPMENT } from './build.mjs';
import { mutateDeep } from './sound.mjs';

test('the production build leaves the inbox out, with a typed error and its arguments unread', { skip: DEVELOPMENT }, () => {
  const store = new ProjectionStore();
  const unread = { get bundles() { throw new Error('read'); } };
  for (const call of [() => store.applyInboxPage('ws', unread), () => store.applyInboxSeed(unread), () => store.inboxReadFailed('ws'), () => store.inbox('ws')]) {
    assert.throws(call, (e) => e.code === 'development_only');
  }
});

const WS = 'ws-1';
const STREAM = 'stream-1';
const at = (s) => `2026-12-06T12:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}Z`;
const rev = (sequence) => ({ epoch: '1', sequence });
const task = (i) => `t${i}`;
const session = (i) => `s${i}`;

/** A store listing `n` sessions (one task each), placed at offset 0 of the stream. */
function listed(n) {
  const store = new ProjectionStore();
  store.applyStreamPosition({ stream: STREAM, offset: 0 });
  for (let i = 0; i < n; i++) {
    store.applySessionList(task(i), [{ id: session(i), task_id: task(i), state: 'WAITING_FOR_INPUT', is_primary: true, pending_action: null, pending_action_revision: rev(0), updated_at: at(0) }]);
  }
  return store;
}

const row = (i, pending, created) => ({
  pending_id: pending, task_id: task(i), session_id: session(i), session_state: 'WAITING_FOR_INPUT',
  task_title: `Task ${i}`, created_at: at(created), context: '', messages: [{ id: `m-${pending}`, metadata: { question: { prompt: 'Which one?' } } }],
});

const page = (rows, offset, extra = {}) => ({ bundles: rows, count: rows.length, hidden_count: 0, next_snooze_expiry: null, stream: STREAM, offset, ...extra });

/** A `session.state_changed` frame at `offset`: the session asks (or not). */
const stateFrame = (i, asking, offset) => ({
  type: 'session.state_changed', offset,
  payload: { session_id: session(i), task_id: task(i), state: 'WAITING_FOR_INPUT', updated_at: at(offset), pending_action: asking ? 'clarification' : null, pending_action_revision: rev(offset) },
});

const ids = (inbox) => inbox.rows.map((r) => `${r.sessionId}:${r.pendingId}`);

describe('the workspace inbox (SPEC §14)', { skip: !DEVELOPMENT }, () => {
  test('a page is the answer; its count is its rows; a late page never undoes a newer frame', () => {
    const store = listed(3);
    assert.equal(store.inbox(WS).state, 'unknown');
    assert.equal(store.inbox(WS).reread, true);
    store.applyInboxPage(WS, page([row(1, 'p1', 5), row(0, 'p0', 3)], 0));
    const inbox = store.inbox(WS);
    assert.equal(inbox.state, 'known');
    assert.equal(inbox.count, 2);
    assert.deepEqual(ids(inbox), ['s0:p0', 's1:p1']);
    assert.equal(inbox.rows[0].row.task_title, 'Task 0');
    assert.equal(inbox.rows[0].createdAt, at(3));
    // A frame after the page ends s0's question: its row goes, at once.
    store.applyFrame(stateFrame(0, false, 1));
    assert.deepEqual(ids(store.inbox(WS)), ['s1:p1']);
    assert.equal(store.inbox(WS).state, 'known');
    // A read after the frame; then one from before it, delivered late: ignored.
    store.applyInboxPage(WS, page([row(1, 'p1', 5)], 1));
    store.applyInboxPage(WS, page([row(1, 'p1', 5), row(0, 'p0', 3)], 0));
    assert.equal(store.lastReason(), 'inbox_page_older');
    assert.deepEqual(ids(store.inbox(WS)), ['s1:p1']);
    // A question in a session whose rows the store does not hold: read again.
    store.applyFrame(stateFrame(2, true, 2));
    assert.equal(store.inbox(WS).state, 'unknown');
    assert.equal(store.inbox(WS).reason, 'inbox_session_moved');
    store.applyInboxPage(WS, page([row(1, 'p1', 5), row(2, 'p2', 6)], 2));
    assert.deepEqual(ids(store.inbox(WS)), ['s1:p1', 's2:p2']);
    assert.equal(store.inbox(WS).state, 'known');
  });

  test('the rows are the store\'s own frozen copies, and the answer survives JSON and structuredClone', () => {
    const store = listed(1);
    const p = page([row(0, 'p0', 1)], 0);
    store.applyInboxPage(WS, p);
    mutateDeep(p);
    const inbox = store.inbox(WS);
    assert.equal(inbox.rows[0].row.task_title, 'Task 0');
    assert.equal(inbox.rows[0].row.messages[0].metadata.question.prompt, 'Which one?');
    assert.ok(Object.isFrozen(inbox.rows[0].row));
    assert.deepEqual(structuredClone(inbox), JSON.parse(JSON.stringify(inbox)));
    // A store that took a page still hands its state on.
    const copy = ProjectionStore.hydrate(JSON.parse(JSON.stringify(store.dehydrate())));
    // Not part of a snapshot: the copy's inbox is unknown until it reads a page, never caught up.
    assert.equal(copy.inbox(WS).state, 'unknown');
  });

  test('caught up only when known; a failed read is an error; the seed holds until a frame; snoozes end', () => {
    const store = listed(1);
    store.applyInboxSeed({ workspaceId: WS, count: 4, hasMore: false, nextSnoozeExpiry: null });
    assert.deepEqual(store.inbox(WS).seed, { count: 4, hasMore: false });
    assert.equal(store.inbox(WS).state, 'unknown');
    store.applyFrame(stateFrame(0, false, 1));
    assert.equal(store.inbox(WS).seed, null);
    store.inboxReadFailed(WS);
    assert.equal(store.inbox(WS).state, 'error');
    assert.equal(store.inbox(WS).reread, false);
    store.applyInboxPage(WS, page([], 1, { hidden_count: 1, next_snooze_expiry: at(100) }));
    assert.equal(store.inbox(WS, new Date(at(99))).state, 'known');
    assert.equal(store.inbox(WS, at(100)).reason, 'inbox_snooze_ended');
    assert.equal(store.inbox(WS, Date.parse(at(101))).reread, true);
    assert.equal(store.inbox('another').state, 'unknown');
  });

  test('listeners hear of a page', async () => {
    const store = listed(1);
    const heard = [];
    store.subscribe((changes) => heard.push(changes));
    store.applyInboxPage(WS, page([], 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(heard.length, 1);
    assert.equal(heard[0].inbox, true);
  });

  test('a malformed page, seed or clock is a typed error naming the field, and nothing changes', () => {
    const store = listed(2);
    store.applyInboxPage(WS, page([row(0, 'p0', 1)], 1));
    const before = JSON.stringify(store.inbox(WS, at(0)));
    const bad = (f) => {
      const p = page([row(0, 'p0', 1), row(1, 'p1', 2)], 3);
      f(p);
      return p;
    };
    const cases = [
      [() => store.applyInboxPage(WS, 'nope'), 'page'],
      [() => store.applyInboxPage(WS, bad((p) => { p.count = 5; })), 'page.count'],
      [() => store.applyInboxPage(WS, bad((p) => { p.bundles[1].session_id = 's0'; })), 'page.bundles[1].session_id'],
      [() => store.applyInboxPage(WS, bad((p) => { p.bundles[0].created_at = 7; })), 'page.bundles[0].created_at'],
      [() => store.applyInboxPage(WS, bad((p) => { p.bundles[0].task_title = () => 1; })), 'page.bundles[0].task_title'],
      [() => store.applyInboxPage(WS, bad((p) => { delete p.offset; })), 'page.offset'],
      [() => store.applyInboxPage(WS, bad((p) => { Object.defineProperty(p.bundles[0], 'pending_id', { get() { throw new Error('no'); }, enumerable: true }); })), 'page.bundles[0]'],
      [() => store.applyInboxPage('', page([], 9)), 'workspaceId'],
      [() => store.applyInboxPage(WS, page([], 9), { stream: STREAM }), 'at.offset'],
      [() => store.applyInboxSeed({ workspaceId: WS, count: -1 }), 'seed.count'],
      [() => store.inboxReadFailed(3), 'workspaceId'],
      [() => store.inbox(WS, {}), 'now'],
      [() => store.inbox(WS, Number.NaN), 'now'],
    ];
    for (const [call, field] of cases) {
      assert.throws(call, (e) => {
        assert.equal(e.name, 'TaskProjectionError', String(e));
        assert.ok(e.field.startsWith(field), `${field}: ${e.field} (${e.message})`);
        return true;
      }, field);
      assert.equal(JSON.stringify(store.inbox(WS, at(0))), before, field);
    }
  });
});

// ---- the convergence property (as tests/store_inbox.rs, through the package) ----------------

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

/** A server history over `n` sessions: frames (in offset order) and a page read after each step. */
function history(random, n, steps, limit) {
  const bundles = new Array(n).fill(null); // { p, at, hidden }
  let next = 0;
  let offset = 0;
  const frames = [];
  const pages = [];
  const liveAt = [bundles.map((b) => b && { ...b })];
  const visible = () => {
    const all = bundles.map((b, i) => b && !b.hidden ? { ...b, i } : null).filter(Boolean).sort((a, b) => (a.at - b.at) || (a.p < b.p ? -1 : 1));
    const hidden = bundles.filter((b) => b && b.hidden).length;
    const shown = all.slice(0, limit);
    return page(shown.map((b) => row(b.i, b.p, b.at)), offset, { hidden_count: hidden, ...(all.length > limit ? { next_cursor: 'c' } : {}) });
  };
  pages.push(visible());
  for (let k = 0; k < steps; k++) {
    const i = Math.floor(random() * n);
    const r = random();
    if (r < 0.7) {
      offset += 1;
      if (bundles[i] === null) {
        next += 1;
        bundles[i] = { p: `p${next}`, at: offset, hidden: false };
      } else {
        bundles[i] = null;
      }
      frames.push(stateFrame(i, bundles[i] !== null, offset));
    } else if (r < 0.85) {
      offset += 1;
      frames.push(stateFrame(i, bundles[i] !== null, offset));
    } else if (bundles[i] !== null) {
      bundles[i].hidden = !bundles[i].hidden;
    }
    while (liveAt.length <= offset) liveAt.push(bundles.map((b) => b && { ...b }));
    pages.push(visible());
  }
  return { frames, pages, liveAt, final: (() => { const v = visible(); return v; })(), finalAll: page(bundles.map((b, i) => b && !b.hidden ? row(i, b.p, b.at) : null).filter(Boolean).sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.pending_id < b.pending_id ? -1 : 1)), offset, { hidden_count: bundles.filter((b) => b && b.hidden).length }) };
}

const HISTORIES = Number(process.env.INBOX_HISTORIES ?? 500);

test(`inbox convergence: ${HISTORIES} histories of frames (duplicated), pages anywhere, a read at the end`, { skip: !DEVELOPMENT }, () => {
  const counts = { deliveries: 0, known: 0, unknown: 0, ignored: 0 };
  for (let h = 0; h < HISTORIES; h++) {
    const random = rng(h + 1);
    const n = 1 + Math.floor(random() * 4);
    const limit = [1, 2, 50][Math.floor(random() * 3)];
    const { frames, pages, liveAt, finalAll } = history(random, n, 1 + Math.floor(random() * 20), limit);
    const store = listed(n);
    // Frames in order (duplicates after their first delivery), pages anywhere.
    const schedule = frames.map((f) => ({ frame: f }));
    for (const p of pages) schedule.splice(Math.floor(random() * (schedule.length + 1)), 0, { page: p });
    for (let d = 0; d < 4 && frames.length > 0; d++) {
      const f = frames[Math.floor(random() * frames.length)];
      const first = schedule.findIndex((x) => x.frame === f);
      schedule.splice(first + 1 + Math.floor(random() * (schedule.length - first)), 0, { frame: f });
    }
    let hAt = 0;
    let pageAt = -1;
    for (const d of schedule) {
      if (d.frame) {
        store.applyFrame(d.frame);
        hAt = Math.max(hAt, d.frame.offset);
      } else {
        store.applyInboxPage(WS, d.page);
        if (store.lastReason() === 'inbox_page_older') counts.ignored += 1;
        pageAt = Math.max(pageAt, d.page.offset);
      }
      const inbox = store.inbox(WS, at(0));
      counts.deliveries += 1;
      assert.equal(inbox.count, inbox.rows.length);
      if (inbox.state !== 'known') {
        counts.unknown += 1;
        continue;
      }
      counts.known += 1;
      const live = liveAt[Math.max(hAt, pageAt)].map((b, i) => b && `${session(i)}:${b.p}`).filter(Boolean);
      for (const shown of ids(inbox)) assert.ok(live.includes(shown), `history ${h}: ${shown} shown, live ${live}`);
      if (!inbox.more) {
        assert.ok(live.length - inbox.count <= inbox.hiddenCount, `history ${h}: ${live} live, ${ids(inbox)} shown`);
      }
    }
    store.applyInboxPage(WS, finalAll);
    const inbox = store.inbox(WS, at(0));
    assert.equal(inbox.state, 'known', `history ${h}`);
    assert.deepEqual(ids(inbox), finalAll.bundles.map((r) => `${r.session_id}:${r.pending_id}`), `history ${h}`);
    store.free();
  }
  console.log(`inbox convergence (JS): ${JSON.stringify({ histories: HISTORIES, ...counts })}`);
  assert.ok(counts.known > 0 && counts.unknown > 0 && counts.ignored > 0);
});
