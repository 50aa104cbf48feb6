// Pure: which days of a daily archive an export writes. A day is written once; it is written
// again only when its rows changed since the export before (a late commit rewrote or removed
// some of them), and its partition goes when the archive holds no row of it any more.

/** A day of the archive as the warehouse holds it now. */
export interface DayNow {
  day: string;
  rows: number;
  /** Whether a row of the day was written after the export before read the archive. */
  written: boolean;
}

export interface DaysToWrite {
  /** Days to write: new, or changed. */
  write: string[];
  /** Days the export before wrote that the archive no longer holds. */
  remove: string[];
}

/** Pure: `exported`, each day the export before wrote and its row count; `since`, the first day wanted (YYYY-MM-DD). */
export function daysToWrite(now: readonly DayNow[], exported: ReadonlyMap<string, number>, since: string | null, everything: boolean): DaysToWrite {
  const wanted = (day: string) => since === null || day >= since;
  const held = new Set(now.map((d) => d.day));
  const write = now.filter((d) => wanted(d.day) && (everything || !exported.has(d.day) || exported.get(d.day) !== d.rows || d.written)).map((d) => d.day);
  const remove = [...exported.keys()].filter((day) => wanted(day) && !held.has(day));
  return { write: write.sort(), remove: remove.sort() };
}
