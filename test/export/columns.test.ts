// Pure: each column's way out (src/export/columns.ts), and the days an export writes (day-changes.ts).
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { decimalCast, decimalFit, exportColumn } from '../../src/export/columns.ts';
import { planDays } from '../../src/export/day-changes.ts';

describe('decimalFit', () => {
  it.each([
    [{ maxScale: 12, maxIntegerDigits: 26, special: 0 }, { precision: 38, scale: 12, asString: false }],
    [{ maxScale: 12, maxIntegerDigits: 27, special: 0 }, { precision: 38, scale: 0, asString: true }],
    [{ maxScale: 38, maxIntegerDigits: 0, special: 0 }, { precision: 38, scale: 38, asString: false }],
    [{ maxScale: 2, maxIntegerDigits: 3, special: 1 }, { precision: 38, scale: 0, asString: true }],
    [{ maxScale: null, maxIntegerDigits: null, special: 0 }, { precision: 38, scale: 0, asString: false }],
  ])('%j -> %j', (stats, fit) => expect(decimalFit(stats)).toEqual(fit));
});

describe('exportColumn', () => {
  it('maps each Postgres type, never to a float', () => {
    const of = (type: string) => exportColumn({ name: 'c', type, comment: null }, { maxScale: 4, maxIntegerDigits: 5, special: 0 }).type;
    expect(['numeric', 'timestamp with time zone', 'date', 'boolean', 'bigint', 'integer', 'uuid', 'jsonb', 'text', 'text[]'].map(of)).toEqual([
      'DECIMAL(38,4)',
      'TIMESTAMPTZ',
      'DATE',
      'BOOLEAN',
      'BIGINT',
      'INTEGER',
      'UUID',
      'VARCHAR',
      'VARCHAR',
      'VARCHAR[]',
    ]);
  });
});

describe('decimalCast', () => {
  it("equals DuckDB's own cast of the text, digit for digit, at every scale", async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    try {
      const values = ['0', '-0', '5', '-5', '0.5', '-0.000000000001', '123.45', '99999999999999999999999999.999999999999', '-12345678901234567890123456.123456789012', '1.10'];
      for (const scale of [0, 1, 2, 12, 38]) {
        const fits = values.filter((v) => {
          const [i, f = ''] = v.replace('-', '').split('.');
          return f.length <= scale && (i === '0' ? 0 : i!.length) + scale <= 38;
        });
        for (const v of fits) {
          const r = await c.runAndReadAll(`select (${decimalCast(`'${v}'`, scale)})::VARCHAR as fast, cast('${v}' as DECIMAL(38,${scale}))::VARCHAR as own, typeof(${decimalCast(`'${v}'`, scale)}) as t`);
          const [row] = r.getRowObjectsJson() as { fast: string; own: string; t: string }[];
          expect(row, `${v} at scale ${scale}`).toEqual({ fast: row!.own, own: row!.own, t: `DECIMAL(38,${scale})` });
        }
      }
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  });
});

describe('planDays', () => {
  const now = [
    { day: '2024-01-01', rows: 3, written: false },
    { day: '2024-01-02', rows: 3, written: true },
    { day: '2024-01-03', rows: 2, written: false },
    { day: '2024-01-04', rows: 3, written: false },
  ];
  const exported = new Map([
    ['2024-01-01', 3],
    ['2024-01-02', 3],
    ['2024-01-03', 3],
    ['2023-12-31', 3],
  ]);
  it('writes new days, days written since and days whose count moved; removes days the archive lost', () => {
    expect(planDays(now, exported, null, false)).toEqual({ write: ['2024-01-02', '2024-01-03', '2024-01-04'], remove: ['2023-12-31'] });
  });
  it('from --since on only; everything when asked', () => {
    expect(planDays(now, exported, '2024-01-03', false)).toEqual({ write: ['2024-01-03', '2024-01-04'], remove: [] });
    expect(planDays(now, exported, null, true).write).toHaveLength(4);
  });
});
