// `tesync diff --format parquet`: what changed between two instants, as Parquet beside an export.
// The export's own way out (transfer.ts: COPY into a FIFO, read by a lane's DuckDB writer), in
// one snapshot, one file per table that changed:
//
//   DIR/<kind>/from=<FROM>/to=<TO>/<schema>.<table>.parquet
//
// `kind` is `changes`, `changes_net`, `revisions` or `revisions_net`; FROM and TO the bounds as
// instants (UTC, to the microsecond), which Hive partitioning reads back as columns. Written
// under a name of its own, then renamed over the file of the same interval, if any: an export
// never names these files, so it never removes them (folder.ts removes only its own).
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Warehouse } from '../store/connection.ts';
import { changesFrom, type ChangeQuery } from '../store/read/changes.ts';
import { exportColumn, type SourceColumn } from './columns.ts';
import { Lanes } from './lanes.ts';
import { exportSnapshot } from './pg-read.ts';
import { transfer, type Reads } from './transfer.ts';

/** The columns of a changes file: sync.changes' own, the table's name beside them. */
const CHANGE_COLUMNS: readonly SourceColumn[] = [
  { name: 'table', type: 'text', comment: 'the versioned table, schema.table' },
  { name: 'change_type', type: 'text', comment: 'insert, update or delete' },
  { name: 'key', type: 'jsonb', comment: "the key's columns, as JSON" },
  { name: 'known_at', type: 'timestamp with time zone', comment: 'when the change became known (known time, the warehouse server clock)' },
  { name: 'run_id', type: 'uuid', comment: 'the run that wrote the later version; for a delete, the run that first received the body that closed the row' },
  { name: 'raw_response_id', type: 'bigint', comment: 'the archived body the later version was read from; for a delete, the body that closed the row' },
  { name: 'before', type: 'jsonb', comment: "the row's columns before, as JSON (decimals as strings); null for an insert" },
  { name: 'after', type: 'jsonb', comment: "the row's columns after, as JSON (decimals as strings); null for a delete" },
  { name: 'changed', type: 'text[]', comment: 'the columns whose values differ, bookkeeping columns aside' },
  { name: 'data_time', type: 'timestamp with time zone', comment: "the row's data time (ts), for a series of points" },
  { name: 'revision', type: 'boolean', comment: 'an update or delete of a value whose data time is before the interval' },
];

/** Pure: the folder of a diff's files under `dir`. */
export function changesFolder(dir: string, q: Pick<ChangeQuery, 'from' | 'to' | 'net' | 'revisionsOnly'>): string {
  const kind = `${q.revisionsOnly ? 'revisions' : 'changes'}${q.net ? '_net' : ''}`;
  return path.join(dir, kind, `from=${q.from}`, `to=${q.to}`);
}

export interface WrittenChanges {
  table: string;
  path: string;
  rows: number;
}

/** Writes each query's changes (queries of one interval) to its file under `dir`; returns the files, in the order asked. */
export async function writeChangesParquet(warehouse: Warehouse, dir: string, queries: readonly ChangeQuery[]): Promise<WrittenChanges[]> {
  if (queries.length === 0) return [];
  const folder = changesFolder(dir, queries[0]!);
  await mkdir(folder, { recursive: true });
  const columns = CHANGE_COLUMNS.map((c) => exportColumn(c));
  const session = warehouse.session({ name: 'tesync diff' });
  const lanes = await Lanes.open(1);
  const tag = randomBytes(6).toString('hex');
  const out: WrittenChanges[] = [];
  try {
    await session.begin('isolation level repeatable read read only', async (tx) => {
      const reads: Reads = { tx, snapshot: await exportSnapshot(tx), open: () => warehouse.session({ name: 'tesync diff copy' }), lanes };
      for (const q of queries) {
        const file = path.join(folder, `${q.table.name}.parquet`);
        const staged = path.join(folder, `.${q.table.name}.parquet.${tag}.tmp`);
        try {
          const written = await transfer(reads, { columns, from: changesFrom(q), where: null, target: { path: staged, metadata: { 'tesync.table': q.table.name, 'tesync.from': q.from, 'tesync.to': q.to } }, scratch: `${staged}.csv` });
          await rename(staged, file);
          out.push({ table: q.table.name, path: file, rows: written.reduce((n, f) => n + f.rows, 0) });
        } finally {
          await rm(staged, { force: true });
        }
      }
    });
  } finally {
    lanes.close();
    await session.end({ timeout: 5 });
  }
  return out;
}
