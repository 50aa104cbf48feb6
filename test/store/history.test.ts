// The point-in-time SQL (triggers, as-of functions) is generated from the declarations; the
// migrations must hold exactly what the generator makes (behaviour: point-in-time.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { historyMigration } from '../../src/store/history-sql.ts';

describe('point-in-time migrations', () => {
  it('the migrations hold what the generator makes of the declarations', () => {
    const dir = new URL('../../drizzle/', import.meta.url);
    // The last migration that (re)makes them: a change of a versioned table must be followed by one.
    const last = readdirSync(dir).filter((f) => f.endsWith('.sql') && readFileSync(new URL(f, dir), 'utf8').includes('"sync"."keep_version"')).sort().at(-1)!;
    expect(readFileSync(new URL(last, dir), 'utf8')).toBe(historyMigration());
  });
});
