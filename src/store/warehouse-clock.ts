// The warehouse's clock: the one clock every stored time is on, the database server's
// (`sync.server_clock()`, src/store/sql/history.sql). A writing transaction takes it once as its
// known time (known-time.ts `beginWrite`); a statement spells it `SERVER_CLOCK`; a decision
// that compares a stored time with "now" (a marker's age, `status`'s ages, retention's cutoff)
// reads it by a query (`WarehouseClock.read`). What a process timed on its own clock before
// it writes (a request sent, a response received, a job's stamps) is placed on it by the
// offset between the two clocks (`now`, `place`), never by the process's idea of the date.
// The process's own clock only paces (src/ports/pacing-clock.ts).
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from './connection.ts';

/** The warehouse's clock now, in SQL: the same clock, read where the statement runs. */
export const SERVER_CLOCK = sql`"sync"."server_clock"()`;

interface Executes {
  execute(statement: SQL): Promise<unknown>;
}

interface Transacts {
  transaction<T>(fn: (tx: Executes) => Promise<T>): Promise<T>;
}

/**
 * This process's reading of the warehouse's clock: its own clock moved by the offset read at
 * most `refreshMs` ago, so that a process whose clock is days off stores and judges on the
 * warehouse's time; or, where one reading is worth a round trip, the server's clock itself
 * (`read`). Built once per process (a `tesync sync`, a worker) and passed in.
 */
export class WarehouseClock {
  private offsetMs = 0;
  private readAtMs = Number.NEGATIVE_INFINITY;
  private reading: Promise<number> | undefined;

  constructor(
    private readonly db: Transacts,
    private readonly refreshMs = 60_000,
  ) {}

  /** The warehouse's clock now, by a query (on `db`: a transaction's own connection, say). */
  static async read(db: Executes): Promise<Date> {
    const [row] = rowsOf<{ now: string | Date }>(await db.execute(sql`select ${SERVER_CLOCK} as now`));
    return new Date(row!.now);
  }

  /**
   * How far the warehouse's clock is ahead of this process's, in milliseconds. Read on a
   * connection of its own (a transaction), so that waiting for the pool is not counted: the
   * server read its clock somewhere inside the round trip, whose middle is taken.
   */
  static async offsetOf(db: Transacts): Promise<number> {
    return db.transaction(async (tx) => {
      const sent = Date.now();
      const server = await WarehouseClock.read(tx);
      const received = Date.now();
      return server.getTime() - (sent + received) / 2;
    });
  }

  /**
   * Reads the offset when the last reading is older than `refreshMs`: the first time awaited,
   * later ones in the background. Never throws: a reading that fails (the warehouse
   * restarting) keeps the offset it had, and a job is never held or failed by its clock.
   */
  async refresh(): Promise<void> {
    if (!this.stale()) return;
    const first = this.readAtMs === Number.NEGATIVE_INFINITY;
    const reading = this.readOffset().catch(() => {});
    if (first) await reading;
  }

  /**
   * The offset, read again (awaited) when older than `refreshMs`; rejects when that reading
   * fails. Times placed with one reading keep the order and the gaps this process measured.
   */
  async offset(): Promise<number> {
    return this.stale() ? this.readOffset() : this.offsetMs;
  }

  /** The warehouse's time now, as this process reads it (after `refresh`). */
  readonly now = (): Date => new Date(Date.now() + this.offsetMs);

  /** An instant this process measured on its own clock, on the warehouse's (`offsetMs`: from `offset()`). */
  place(at: Date, offsetMs = this.offsetMs): Date {
    return new Date(at.getTime() + offsetMs);
  }

  private stale(): boolean {
    return performance.now() - this.readAtMs >= this.refreshMs;
  }

  private readOffset(): Promise<number> {
    this.reading ??= WarehouseClock.offsetOf(this.db)
      .then((offset) => {
        this.offsetMs = offset;
        this.readAtMs = performance.now();
        return offset;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
