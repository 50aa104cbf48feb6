// The embedded server's port, kept in TE_DATA_DIR/postgres/port: a free one from 5433 up (beside
// a Postgres on 5432) the first time, then the same one at every start, so that a BI tool's saved
// connection keeps working. Only a port another program holds makes it choose again; a server of
// the folder itself still starting or stopping is waited for instead (settledServer). With
// TE_EMBEDDED_PORT the port is that one, always: held by another program, the command refuses,
// naming the variable. Between the check that a port is free and the server's bind another
// process may take it; PORT_TAKEN recognises that in the server's log, so the start moves to
// another port (up to PORT_TRIES) instead of failing, unless the port is pinned.
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { WarehouseError } from '../../lib/errors.ts';
import { serverState, type Layout } from './embedded-folder.ts';
import { START_TIMEOUT_S } from './embedded-programs.ts';

/** How many ports a start tries when another process takes each one between the check and the server's bind. */
export const PORT_TRIES = 4;

/** What Postgres logs when its port is taken: `could not bind IPv4 address "127.0.0.1": Address already in use` (Windows: `Only one usage ...`). */
export const PORT_TAKEN = /could not bind .*(Address already in use|Only one usage of each socket address)|could not create any TCP\/IP sockets/i;

export function readPort(l: Layout): number {
  const port = Number(readFileSync(l.port, 'utf8').trim());
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new WarehouseError(`${l.port} does not hold a port number`);
  return port;
}

/** Saves the port the server is to listen on, for the commands that join it. */
export function savePort(l: Layout, port: number): void {
  writeFileSync(l.port, `${port}\n`);
}

/** Whether something answers on the port (the server, once it listens). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on now: from 5433 up (beside a Postgres on 5432), else any. */
export async function freePort(): Promise<number> {
  for (let port = 5433; port < 5533; port++) if (await portFree(port)) return port;
  return anyFreePort();
}

/** A TCP port on 127.0.0.1 that nothing listens on now, as the system picks it. */
export function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** How often a start looks again at a server of the folder that is starting or stopping. */
const SETTLE_POLL_MS = 100;

/**
 * The port of the folder's server once it is running and answering, or null once it is not
 * running: a server still starting (a start whose command died) or stopping (a stop whose
 * command died, or one under way by hand) is waited for, up to the START_TIMEOUT_S pg_ctl
 * itself allows. Answering is what `running` means: a server that says it is ready but answers
 * nothing is not (the next start finds out why).
 */
export async function settledServer(l: Layout): Promise<number | null> {
  const deadline = Date.now() + START_TIMEOUT_S * 1000;
  for (;;) {
    const state = serverState(l);
    if (state === null) return null;
    const settling = state.status === 'starting' || state.status === 'stopping';
    if (!settling) return state.port !== undefined && (await accepts(state.port)) ? state.port : null;
    if (Date.now() > deadline) {
      throw new WarehouseError(`the embedded Postgres server in ${l.data} (pid ${state.pid}) has been ${state.status} for ${START_TIMEOUT_S} s; see its log in ${l.log}`);
    }
    await delay(SETTLE_POLL_MS);
  }
}

/** The refusal of a pinned port another program holds: names the variable. */
export function pinnedPortTaken(l: Layout, port: number): WarehouseError {
  return new WarehouseError(
    `TE_EMBEDDED_PORT=${port}: another program listens on 127.0.0.1:${port} (not the embedded Postgres server of ${l.root}); stop it, or set TE_EMBEDDED_PORT to a free port (unset, tesync keeps the port it had last time, or finds a free one)`,
  );
}
