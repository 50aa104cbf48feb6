// The export's writes: DuckDB (in memory, nothing downloaded) reads the CSV Postgres wrote,
// every column as text, casts each to its Parquet type (columns.ts) and writes zstd Parquet,
// Hive-partitioned for the daily archives. Comments go into the files' key-value metadata.
//
// A writer is one DuckDB instance on one thread, and the export runs two of them side by side
// (lanes.ts). On one thread, rows sorted by day reach the partitioned writer in order, so a
// day is one file; on two, each thread opened its own file for the days it saw, and a day's
// partition was often two files. Each file costs some 3 ms whatever its size, so one file a
// day is also the cheaper layout (docs/performance.md, "Export").
import { stat } from 'node:fs/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { ExportColumn } from './columns.ts';
import { quoteIdent } from './columns.ts';

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

export interface ParquetTarget {
  /** A file, or with `partitionBy` the directory the partitions go under. */
  path: string;
  partitionBy?: string;
  /** Key-value metadata of every file written. */
  metadata: Record<string, string>;
}

/** A file written, as DuckDB counted it. */
export interface WrittenFile {
  path: string;
  rows: number;
}

/**
 * DuckDB's own lines are at most 2 MiB unless told, and it reads through a buffer 16 times a
 * line: asked for the longest line a value could make (a gigabyte), one reader reserved 15 GiB.
 * A CSV's longest line is measured as it is written (pg-read.ts), and the limit is set from it.
 */
const DEFAULT_LINE_BYTES = 2 * 1024 * 1024;

export class ParquetWriter {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<ParquetWriter> {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    // Timestamps are written as UTC instants; nothing is fetched from the network.
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run('SET autoinstall_known_extensions = false');
    await connection.run('SET autoload_known_extensions = false');
    return new ParquetWriter(instance, connection);
  }

  /**
   * Writes the CSV `csv` (Postgres' COPY of `columns`, whose longest line is `longestLine`
   * bytes) to `target`; returns the files written with their rows.
   */
  async write(csv: string, columns: readonly ExportColumn[], longestLine: number, target: ParquetTarget): Promise<WrittenFile[]> {
    try {
      return await this.copy(csv, columns, Math.max(DEFAULT_LINE_BYTES, longestLine + 1), target);
    } catch (err) {
      // A row is longer than its longest line when a value holds a line break: read again
      // with room for the whole file as one row.
      if (!/maximum line size/i.test(String(err))) throw err;
      return this.copy(csv, columns, (await stat(csv)).size + 1, target);
    }
  }

  private async copy(csv: string, columns: readonly ExportColumn[], lineBytes: number, target: ParquetTarget): Promise<WrittenFile[]> {
    const names = `{${columns.map((c) => `${literal(c.name)}: 'VARCHAR'`).join(', ')}}`;
    const source = `read_csv(${literal(csv)}, header = false, columns = ${names}, quote = '"', escape = '"', nullstr = '', allow_quoted_nulls = false, auto_detect = false, max_line_size = ${lineBytes})`;
    const order = target.partitionBy ? ` order by ${quoteIdent(target.partitionBy)}` : '';
    const select = `select ${columns.map((c) => `${c.cast} as ${quoteIdent(c.name)}`).join(', ')} from ${source}${order}`;
    const kv = Object.entries(target.metadata).map(([k, v]) => `${quoteIdent(k)}: ${literal(v)}`);
    const options = [
      'format parquet',
      'compression zstd',
      'return_stats true',
      ...(target.partitionBy ? [`partition_by (${quoteIdent(target.partitionBy)})`, 'overwrite_or_ignore'] : []),
      ...(kv.length > 0 ? [`kv_metadata {${kv.join(', ')}}`] : []),
    ];
    const r = await this.connection.runAndReadAll(`copy (${select}) to ${literal(target.path)} (${options.join(', ')})`);
    const at = (name: string) => r.columnNames().indexOf(name);
    const [file, count] = [at('filename'), at('count')];
    return r.getRows().map((row) => ({ path: String(row[file]), rows: Number(row[count]) }));
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
