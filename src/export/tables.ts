// Pure: what an export writes, from the tables asked for. By default the daily archives (by
// day) and every versioned table as known at the export's instant; with `--as-of`, the
// versioned tables as known then; `--tables` names any of those, or a `_history` table, written
// whole with its versions' periods for a notebook's own as-of joins.

export type TablePlan =
  | { kind: 'archive'; table: string }
  /** A versioned table as known at `at` (`T_as_of`); `asOf` null: the export's own instant (the current tables). */
  | { kind: 'asOf'; table: string; base: string; at: string; asOf: string | null; rel: string }
  | { kind: 'history'; table: string; asOf: null; rel: string };

export interface Known {
  archives: readonly string[];
  versioned: readonly string[];
}

export function planTables(known: Known, req: { tables: readonly string[] | null; asOf: string | null; knownAt: string }): TablePlan[] | { error: string } {
  const histories = known.versioned.map((t) => `${t}_history`);
  const asked = req.tables ?? (req.asOf ? known.versioned : [...known.archives, ...known.versioned]);
  const unknown = asked.filter((t) => !known.archives.includes(t) && !known.versioned.includes(t) && !histories.includes(t));
  if (unknown.length > 0) {
    return { error: `--tables: no such table to export: ${unknown.join(', ')} (daily archives: ${known.archives.join(', ')}; any versioned table such as ${known.versioned[0]}, or its _history)` };
  }
  const archivesAsOf = req.asOf ? asked.filter((t) => known.archives.includes(t)) : [];
  if (archivesAsOf.length > 0) return { error: `--tables: ${archivesAsOf.join(', ')} ${archivesAsOf.length === 1 ? 'is a daily archive' : 'are daily archives'}, by day already: export without --as-of` };
  return [...new Set(asked)].map((t): TablePlan => {
    if (known.archives.includes(t)) return { kind: 'archive', table: t };
    if (histories.includes(t)) return { kind: 'history', table: t, asOf: null, rel: t };
    const at = req.asOf ?? req.knownAt;
    return { kind: 'asOf', table: t, base: t, at, asOf: req.asOf, rel: req.asOf ? `asof=${req.asOf}/${t}` : t };
  });
}
