// Understood or refused: the checks every resource's rows pass before they are written.
//
// A reader records here how each cell it read went (`CellTally`); the write path (commit.ts)
// judges the tally before it writes: a column read as numeric none of whose cells is a number,
// or a time it could not read, means the response was not understood, and nothing of it is
// written; single unreadable cells make the resource `partial`. The other sign, two rows for
// one key with different values, is caught where rows are deduplicated (upsert.ts).
import { NotUnderstoodError } from '../../src/errors.ts';
import type { JobContext } from '../types.ts';
import { invalid, takeReceived } from './fetch.ts';

interface ColumnCount {
  read: number;
  unreadable: number;
}

/** How the cells of one response were read, per upstream column. */
export class CellTally {
  private readonly columns = new Map<string, ColumnCount>();
  private badTimes = 0;
  private standaloneUnreadable = 0;
  private readonly misreadings: string[] = [];

  /** A cell of a table column that is read as a number (`ok`: a number or null). */
  column(key: string, ok: boolean): void {
    let c = this.columns.get(key);
    if (!c) this.columns.set(key, (c = { read: 0, unreadable: 0 }));
    if (ok) c.read++;
    else c.unreadable++;
  }

  /** A numeric field outside a table (a MetricValue, a screener cell). */
  cell(ok: boolean): void {
    if (!ok) this.standaloneUnreadable++;
  }

  /** A row's time (x) cell that could not be read. */
  badTime(): void {
    this.badTimes++;
  }

  /** Another sign that the shape was not understood (e.g. values that line up with no time). */
  misread(reason: string): void {
    this.misreadings.push(reason);
  }

  get unreadable(): number {
    let n = this.standaloneUnreadable;
    for (const c of this.columns.values()) n += c.unreadable;
    return n;
  }

  /** Why the response cannot have been understood, or null. */
  refusal(): string | null {
    if (this.misreadings.length > 0) return this.misreadings.join('; ');
    if (this.badTimes > 0) return `${this.badTimes} row(s) with a time that cannot be read`;
    const notNumeric = [...this.columns].filter(([, c]) => c.read === 0 && c.unreadable > 0).map(([k]) => k);
    if (notNumeric.length > 0) return `column(s) ${notNumeric.map((k) => `"${k}"`).join(', ')} read as numeric, but no cell is a number`;
    return null;
  }

  /** The counts kept in the resource's state. */
  summary(): { unreadableCells: number; unreadableByColumn: Record<string, number> } {
    const byColumn: Record<string, number> = {};
    for (const [k, c] of this.columns) if (c.unreadable > 0) byColumn[k] = c.unreadable;
    if (this.standaloneUnreadable > 0) byColumn['(fields)'] = this.standaloneUnreadable;
    return { unreadableCells: this.unreadable, unreadableByColumn: byColumn };
  }
}

/**
 * The error that refuses what this job read: its bodies kept as `invalid` (with the reason
 * logged once), the resource recorded `invalid` by the runner unless the job recovers (the
 * history's stream-by-stream fallback). A body already kept is only marked seen again.
 */
export async function refuse(ctx: JobContext, reason: string): Promise<NotUnderstoodError> {
  // Those read since the last refusal: what went before was judged already.
  const list = takeReceived(ctx);
  const last = list.at(-1);
  for (const { route, response } of list.slice(0, -1)) await invalid(ctx, route, response, reason, { quiet: true });
  if (last) {
    const err = await invalid(ctx, last.route, last.response, `not understood: ${reason}`);
    return new NotUnderstoodError(err.message, err.rawBody);
  }
  ctx.logger.warn({ reason }, 'rows refused: not understood');
  return new NotUnderstoodError(reason);
}

/** Runs a step of the write path; a refusal from inside it keeps the job's bodies. */
export async function guarded<T>(ctx: JobContext, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof NotUnderstoodError && !err.rawBody) throw await refuse(ctx, err.message);
    throw err;
  }
}
