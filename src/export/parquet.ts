// The export's writes: DuckDB (in memory, nothing downloaded) reads the CSV Postgres wrote,
// every column as text, casts each to its Parquet type (columns.ts) and writes zstd Parquet,
// Hive-partitioned for the daily archives. Comments go into the files' key-value metadata.
//
// A writer is one DuckDB instance on one thread, and the export runs two of them side by side
// (lanes.ts). On one thread, rows sorted by day reach the partitioned writer in order, so a
// day is one file; on two, each thread opened its own file for the days it saw, and a day's
// partition was often two files. Each file costs some 3 ms whatever its size, so one file a
// day is also the cheaper layout (docs/performance.md, "Export").
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { ExportColumn } from './columns.ts';
import { quoteIdent } from './columns.ts';
import { CSV } from './pg-read.ts';

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
 * Rows are read at this limit as they stream in; a longer row fails the read (LineTooLong), and
 * transfer.ts reads it again from a file whose longest line it measured.
 */
export const DEFAULT_LINE_BYTES = 2 * 1024 * 1024;

/** A row longer than the reader's line limit. */
export class LineTooLong extends Error {
  override readonly name = 'LineTooLong';
}

export interface WriteOptions {
  /** The reader's line limit (default DEFAULT_LINE_BYTES). */
  lineBytes?: number;
  /** The rows come sorted by `target.partitionBy` (Postgres sorted them): DuckDB keeps their order instead of sorting them again. */
  sorted?: boolean;
}

export class ParquetWriter {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<ParquetWriter> {
    // Loaded when a file is written: DuckDB's 183 files and native addon cost every process that
    // imports them (every worker, which may run an export) about 0.4 s of CPU at start.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    // Timestamps are written as UTC instants; nothing is fetched from the network.
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run('SET autoinstall_known_extensions = false');
    await connection.run('SET autoload_known_extensions = false');
    return new ParquetWriter(instance, connection);
  }

  /**
   * Writes the CSV at `csv` (Postgres' COPY of `columns`: a file, or a FIFO Postgres is still
   * printing into) to `target`; returns the files written with their rows.
   */
  async write(csv: string, columns: readonly ExportColumn[], target: ParquetTarget, o: WriteOptions = {}): Promise<WrittenFile[]> {
    const names = `{${columns.map((c) => `${literal(c.name)}: 'VARCHAR'`).join(', ')}}`;
    const source = `read_csv(${literal(csv)}, header = false, columns = ${names}, delim = ${literal(CSV.delimiter)}, quote = ${literal(CSV.quote)}, escape = ${literal(CSV.quote)}, nullstr = '', allow_quoted_nulls = false, auto_detect = false, max_line_size = ${o.lineBytes ?? DEFAULT_LINE_BYTES})`;
    // One thread keeps the rows in the order they come: sorted by day, each day is one file.
    const order = target.partitionBy && !o.sorted ? ` order by ${quoteIdent(target.partitionBy)}` : '';
    const select = `select ${columns.map((c) => `${c.cast} as ${quoteIdent(c.name)}`).join(', ')} from ${source}${order}`;
    const kv = Object.entries(target.metadata).map(([k, v]) => `${quoteIdent(k)}: ${literal(v)}`);
    const options = [
      'format parquet',
      'compression zstd',
      'return_stats true',
      ...(target.partitionBy ? [`partition_by (${quoteIdent(target.partitionBy)})`, 'overwrite_or_ignore'] : []),
      ...(kv.length > 0 ? [`kv_metadata {${kv.join(', ')}}`] : []),
    ];
    let r;
    try {
      r = await this.connection.runAndReadAll(`copy (${select}) to ${literal(target.path)} (${options.join(', ')})`);
    } catch (err) {
      if (/maximum line size/i.test(String(err))) throw new LineTooLong(String(err));
      throw err;
    }
    const at = (name: string) => r.columnNames().indexOf(name);
    const [file, count] = [at('filename'), at('count')];
    return r.getRows().map((row) => ({ path: String(row[file]), rows: Number(row[count]) }));
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
