// The README's configuration table is documentation users rely on: it must list exactly
// the variables the config schema reads, with the same defaults.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '../../src/lib/variables.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

function readmeTable(): Map<string, string> {
  const section = readme.split('## Configuration')[1]?.split('\n## ')[0] ?? '';
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\|\s*`([A-Z0-9_]+)`\s*\|\s*([^|]*)\|/.exec(line);
    if (m) rows.set(m[1]!, m[2]!.trim().replace(/^`|`$/g, ''));
  }
  return rows;
}

describe('README configuration table', () => {
  it('lists exactly the variables of the config schema, with their defaults', () => {
    const table = readmeTable();
    expect([...table.keys()].sort()).toEqual(Object.keys(VARIABLES).sort());
    for (const [name, doc] of Object.entries(VARIABLES)) {
      expect(table.get(name), name).toBe('default' in doc ? doc.default : '');
    }
  });
});
