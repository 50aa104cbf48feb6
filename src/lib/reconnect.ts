// The warehouse may restart or fail over under a running sync: statements that fail
// because the connection went away are tried again for a short while.
import { setTimeout as delay } from 'node:timers/promises';

// postgres.js connection errors, and Postgres' "shutting down / starting up" states.
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08003', '08006']);

export function isConnectionError(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (CONNECTION_CODES.has(String((e as { code?: unknown }).code))) return true;
  }
  return false;
}

/** Runs `fn`, again after a pause when the connection dropped, up to about `budgetMs`. */
export async function withReconnect<T>(fn: () => Promise<T>, budgetMs = 30_000): Promise<T> {
  const started = Date.now();
  for (let pause = 250; ; pause = Math.min(pause * 2, 4000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isConnectionError(err) || Date.now() - started + pause > budgetMs) throw err;
      await delay(pause);
    }
  }
}
