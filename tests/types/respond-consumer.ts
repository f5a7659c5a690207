// A TypeScript consumer of the user's answer (SPEC §13): the store's respond calls, `respond`
// (task-projection/connect) (`useRespond`'s declarations need React's types, which this check has
// not), checked by
// `tsc --noEmit -p tests/types` (never run); wrong usages rejected (`@ts-expect-error`).
import { ProjectionStore, type RespondOutcome, type RespondState } from 'task-projection';
import { respond, type RespondResult } from 'task-projection/connect';

type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
function exact<A, B>(_proof: Equal<A, B>): void {}

declare const store: ProjectionStore;

const started = store.respondStart('s1', 'p1');
exact<typeof started.fresh, boolean>(true);
const replied = store.respondReply(started.attempt, { status: 200, body: { claimed: true } });
exact<typeof replied.outcome, RespondOutcome>(true);
store.respondReply(started.attempt, { error: 'timeout' });
// @ts-expect-error only network and timeout are transport errors
store.respondReply(started.attempt, { error: 'offline' });
const state: RespondState | null = store.respondState('s1', 'p1');
void state;

const pending: Promise<RespondResult> = respond(store, { sessionId: 's1', pendingId: 'p1', body: { reject: true }, timeoutMs: 5000 });
void pending;
// @ts-expect-error a body is required
void respond(store, { sessionId: 's1', pendingId: 'p1' });
