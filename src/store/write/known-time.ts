// Known time, from the writers' side: every writing transaction takes the warehouse's clock
// once (`sync.begin_write`, src/store/sql/history.sql) and everything it writes is known from
// that instant. The clock itself, and how a process reads it: ../warehouse-clock.ts.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../connection.ts';

interface Executes {
  execute(statement: SQL): Promise<unknown>;
}

/**
 * Starts a write: takes the write barrier (shared) and the server's clock as this
 * transaction's known time, and names the body whose answer closes what it removes.
 * `resource` (`<source>/<resource>`): the resource it writes, whose writers then commit one
 * after another, in the order of their known times. Call it first in the transaction.
 * `at`: the known time instead of the clock's, as the server wrote it (to the microsecond),
 * for a write replayed from the archive (src/replay/) and nothing else. Returns the known time.
 */
export async function beginWrite(tx: Executes, closingBody: number | null = null, resource: string | null = null, at: string | null = null): Promise<Date> {
  const [row] = rowsOf<{ known: string | Date }>(await tx.execute(sql`select "sync"."begin_write"(${closingBody}::bigint, ${resource}::text, ${at}::timestamptz) as known`));
  return new Date(row!.known);
}

/**
 * Starts the write of what upstream answered (beginWrite, no closing body yet) and says when
 * the answer was received, on the warehouse's clock: the clock as this statement starts, less
 * `sinceMs`, how long before it the last response arrived, a duration measured on this
 * process's monotonic counter. Taken in the write's own first statement, so that reading
 * the clock costs no round trip of its own, and before the resource's turn (a wait for another
 * writer of it is no part of the answer's age); late by the statement's way to the server only.
 */
export async function beginWriteReceived(tx: Executes, resource: string, sinceMs: number): Promise<{ known: Date; received: Date }> {
  const since = Math.max(0, sinceMs);
  const [row] = rowsOf<{ known: string | Date; received: string | Date }>(
    await tx.execute(
      sql`with r as materialized (select "sync"."server_clock"() - ${since}::double precision * interval '1 millisecond' as received) select r.received, "sync"."begin_write"(null::bigint, ${resource}::text, null::timestamptz) as known from r`,
    ),
  );
  return { known: new Date(row!.known), received: new Date(row!.received) };
}

/** Names the body whose answer closes what the next statements remove (in a started write). */
export async function closingBody(tx: Executes, id: number | null): Promise<void> {
  await tx.execute(sql`select "sync"."set_closing_body"(${id}::bigint)`);
}
