// DuckDB for duckdb.py, the stand-in for DuckDB's Python package: one SQL statement per line of
// stdin ({"sql": "..."}), one reply per line of stdout: the columns' names and DuckDB types and
// the rows as JSON (DECIMAL, BIGINT, dates and timestamps as DuckDB's text), or the error.
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
for await (const line of createInterface({ input: process.stdin })) {
  let reply;
  try {
    const result = await connection.runAndReadAll(JSON.parse(line).sql);
    reply = { names: result.columnNames(), types: result.columnTypes().map(String), rows: result.getRowsJson() };
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
connection.closeSync();
