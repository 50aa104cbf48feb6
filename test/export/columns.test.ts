// Pure: each column's way out (src/export/columns.ts), and the days an export writes (day-changes.ts).
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { decimalCast, decimalFit, exportColumn, inTypeWritten } from '../../src/export/columns.ts';
import { daysToWrite } from '../../src/export/day-changes.ts';

describe('decimalFit', () => {
  it.each([
    [{ maxScale: 12, maxIntegerDigits: 26, special: 0 }, { precision: 38, scale: 12, asString: false, integerDigits: 26 }],
    [{ maxScale: 12, maxIntegerDigits: 27, special: 0 }, { precision: 38, scale: 0, asString: true, integerDigits: 27 }],
    [{ maxScale: 38, maxIntegerDigits: 0, special: 0 }, { precision: 38, scale: 38, asString: false, integerDigits: 0 }],
    [{ maxScale: 2, maxIntegerDigits: 3, special: 1 }, { precision: 38, scale: 0, asString: true, integerDigits: 3 }],
    [{ maxScale: null, maxIntegerDigits: null, special: 0 }, { precision: 38, scale: 0, asString: false, integerDigits: 0 }],
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

describe('inTypeWritten', () => {
  const numeric = (maxScale: number, maxIntegerDigits: number, special = 0) => exportColumn({ name: 'v', type: 'numeric', comment: null }, { maxScale, maxIntegerDigits, special });
  const written = (type: string, scale?: number, asString?: boolean) => ({ sourceType: 'numeric', type, ...(scale === undefined ? {} : { scale }), ...(asString ? { asString } : {}) });

  it('keeps a type the days before were written in, when it holds the new values', () => {
    expect(inTypeWritten(numeric(4, 5), written('DECIMAL(38,4)', 4))?.type).toBe('DECIMAL(38,4)');
    // A smaller scale goes out at the larger one: the same digits, padded.
    const kept = inTypeWritten(numeric(2, 5), written('DECIMAL(38,9)', 9))!;
    expect(kept.type).toBe('DECIMAL(38,9)');
    expect(kept.cast).toBe(numeric(9, 5).cast);
    // Text holds any number.
    expect(inTypeWritten(numeric(2, 5), written('VARCHAR', 0, true))).toMatchObject({ type: 'VARCHAR', cast: '"v"', numeric: { asString: true } });
    expect(inTypeWritten(numeric(2, 5), undefined)?.type).toBe('DECIMAL(38,2)');
  });

  it('refuses a type that would not hold them: a larger scale, too many digits, text that was a decimal', () => {
    expect(inTypeWritten(numeric(6, 5), written('DECIMAL(38,4)', 4))).toBeNull();
    expect(inTypeWritten(numeric(2, 30), written('DECIMAL(38,9)', 9))).toBeNull();
    expect(inTypeWritten(numeric(2, 5, 1), written('DECIMAL(38,9)', 9))).toBeNull();
    expect(inTypeWritten(exportColumn({ name: 'v', type: 'text', comment: null }), written('DECIMAL(38,9)', 9))).toBeNull();
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

describe('daysToWrite', () => {
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
    expect(daysToWrite(now, exported, null, false)).toEqual({ write: ['2024-01-02', '2024-01-03', '2024-01-04'], remove: ['2023-12-31'] });
  });
  it('from --since on only; everything when asked', () => {
    expect(daysToWrite(now, exported, '2024-01-03', false)).toEqual({ write: ['2024-01-03', '2024-01-04'], remove: [] });
    expect(daysToWrite(now, exported, null, true).write).toHaveLength(4);
  });
});
