// `tesync export`: the warehouse as Parquet for notebooks and archives (src/export/export.ts).
import { parseArgs } from 'node:util';
import { exportWarehouse, ExportRequestError, type ExportSummary } from '../export/export.ts';
import { openWarehouse } from '../store/connection.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync export [--to DIR] [--as-of INSTANT] [--tables T,...]
                     [--since YYYY-MM-DD] [--json]

Writes the warehouse as Parquet (zstd) into DIR (default TE_EXPORT_DIR):
  DIR/<schema>.<archive>/snapshot_date=YYYY-MM-DD/*.parquet
      the daily archives, one partition per day, written once: a later export
      writes the new days, and a day again only when its rows changed
  DIR/<schema>.<table>/data_0.parquet
      every versioned table as known at the export's instant
  DIR/asof=<INSTANT>/<schema>.<table>/data_0.parquet
      with --as-of: every versioned table as known at INSTANT (T_as_of)
  DIR/_manifest.json
      each file's table, partition, rows and sha256; the export's known-time
      instant; each numeric column's precision and scale (DECIMAL(38,s), or a
      string when a value does not fit 38 digits); tesync's version and schema

  --tables T,...  only these: daily archives, versioned tables, or a table's
                  _history (every version, with known_from and known_to)
  --since DATE    the daily archives from this day on
  --json          the summary as JSON

Numbers stay exact: decimals go from Postgres' text to Parquet decimals,
never through a float. Exit 2 for a bad command line (an unknown table, an
instant after now), 1 when the export could not complete.`;

export async function runExport({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { to: { type: 'string' }, 'as-of': { type: 'string' }, tables: { type: 'string', multiple: true }, since: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const to = values.to ?? config.exportDir;
  if (!to) throw new UsageError('tesync export: say where with --to DIR, or set TE_EXPORT_DIR');
  if (values.since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.since)) throw new UsageError(`--since ${JSON.stringify(values.since)}: a day as YYYY-MM-DD`);
  const tables = values.tables?.flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    await warehouse.migrate();
    let summary: ExportSummary;
    try {
      summary = await exportWarehouse(warehouse, logger, { to, ...(values['as-of'] !== undefined ? { asOf: values['as-of'] } : {}), ...(tables ? { tables } : {}), ...(values.since ? { since: values.since } : {}) });
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
    const what = t.files === 0 ? 'nothing new' : `${t.rows} rows in ${t.files} file${t.files === 1 ? '' : 's'}`;
    const days = t.unchanged + t.removed > 0 ? ` (${t.unchanged} days as written${t.removed ? `, ${t.removed} removed` : ''})` : '';
    return `  ${t.table}${t.asOf ? ` as of ${t.asOf}` : ''}: ${what}${days}`;
  });
  return `Exported to ${s.dir}, as known at ${s.knownAt}:\n${lines.join('\n')}\n`;
}
