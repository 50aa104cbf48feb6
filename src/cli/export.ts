// `tesync export`: the warehouse as Parquet for notebooks and archives (src/export/export.ts).
import { parseArgs } from 'node:util';
import { exportWarehouse, ExportRequestError, type ExportSummary } from '../export/export.ts';
import { readDay } from '../export/instants.ts';
import { openWarehouse } from '../store/connection.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync export [--to DIR] [--as-of INSTANT] [--tables T,...]
                     [--since YYYY-MM-DD] [--rebuild] [--json]

Writes the warehouse as Parquet (zstd) into DIR (default TE_EXPORT_DIR):
  DIR/<schema>.<archive>/snapshot_date=YYYY-MM-DD/part-<export>-0.parquet
      the daily archives, one partition per day, written once: a later export
      writes the new days, and a day again only when its rows changed
  DIR/<schema>.<table>/part-<export>-0.parquet
      every versioned table as known at the export's instant (again only
      when its rows changed)
  DIR/asof=<INSTANT>/<schema>.<table>/part-<export>-0.parquet
      with --as-of: every versioned table as known at INSTANT (T_as_of)
  DIR/_manifest.json
      each file's table, kind, partition, rows, sha256 and its own types
      (each numeric column's DECIMAL(38,s), or a string when a value does not
      fit 38 digits); the export's known-time instant; tesync's version

The manifest always matches the files: files are written under new names,
the manifest is renamed over the old one, and files it no longer names are
removed after. A killed export leaves the last complete one; the next export
removes what it left. Nothing outside DIR is written or removed.

  --as-of INSTANT UTC unless it carries an offset (2026-11-28T12:00:00Z,
                  2026-11-28 21:00:00+09:00), kept to the microsecond
  --tables T,...  only these: daily archives, versioned tables, or a table's
                  _history (every version, with known_from and known_to)
  --since DATE    the daily archives from this day on
  --rebuild       write the folder anew from the warehouse, whatever its
                  manifest says (files tesync did not write stay)
  --json          the summary as JSON

Numbers stay exact: decimals go from Postgres' text to Parquet decimals,
never through a float. Exit 2 for a bad command line (an unknown table, an
instant after now or before the first sync, a manifest that cannot be read),
1 when the export could not complete.`;

export async function runExport({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { to: { type: 'string' }, 'as-of': { type: 'string' }, tables: { type: 'string', multiple: true }, since: { type: 'string' }, rebuild: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const to = values.to ?? config.exportDir;
  if (!to) throw new UsageError('tesync export: say where with --to DIR, or set TE_EXPORT_DIR');
  const since = values.since === undefined ? undefined : readDay(values.since);
  if (since && 'error' in since) throw new UsageError(`--since ${JSON.stringify(values.since)}: ${since.error}`);
  const tables = values.tables?.flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    await warehouse.migrate();
    let summary: ExportSummary;
    try {
      summary = await exportWarehouse(warehouse, logger, { to, ...(values['as-of'] !== undefined ? { asOf: values['as-of'] } : {}), ...(tables ? { tables } : {}), ...(since ? { since: since.day } : {}), ...(values.rebuild ? { rebuild: true } : {}) });
    } catch (err) {
      if (err instanceof ExportRequestError) throw new UsageError(err.message);
      throw err;
    }
    process.stdout.write(values.json ? `${JSON.stringify(summary)}\n` : describe(summary));
    return 0;
  } finally {
    await warehouse.close();
  }
}

/** Pure: the summary for a person, one line per table. */
export function describe(s: ExportSummary): string {
  const lines = s.tables.map((t) => {
    const what = t.files === 0 ? (t.kind === 'archive' ? 'nothing new' : 'unchanged, as written') : `${t.rows} rows in ${t.files} file${t.files === 1 ? '' : 's'}`;
    const days = t.kind === 'archive' && t.unchanged + t.removed > 0 ? ` (${t.unchanged} days as written${t.removed ? `, ${t.removed} removed` : ''})` : '';
    return `  ${t.table}${t.asOf ? ` as of ${t.asOf}` : ''}: ${what}${days}`;
  });
  const removed = s.removedFiles > 0 ? `${s.removedFiles} file${s.removedFiles === 1 ? '' : 's'} no longer listed removed\n` : '';
  return `Exported to ${s.dir}, as known at ${s.knownAt}:\n${lines.join('\n')}\n${removed}`;
}
