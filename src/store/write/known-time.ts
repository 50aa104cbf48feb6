// Known time, from the writers' side: every writing transaction takes the warehouse server's
// clock once (`sync.begin_write`, src/store/sql/history.sql) and everything it writes is
// known from that instant. What a process timed on its own clock (a response received, a
// request sent) is placed on the server's clock by how long ago it happened, never by the
// process's idea of the date.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../connection.ts';

/** The server's clock now, as an SQL value (a time stamped where the statement runs). */
export const SERVER_CLOCK = sql`"sync"."server_clock"()`;

interface Executes {
  execute(statement: SQL): Promise<unknown>;
}

interface Transacts {
  transaction<T>(fn: (tx: Executes) => Promise<T>): Promise<T>;
}

/**
 * Starts a write: takes the write barrier (shared) and the server's clock as this
 * transaction's known time, and names the body whose answer closes what it removes.
 * `resource` (`<source>/<resource>`): the resource it writes, whose writers then commit one
 * after another, in the order of their known times. Call it first in the transaction.
 * Returns the known time.
 */
export async function beginWrite(tx: Executes, closingBody: number | null = null, resource: string | null = null): Promise<Date> {
  const [row] = rowsOf<{ known: string | Date }>(await tx.execute(sql`select "sync"."begin_write"(${closingBody}::bigint, ${resource}::text) as known`));
  return new Date(row!.known);
}

/** Names the body whose answer closes what the next statements remove (in a started write). */
export async function closingBody(tx: Executes, id: number | null): Promise<void> {
  await tx.execute(sql`select "sync"."set_closing_body"(${id}::bigint)`);
}

/** The server's clock now. */
export async function serverClock(db: Executes): Promise<Date> {
  const [row] = rowsOf<{ now: string | Date }>(await db.execute(sql`select ${SERVER_CLOCK} as now`));
  return new Date(row!.now);
}

/**
 * How far the server's clock is ahead of this process's, in milliseconds. Read on a
 * connection of its own (a transaction), so that waiting for the pool is not counted: the
 * server read its clock somewhere inside the round trip, whose middle is taken.
 */
export async function serverClockOffset(db: Transacts): Promise<number> {
  return db.transaction(async (tx) => {
    const sent = Date.now();
    const server = await serverClock(tx);
    const received = Date.now();
    return server.getTime() - (sent + received) / 2;
  });
}

/**
 * An instant this process measured on its own clock, on the server's: moved by the offset
 * read just before (`serverClockOffset`), so only a difference of this process's clock
 * counts, whatever the date it believes.
 */
export function onServerClock(at: Date, offsetMs: number): Date {
  return new Date(at.getTime() + offsetMs);
}

/**
 * This process's reading of the server's clock, for decisions that compare a stored time with
 * "now" and for the times a job stamps before it writes: its own clock moved by the offset
 * read at most `refreshMs` ago (`refresh()`), so a process whose clock is days off stores and
 * judges on the warehouse's time. The process's own clock still paces requests.
 */
export class ServerClock {
  private offsetMs = 0;
  private readAtMs = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Transacts,
    private readonly refreshMs = 60_000,
  ) {}

  /**
   * Reads the offset when the last reading is older than `refreshMs`: the first time awaited,
   * later ones in the background. Never throws: a reading that fails (the warehouse
   * restarting) keeps the offset it had, and a job is never held or failed by its clock.
   */
  async refresh(): Promise<void> {
    if (performance.now() - this.readAtMs < this.refreshMs) return;
    const first = this.readAtMs === Number.NEGATIVE_INFINITY;
    this.reading ??= serverClockOffset(this.db).then(
      (offset) => {
        this.offsetMs = offset;
        this.readAtMs = performance.now();
      },
      () => {},
    ).finally(() => {
      this.reading = undefined;
    });
    if (first) await this.reading;
  }

  readonly now = (): Date => new Date(Date.now() + this.offsetMs);
}
