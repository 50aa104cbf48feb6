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

/** Names the body whose answer closes what the next statements remove (in a started write). */
export async function closingBody(tx: Executes, id: number | null): Promise<void> {
  await tx.execute(sql`select "sync"."set_closing_body"(${id}::bigint)`);
}
