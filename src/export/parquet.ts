// The export's writes: DuckDB (in memory, nothing downloaded) reads the CSV Postgres wrote,
// every column as text, casts each to its Parquet type (columns.ts) and writes zstd Parquet,
// Hive-partitioned for the daily archives. Comments go into the files' key-value metadata.
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

export class ParquetWriter {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<ParquetWriter> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    // Timestamps are written as UTC instants; nothing is fetched from the network.
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run('SET autoinstall_known_extensions = false');
    await connection.run('SET autoload_known_extensions = false');
    return new ParquetWriter(instance, connection);
  }

  /** Writes the CSV `csv` (Postgres' COPY of `columns`) to `target`; returns the rows written. */
  async write(csv: string, columns: readonly ExportColumn[], target: ParquetTarget): Promise<number> {
    const names = `{${columns.map((c) => `${literal(c.name)}: 'VARCHAR'`).join(', ')}}`;
    const source = `read_csv(${literal(csv)}, header = false, columns = ${names}, quote = '"', escape = '"', nullstr = '', allow_quoted_nulls = false, auto_detect = false, max_line_size = 1000000000)`;
    const select = `select ${columns.map((c) => `${c.cast} as ${quoteIdent(c.name)}`).join(', ')} from ${source}`;
    const kv = Object.entries(target.metadata).map(([k, v]) => `${quoteIdent(k)}: ${literal(v)}`);
    const options = ['format parquet', 'compression zstd', ...(target.partitionBy ? [`partition_by (${quoteIdent(target.partitionBy)})`, 'overwrite_or_ignore'] : []), ...(kv.length > 0 ? [`kv_metadata {${kv.join(', ')}}`] : [])];
    const r = await this.connection.runAndReadAll(`copy (${select}) to ${literal(target.path)} (${options.join(', ')})`);
    return Number(r.getRows()[0]?.[0] ?? 0);
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
