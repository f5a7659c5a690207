// A TypeScript consumer of `task-projection/devtools`, `task-projection/devtools/dom` and the
// connection state of `task-projection/connect`, checked by `tsc --noEmit -p tests/types` (never
// run): the panel's API with correctly typed arguments, and wrong usages rejected
// (`@ts-expect-error` fails the check when the line below it is *not* an error).
import { ProjectionStore } from 'task-projection';
import { connect, type Connection, type ConnectionState } from 'task-projection/connect';
import { ProjectionDevtools, mountDevtools as mountFromReactEntry, type DevtoolsHandle, type ProjectionDevtoolsProps } from 'task-projection/devtools';
import { mountDevtools, type DevtoolsConnection, type DevtoolsOptions, type DevtoolsTarget } from 'task-projection/devtools/dom';

type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
function exact<A, B>(_proof: Equal<A, B>): void {}

declare const store: ProjectionStore;

// --- connect(): the connection's state --------------------------------------------------------------
const link = connect('ws://localhost/api/v1/ws', store, { refetch() {} });
exact<typeof link, Connection>(true);
const state = link.state();
exact<typeof state, ConnectionState>(true);
exact<ConnectionState, 'connecting' | 'open' | 'waiting' | 'closed'>(true);
const stop: () => void = link.subscribe((next, detail) => {
  exact<typeof next, ConnectionState>(true);
  exact<typeof detail, number | 'timeout' | undefined>(true);
});
stop();
// @ts-expect-error a listener is a function
link.subscribe('open');

// --- mountDevtools (task-projection/devtools/dom) --------------------------------------------------
const options: DevtoolsOptions = { connection: link, inspectorUrl: '/inspect/#live', open: false };
const panel = mountDevtools(store, document.body, options);
exact<typeof panel, DevtoolsHandle>(true);
mountDevtools(store);
mountDevtools(store, null, { inspectorUrl: new URL('http://localhost/inspect/') });
panel.open();
panel.open({ sessionId: 'sess-1' });
panel.open({ taskId: 'task-1' });
const target: DevtoolsTarget = { sessionId: 'sess-1' };
panel.open(target);
panel.toggle();
panel.close();
const open: boolean = panel.isOpen();
const host: HTMLElement = panel.host;
const root: ShadowRoot | null = host.shadowRoot;
panel.unmount();
void [open, root];
// Any object with the connection's state() and subscribe() does.
const fake: DevtoolsConnection = { state: () => 'open', subscribe: () => () => {} };
mountDevtools(store, document.body, { connection: fake });
// @ts-expect-error a target names a session or a task
panel.open({ id: 'sess-1' });
// @ts-expect-error the store is a ProjectionStore
mountDevtools({}, document.body);
// @ts-expect-error the element is an element
mountDevtools(store, 'body');
// @ts-expect-error inspectorUrl is a string or a URL
mountDevtools(store, document.body, { inspectorUrl: 5 });
// @ts-expect-error a connection has state() and subscribe()
mountDevtools(store, document.body, { connection: { state: () => 'open' } });

// --- <ProjectionDevtools /> (task-projection/devtools) ----------------------------------------------
exact<typeof mountFromReactEntry, typeof mountDevtools>(true);
const props: ProjectionDevtoolsProps = { store, connection: link, inspectorUrl: '/inspect/#live', defaultOpen: true };
const rendered = ProjectionDevtools(props);
exact<typeof rendered, null>(true);
ProjectionDevtools({}); // the store of the nearest ProjectionStoreProvider
// @ts-expect-error defaultOpen is a boolean
ProjectionDevtools({ defaultOpen: 'yes' });
