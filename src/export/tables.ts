// Pure: what an export writes, from the tables asked for. By default the daily archives (by
// day) and every versioned table as exportable at the export's instant; with `--as-of`, the
// versioned tables as exportable then; `--tables` names any of those, or a `_history` table, written
// whole with its versions' periods for a notebook's own as-of joins.

export type TableChoice =
  | { kind: 'archive'; table: string }
  /** A versioned table as exportable at `at` (`T_as_of`); `asOf` null: the export's own instant (the current tables). */
  | { kind: 'asOf'; table: string; base: string; at: string; asOf: string | null; rel: string }
  | { kind: 'history'; table: string; asOf: null; rel: string };

export interface ExportableTables {
  archives: readonly string[];
  versioned: readonly string[];
}

export function chooseTables(exportable: ExportableTables, req: { tables: readonly string[] | null; asOf: string | null; knownAt: string }): TableChoice[] | { error: string } {
  const histories = exportable.versioned.map((t) => `${t}_history`);
  const asked = req.tables ?? (req.asOf ? exportable.versioned : [...exportable.archives, ...exportable.versioned]);
  const unknown = asked.filter((t) => !exportable.archives.includes(t) && !exportable.versioned.includes(t) && !histories.includes(t));
  if (unknown.length > 0) {
    return { error: `--tables: no such table to export: ${unknown.join(', ')} (daily archives: ${exportable.archives.join(', ')}; any versioned table such as ${exportable.versioned[0]}, or its _history)` };
  }
  const archivesAsOf = req.asOf ? asked.filter((t) => exportable.archives.includes(t)) : [];
  if (archivesAsOf.length > 0) return { error: `--tables: ${archivesAsOf.join(', ')} ${archivesAsOf.length === 1 ? 'is a daily archive' : 'are daily archives'}, by day already: export without --as-of` };
  return [...new Set(asked)].map((t): TableChoice => {
    if (exportable.archives.includes(t)) return { kind: 'archive', table: t };
    if (histories.includes(t)) return { kind: 'history', table: t, asOf: null, rel: t };
    const at = req.asOf ?? req.knownAt;
    return { kind: 'asOf', table: t, base: t, at, asOf: req.asOf, rel: req.asOf ? `asof=${req.asOf}/${t}` : t };
  });
}
