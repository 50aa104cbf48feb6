// The timed reads of the as-of leg (as-of-leg.ts): per versioned table, a plain read of `T`
// against `T_as_of(at)` at three instants, for the whole table and for one key. Each read is
// timed as a client sees it (sent, planned, run, every row received): the median of several
// runs after one to warm the cache.
import type { Sql } from 'postgres';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { rulesOf } from '../../src/schema/warehouse/table-rules.ts';
import { quoteIdentifier as q, quoteLiteral as lit } from '../../src/store/quote.ts';

/** Tables above this many rows are read whole as `count(*)`, which no client would fetch row by row. */
export const FETCH_WHOLE_LIMIT = 200_000;

export interface Instant {
  label: 'first year' | 'middle' | 'now';
  at: string;
}

export interface ReadPair {
  plainMs: number;
  /** Per instant: the as-of read's time and its ratio to the plain read's. */
  asOf: { label: Instant['label']; ms: number; rows: number; ratio: number }[];
}

export interface TableReads {
  table: string;
  current: number;
  history: number;
  /** 'rows': every row fetched; 'count': count(*) (see FETCH_WHOLE_LIMIT). */
  wholeAs: 'rows' | 'count';
  whole: ReadPair;
  /** The rows of one value of the key's first column (one token, or one catalog entry), planned at each read. */
  oneKey: ReadPair & { key: string; value: string };
  /** The same, as a prepared statement: its plan made once, as drivers that prepare do. */
  oneKeyPrepared: ReadPair;
}


/** Runs of a read under 5 ms, for their median: a read that short is at the mercy of the scheduler. */
export const QUICK_RUNS = 31;

/**
 * The median time of `runs` runs of `text` (`quickRuns` when it is quick; after one
 * unmeasured), and the rows it returned. `prepare`: as a prepared statement (PREPARE once,
 * then EXECUTE), its plan made once, as drivers that prepare do.
 */
export async function timed(db: Sql, text: string, runs = 5, prepare = false, quickRuns = QUICK_RUNS): Promise<{ ms: number; rows: number }> {
  const name = `as_of_read_${++prepared}`;
  if (prepare) await db.unsafe(`prepare ${name} as ${text}`);
  const read = prepare ? `execute ${name}` : text;
  try {
    const t = performance.now();
    let rows = (await db.unsafe(read)).length;
    // A read of a few milliseconds is at the mercy of the scheduler: more runs for their median.
    const n = performance.now() - t < 5 ? Math.max(runs, quickRuns) : runs;
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = await db.unsafe(read);
      times.push(performance.now() - t0);
      rows = r.length === 1 && 'n' in r[0]! ? Number(r[0]!.n) : r.length;
    }
    times.sort((a, b) => a - b);
    return { ms: times[Math.floor(times.length / 2)]!, rows };
  } finally {
    if (prepare) await db.unsafe(`deallocate ${name}`);
  }
}
let prepared = 0;

/** An instant in the first year of the versions, one in the middle, and now. */
export async function instants(db: Sql): Promise<Instant[]> {
  const [r] = await db<{ first: string; middle: string; now: string }[]>`
    with span as (select min(known_from) as first, sync.server_clock() as now from app.screener_rows_history)
    select (first + (now - first) / 6)::text as first, (first + (now - first) / 2)::text as middle, now::text as now from span`;
  return [
    { label: 'first year', at: r!.first },
    { label: 'middle', at: r!.middle },
    { label: 'now', at: r!.now },
  ];
}

/** Plain and as-of reads of every versioned table. */
export async function tableReads(db: Sql, at: readonly Instant[], runs = 5, log: (line: string) => void = () => {}, quickRuns = QUICK_RUNS): Promise<TableReads[]> {
  const out: TableReads[] = [];
  for (const table of VERSIONED) {
    const c = getTableConfig(table);
    const name = `${c.schema}.${c.name}`;
    const plain = `${q(c.schema!)}.${q(c.name)}`;
    const asOf = (instant: string) => `${q(c.schema!)}.${q(`${c.name}_as_of`)}(${lit(instant)})`;
    const [n] = await db.unsafe<{ current: string; history: string }[]>(
      `select (select count(*) from ${plain})::text as current, (select count(*) from ${q(c.schema!)}.${q(`${c.name}_history`)})::text as history`,
    );
    const current = Number(n!.current);
    const wholeAs = current > FETCH_WHOLE_LIMIT ? 'count' : 'rows';
    const whole = (from: string) => (wholeAs === 'count' ? `select count(*) as n from ${from}` : `select * from ${from}`);
    const key = rulesOf(table).key[0]!.name;
    const [v] = await db.unsafe<{ v: string }[]>(`select ${q(key)}::text as v from ${plain} order by 1 limit 1`);
    const value = v?.v ?? '';
    const oneKey = (from: string) => `select * from ${from} where ${q(key)} = ${lit(value)}`;
    const pair = async (read: (from: string) => string, prepare = false): Promise<ReadPair> => {
      const p = await timed(db, read(plain), runs, prepare, quickRuns);
      const asOfReads = [];
      for (const i of at) {
        const r = await timed(db, read(asOf(i.at)), runs, prepare, quickRuns);
        asOfReads.push({ label: i.label, ms: r.ms, rows: r.rows, ratio: r.ms / Math.max(p.ms, 0.001) });
      }
      return { plainMs: p.ms, asOf: asOfReads };
    };
    const w = await pair(whole);
    const k = await pair(oneKey);
    const kp = await pair(oneKey, true);
    out.push({ table: name, current, history: Number(n!.history), wholeAs, whole: w, oneKey: { ...k, key, value }, oneKeyPrepared: kp });
    log(`as-of: ${name}: whole ${w.plainMs.toFixed(2)} ms, as of ${w.asOf.map((a) => a.ms.toFixed(2)).join('/')}; one key ${k.plainMs.toFixed(2)} ms, as of ${k.asOf.map((a) => a.ms.toFixed(2)).join('/')}`);
  }
  return out;
}
