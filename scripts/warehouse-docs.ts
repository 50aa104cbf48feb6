// `npm run docs:warehouse`: writes the per-table reference of docs/warehouse.md (between its
// generated:tables markers) from src/schema/warehouse/descriptions/; the rest of the file is left
// as written. `--check` writes nothing and exits 1 when the file is not up to date.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { warehouseCatalog } from '../src/store/schema/catalog.ts';
import { renderBlocks, spliceReference } from '../src/store/schema/reference-doc.ts';

const file = fileURLToPath(new URL('../docs/warehouse.md', import.meta.url));
const catalog = warehouseCatalog();
for (const problem of catalog.problems) console.error(`warning: ${problem}`);
const before = readFileSync(file, 'utf8');
const after = spliceReference(before, renderBlocks(catalog));
if (process.argv.includes('--check')) {
  if (after !== before) {
    console.error('docs/warehouse.md is not up to date: run npm run docs:warehouse');
    process.exit(1);
  }
  console.log('docs/warehouse.md is up to date');
} else if (after === before) {
  console.log('docs/warehouse.md was up to date');
} else {
  writeFileSync(file, after);
  console.log('docs/warehouse.md: reference written');
}
