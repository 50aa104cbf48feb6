// The write path against its floor: the rows a sync wrote, written again through tesync's
// upsertRows into an empty copy of the warehouse, and by a raw COPY into a plain copy of
// each table (same columns, same primary key) in the same Postgres, in the same run. Rows
// are read back one token at a time, the batches a handler writes, so memory stays bounded.
// The tables written through upsertRows are the migrated warehouse's own, with their history
// trigger (keep_version, after UPDATE or DELETE); the plain copies have none (`like` copies
// no trigger), as COPY is the floor.
import { asc, eq, getTableColumns, sql } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { chartPoints, metricHistory } from '../../src/schema/warehouse/app.ts';
import { gatewayChartPoints, gatewayTrendPoints } from '../../src/schema/warehouse/gateway.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { upsertRows } from '../../src/store/write/upsert.ts';

const TABLES: PgTable[] = [metricHistory, chartPoints, gatewayChartPoints, gatewayTrendPoints];

export interface WriteFigure {
  table: string;
  rows: number;
  /** upsertRows into an empty table, in one transaction per token (as a handler does). */
  upsertMs: number;
  /** The same rows again: every row a conflict, updated. */
  reupsertMs: number;
  /** COPY of the same rows into a plain table with the same primary key. */
  copyMs: number;
  /** Whether the table upsertRows wrote has its history trigger (keep_version). */
  historyTrigger: boolean;
}

export interface WriteFloor {
  tables: WriteFigure[];
  rows: number;
  upsertRowsPerSec: number;
  reupsertRowsPerSec: number;
  copyRowsPerSec: number;
}

/**
 * `source`: the synced warehouse; `target`: an empty, migrated one on the same server
 * (`targetUrl` its URL, for the COPY client). At most `maxRows` rows, whole tokens.
 */
export async function measureWriteFloor(source: Warehouse, target: Warehouse, targetUrl: string, maxRows: number): Promise<WriteFloor> {
  const copyClient = postgres(targetUrl, { max: 1, onnotice: () => {} });
  const figures: WriteFigure[] = [];
  try {
    await copyClient.unsafe('create schema if not exists bench_copy');
    const perTable = Math.ceil(maxRows / TABLES.length);
    for (const table of TABLES) figures.push(await measureTable(source, target, copyClient, table, perTable));
  } finally {
    await copyClient.end({ timeout: 5 });
  }
  const sum = (f: (w: WriteFigure) => number) => figures.reduce((a, w) => a + f(w), 0);
  const rows = sum((w) => w.rows);
  const perSec = (ms: number) => (ms > 0 ? (rows * 1000) / ms : 0);
  return { tables: figures, rows, upsertRowsPerSec: perSec(sum((w) => w.upsertMs)), reupsertRowsPerSec: perSec(sum((w) => w.reupsertMs)), copyRowsPerSec: perSec(sum((w) => w.copyMs)) };
}

async function measureTable(source: Warehouse, target: Warehouse, copyClient: postgres.Sql, table: PgTable, maxRows: number): Promise<WriteFigure> {
  const config = getTableConfig(table);
  const name = `${config.schema}.${config.name}`;
  const copyName = `bench_copy.${config.schema}_${config.name}`;
  await copyClient.unsafe(`create table ${copyName} (like ${name} including all)`);
  const columns = Object.entries(getTableColumns(table) as Record<string, PgColumn>);
  const slugColumn = (getTableColumns(table) as Record<string, PgColumn>).tokenSlug!;
  const slugs = await source.db.selectDistinct({ slug: slugColumn }).from(table).orderBy(asc(slugColumn));
  const [trigger] = await target.query<{ n: string }>(sql`select count(*)::text as n from pg_trigger where tgrelid = ${name}::regclass and tgname = 'keep_version' and tgenabled <> 'D'`);
  const figure: WriteFigure = { table: name, rows: 0, upsertMs: 0, reupsertMs: 0, copyMs: 0, historyTrigger: Number(trigger?.n ?? 0) > 0 };
  for (const { slug } of slugs) {
    if (figure.rows >= maxRows) break;
    const rows = (await source.db.select().from(table).where(eq(slugColumn, slug as string))) as Record<string, unknown>[];
    figure.rows += rows.length;
    let t = performance.now();
    await target.db.transaction((tx) => upsertRows(tx, table, rows, { batchSize: 2000 }));
    figure.upsertMs += performance.now() - t;
    t = performance.now();
    await target.db.transaction((tx) => upsertRows(tx, table, rows, { batchSize: 2000 }));
    figure.reupsertMs += performance.now() - t;
    t = performance.now();
    await copyRows(copyClient, copyName, columns, rows);
    figure.copyMs += performance.now() - t;
  }
  return figure;
}

/**
 * COPY in text format: the values' text forms, tab-separated, `\N` for null. Each column
 * remembers its last value, as upsertRows does, so neither side pays twice for shared objects.
 */
async function copyRows(client: postgres.Sql, into: string, columns: [string, PgColumn][], rows: readonly Record<string, unknown>[]): Promise<void> {
  const names = columns.map(([, c]) => `"${c.name}"`).join(', ');
  const stream = await client.unsafe(`copy ${into} (${names}) from stdin`).writable();
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', reject);
  });
  const encoders = columns.map(([prop, c]) => {
    let lastIn: unknown = undefined;
    let lastOut = '\\N';
    return (row: Record<string, unknown>) => {
      const v = row[prop];
      if (v === null || v === undefined) return '\\N';
      if (v !== lastIn) {
        lastIn = v;
        lastOut = copyText(c, v);
      }
      return lastOut;
    };
  });
  const CHUNK = 2000;
  for (let i = 0; i < rows.length; i += CHUNK) {
    let text = '';
    const end = Math.min(rows.length, i + CHUNK);
    for (let j = i; j < end; j++) {
      const row = rows[j]!;
      let line = encoders[0]!(row);
      for (let k = 1; k < encoders.length; k++) line += `\t${encoders[k]!(row)}`;
      text += `${line}\n`;
    }
    if (!stream.write(text)) await new Promise((r) => stream.once('drain', r));
  }
  stream.end();
  await done;
}

// COPY's text format: a backslash, tab, newline or carriage return inside a value is escaped.
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyText(column: PgColumn, v: unknown): string {
  const d = column.mapToDriverValue(v);
  const t = typeof d === 'string' ? d : d instanceof Date ? d.toISOString() : String(d);
  return t.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!);
}
