// The demo's table of example rows stays aligned whatever the names: a CJK character or an
// emoji takes two columns on a terminal, a combining mark none.
import { describe, expect, it } from 'vitest';
import { formatRows } from '../../src/cli/examples.ts';
import { displayWidth } from '../../src/lib/display-width.ts';

describe('formatRows', () => {
  it('aligns columns by display width: CJK, emoji (ZWJ sequences, flags), combining marks', () => {
    const rows = [
      { token_slug: 'aurora', display_name: 'Aurora', multiple_30d: '60.99' },
      { token_slug: 'nihon', display_name: '日本トークン', multiple_30d: '12.5' },
      { token_slug: 'rocket', display_name: '🚀 Moon 👩‍💻', multiple_30d: '7' },
      { token_slug: 'flags', display_name: '🇯🇵🇺🇸 Pair', multiple_30d: '1' },
      { token_slug: 'cafe', display_name: 'Cafe\u0301 Coin', multiple_30d: '3' },
      { token_slug: 'seoul', display_name: '서울', multiple_30d: null },
    ];
    const table = formatRows(rows);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(2 + rows.length);
    const [header, rule] = lines as [string, string];
    const nameAt = header.indexOf('display_name');
    const multipleAt = header.indexOf('multiple_30d');
    // Every row's third cell starts at the column where its header does.
    for (const [i, row] of rows.entries()) {
      const line = lines[i + 2]!;
      const name = row.display_name;
      expect(displayWidth(line.slice(0, line.indexOf(name))), line).toBe(nameAt);
      if (row.multiple_30d !== null) {
        expect(displayWidth(line.slice(0, line.lastIndexOf(row.multiple_30d))), line).toBe(multipleAt);
      }
    }
    // The rule under each header is as wide as its widest cell, in columns.
    const rules = rule.split('  ').map((r) => r.length);
    expect(rules).toEqual([10, Math.max(...rows.map((r) => displayWidth(r.display_name))), 12]);
    expect(rules[1]).toBe(12); // 日本トークン
    expect([nameAt, multipleAt]).toEqual([12, 26]);
    expect(lines[3]).toBe('nihon       日本トークン  12.5');
    expect(lines[4]).toBe('rocket      🚀 Moon 👩‍💻    7');
  });

  it('a value with a newline, a tab or an escape stays on its row', () => {
    const table = formatRows([
      { name: 'two\nlines', note: 'a\ttab' },
      { name: 'esc\u001b[31mred', note: 'ok' },
    ]);
    expect(table.split('\n')).toHaveLength(5);
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(table).toContain('two lines');
  });

  it('no rows', () => {
    expect(formatRows([])).toBe('(no rows)\n');
  });
});
