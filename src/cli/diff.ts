// `tesync diff`: what changed in the warehouse between two instants, read from the versions
// (src/store/sql/changes.sql): for a person (text within 80 columns), as JSON lines, or as
// Parquet beside an export. Read-only.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeChangesParquet } from '../export/changes.ts';
import { openWarehouse } from '../store/connection.ts';
import { CHANGED_TABLES, countChanges, listChanges, resolveBound, streamChangeLines, type Bound, type ChangeCounts, type ChangeQuery, type ResolvedBound } from '../store/read/changes.ts';
import type { Warehouse } from '../store/connection.ts';
import { UsageError, type CommandContext } from './context.ts';
import { readDiffArgs, type DiffArgs } from './diff-args.ts';
import { closingLine, diffHeader, summaryLines, tableSection, TEXT_CHANGES_PER_TABLE } from './diff-format.ts';

const HELP = `Usage: tesync diff --from A --to B [--table T,...] [--net] [--revisions]
                   [--format text|jsonl|parquet] [--to-dir DIR]

What changed in the warehouse's versioned tables (every table of app and
gateway but the daily archives) between two instants: the changes known
after A and by B, read from the versions (sync.changes).

  --from A, --to B  an instant (UTC unless it carries an offset:
                  2026-11-28T12:00:00Z, 2026-11-28 21:00:00+09:00; kept to the
                  microsecond), a run id (the run's end), or last / last-N (the
                  end of the last finished sync run, or of the N-th before it)
  --table T,...   only these tables (schema.table; the name alone when one
                  schema has it)
  --net           one row per key: its row at A against its row at B
                  (sync.changes_net), whatever lay between
  --revisions     only the revisions: updates and deletes of values whose data
                  time (ts) is before A, the look-ahead of a backtest that
                  reads the current tables
  --format F      text (default): a summary per table, then its first
                  ${TEXT_CHANGES_PER_TABLE} changes, a line each (R: a revision), an update's
                  columns under it, what each was and what it became;
                  jsonl: a summary line per table ("kind": "summary"), then
                  every change ("kind": "change"), decimals as strings, exactly;
                  parquet: a file per table that changed, beside an export:
                  DIR/changes/from=A/to=B/<schema>.<table>.parquet
                  (changes_net, revisions, revisions_net with --net and
                  --revisions), and the summary
  --to-dir DIR    where parquet goes (default TE_EXPORT_DIR)

Nothing changed is a summary of zeros, exit 0. Exit 2 for a bad command line
(naming the flag: a bound that is no instant, no run or a run not finished,
an unknown table, --from after --to).`;

export async function runDiff({ config, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      table: { type: 'string', multiple: true },
      net: { type: 'boolean' },
      revisions: { type: 'boolean' },
      format: { type: 'string' },
      'to-dir': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const args = readDiffArgs(values, CHANGED_TABLES, config.exportDir);
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    await warehouse.migrate();
    const from = await bound(warehouse, '--from', args.from);
    const to = await bound(warehouse, '--to', args.to);
    if (from.at > to.at) throw new UsageError(`--from ${from.at} is after --to ${to.at}: nothing becomes known in between`);
    const queries: ChangeQuery[] = args.tables.map((table) => ({ table, from: from.at, to: to.at, net: args.net, revisionsOnly: args.revisions }));
    const counts: ChangeCounts[] = [];
    for (const q of queries) counts.push(await countChanges(warehouse, q));
    if (args.format === 'jsonl') await writeJsonl(warehouse, queries, counts, from, to);
    else if (args.format === 'parquet') await writeParquet(warehouse, args, queries, counts, from, to);
    else await writeText(warehouse, args, queries, counts, from, to);
    return 0;
  } finally {
    await warehouse.close();
  }
}

/** A bound as an instant, or exit 2 naming its flag. */
async function bound(w: Warehouse, flag: string, b: Bound): Promise<ResolvedBound> {
  const r = await resolveBound(w, b);
  if (typeof r === 'string') throw new UsageError(`${flag}: ${r}`);
  return r;
}

const write = (text: string) =>
  new Promise<void>((resolve, reject) => {
    if (process.stdout.write(text, (err) => (err ? reject(err) : undefined))) resolve();
    else process.stdout.once('drain', resolve);
  });

async function writeText(w: Warehouse, args: DiffArgs, queries: readonly ChangeQuery[], counts: readonly ChangeCounts[], from: ResolvedBound, to: ResolvedBound): Promise<void> {
  const lines = [...diffHeader(args, from, to), '', ...summaryLines(counts)];
  let anyRevision = false;
  for (const [i, q] of queries.entries()) {
    const c = counts[i]!;
    if (c.inserts + c.updates + c.deletes === 0) continue;
    const listed = await listChanges(w, q, TEXT_CHANGES_PER_TABLE);
    anyRevision ||= c.revisions > 0;
    lines.push('', ...tableSection(q.table, c, listed));
  }
  const closing = closingLine(counts, anyRevision);
  if (closing) lines.push('', closing);
  await write(`${lines.join('\n')}\n`);
}

async function writeJsonl(w: Warehouse, queries: readonly ChangeQuery[], counts: readonly ChangeCounts[], from: ResolvedBound, to: ResolvedBound): Promise<void> {
  const bounds = { from: from.at, to: to.at, ...(from.run ? { from_run: from.run } : {}), ...(to.run ? { to_run: to.run } : {}) };
  for (const c of counts) await write(`${JSON.stringify({ kind: 'summary', ...bounds, ...c })}\n`);
  const session = w.session({ name: 'tesync diff' });
  try {
    for (const [i, q] of queries.entries()) {
      const c = counts[i]!;
      if (c.inserts + c.updates + c.deletes === 0) continue;
      await streamChangeLines(session, q, (line) => write(`${line}\n`));
    }
  } finally {
    await session.end({ timeout: 5 });
  }
}

async function writeParquet(w: Warehouse, args: DiffArgs, queries: readonly ChangeQuery[], counts: readonly ChangeCounts[], from: ResolvedBound, to: ResolvedBound): Promise<void> {
  const changed = queries.filter((_, i) => counts[i]!.inserts + counts[i]!.updates + counts[i]!.deletes > 0);
  const files = await writeChangesParquet(w, args.toDir!, changed);
  const lines = [...diffHeader(args, from, to), '', ...summaryLines(counts), ''];
  if (files.length === 0) lines.push('Nothing changed: no file written.');
  else lines.push(`Written, ${files.length} file${files.length === 1 ? '' : 's'}, into`, `  ${path.dirname(files[0]!.path)}:`, ...files.map((f) => `  ${path.basename(f.path)} (${f.rows.toLocaleString('en-US')} rows)`));
  await write(`${lines.join('\n')}\n`);
}

