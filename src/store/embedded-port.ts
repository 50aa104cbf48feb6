// The embedded server's port, kept in TE_DATA_DIR/postgres/port: a free one from 5433 up (beside
// a Postgres on 5432), chosen again when the saved one is taken. Between the check that a port
// is free and the server's bind another process may take it; PORT_TAKEN recognises that in the
// server's log, so the start moves to another port (up to PORT_TRIES) instead of failing.
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { WarehouseError } from '../lib/errors.ts';
import type { Layout } from './embedded-folder.ts';

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
