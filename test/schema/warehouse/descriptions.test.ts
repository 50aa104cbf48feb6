// The warehouse describes itself, from one source (src/schema/warehouse/descriptions/): every
// declared column has a description, docs/warehouse.md's reference is what the descriptions
// make now, and after migrate every schema, table, column, view and function of the tesync
// schemas has a comment, on Postgres and on the embedded server, which psql shows.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERY_ROW, SCHEMAS, type SchemaDescription } from '../../../src/schema/warehouse/descriptions/index.ts';
import { warehouseCatalog } from '../../../src/store/schema/catalog.ts';
import { applyComments, commentTargets, plainText } from '../../../src/store/schema/comments.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { blockInDoc, conventionsInDoc, renderBlocks } from '../../../src/store/schema/reference-doc.ts';
import { embeddedFolder, type TempFolder } from '../../helpers/embedded.ts';
import { requireBinary } from '../../helpers/own-servers.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const run = promisify(execFile);
const docFile = new URL('../../../docs/warehouse.md', import.meta.url);

// Every object of every tesync schema (all but the system's, `public` and drizzle's
// bookkeeping) without a comment in pg_description, named.
const UNDESCRIBED = sql.raw(`
with s as (
  select oid, nspname from pg_namespace
  where nspname not in ('public', 'drizzle', 'information_schema') and nspname not like 'pg\\_%'
), rel as (
  select c.oid, s.nspname, c.relname, c.relkind from pg_class c join s on s.oid = c.relnamespace
  where c.relkind in ('r', 'p', 'v', 'm', 'f')
)
select 'schema ' || s.nspname as object from s
  left join pg_description d on d.objoid = s.oid and d.classoid = 'pg_namespace'::regclass and d.objsubid = 0
  where coalesce(d.description, '') = ''
union all
select case rel.relkind when 'v' then 'view ' when 'm' then 'materialized view ' else 'table ' end || rel.nspname || '.' || rel.relname from rel
  left join pg_description d on d.objoid = rel.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
  where coalesce(d.description, '') = ''
union all
select 'column ' || rel.nspname || '.' || rel.relname || '.' || a.attname from rel
  join pg_attribute a on a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped
  left join pg_description d on d.objoid = rel.oid and d.classoid = 'pg_class'::regclass and d.objsubid = a.attnum
  where coalesce(d.description, '') = ''
union all
select 'function ' || p.oid::regprocedure::text from pg_proc p join s on s.oid = p.pronamespace
  left join pg_description d on d.objoid = p.oid and d.classoid = 'pg_proc'::regclass and d.objsubid = 0
  where coalesce(d.description, '') = ''
order by 1`);

// What the check above covered, so that an empty answer cannot come from finding nothing.
const COVERED = sql.raw(`
select n.nspname as schema,
  (select count(*) from pg_class c where c.relnamespace = n.oid and c.relkind in ('r', 'p', 'v', 'm', 'f'))::int as relations,
  (select count(*) from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where c.relnamespace = n.oid and c.relkind in ('r', 'p', 'v', 'm', 'f'))::int as columns,
  (select count(*) from pg_proc p where p.pronamespace = n.oid)::int as functions
from pg_namespace n
where n.nspname not in ('public', 'drizzle', 'information_schema') and n.nspname not like 'pg\\_%' and n.nspname <> 'pg_toast'
order by 1`);

async function undescribed(w: Warehouse): Promise<string[]> {
  return (await w.query<{ object: string }>(UNDESCRIBED)).map((r) => r.object);
}

async function covered(w: Warehouse) {
  return w.query<{ schema: string; relations: number; columns: number; functions: number }>(COVERED);
}

describe('the descriptions', () => {
  it('describe every declared table and column, and nothing that is not declared', () => {
    expect(warehouseCatalog().problems).toEqual([]);
  });

  it('name a declared column left without a description, and a description of no column', () => {
    const app = SCHEMAS.find((s) => s.name === 'app')!;
    const { symbol: _dropped, ...columns } = app.tables!.tokens!.columns;
    const altered: SchemaDescription = {
      ...app,
      tables: { ...app.tables, tokens: { ...app.tables!.tokens!, columns: { ...columns, no_such_column: 'described, never declared' } } },
    };
    const problems = warehouseCatalog(SCHEMAS.map((s) => (s === app ? altered : s))).problems;
    expect(problems).toContain('app.tokens.symbol: no description (add it to src/schema/warehouse/descriptions/app.ts)');
    expect(problems).toContain('app.tokens_history.symbol: no description (add it to src/schema/warehouse/descriptions/app.ts)');
    expect(problems).toContain('app.tokens.no_such_column: described, but app.tokens declares no such column');
  });

  it('give every comment some text, backticks left out', () => {
    const targets = commentTargets();
    expect(targets.length).toBeGreaterThan(900);
    expect(targets.filter((t) => !t.text.trim() || t.text.includes('`')).map((t) => `${t.schema}.${t.name ?? ''}.${t.column ?? ''}`)).toEqual([]);
  });
});

describe('docs/warehouse.md', () => {
  const doc = readFileSync(docFile, 'utf8');

  it.each(renderBlocks().map((b) => [b.start, b] as const))('%s holds what the descriptions make now', (_start, block) => {
    const inDoc = blockInDoc(doc, block);
    expect(inDoc, `docs/warehouse.md lacks ${block.start} ... ${block.end}`).toBeDefined();
    expect(inDoc, 'docs/warehouse.md is not up to date: run npm run docs:warehouse').toBe(block.text);
  });

  it('says in its conventions what the descriptions say of the columns every row carries', () => {
    const conventions = conventionsInDoc(doc);
    expect(Object.fromEntries(Object.keys(EVERY_ROW).map((c) => [c, conventions[c]]))).toEqual(EVERY_ROW);
  });
});

describe('comments after migrate, on Postgres', () => {
  // Migrated by its migrate() from nothing, as a first sync migrates one.
  const w = useTestWarehouse({ empty: true });

  it('every schema, table, column, view and function of the tesync schemas has one', async () => {
    expect(await undescribed(w)).toEqual([]);
    const schemas = await covered(w);
    expect(schemas.map((s) => s.schema)).toEqual(expect.arrayContaining(['app', 'gateway', 'sync']));
    for (const s of schemas) expect(s.relations, s.schema).toBeGreaterThan(0);
    expect(schemas.reduce((n, s) => n + s.columns, 0)).toBeGreaterThan(900);
    expect(schemas.find((s) => s.schema === 'app')!.functions).toBeGreaterThan(10);
  });

  it('every described object exists, and a migrate of a warehouse in step writes nothing, in one query', async () => {
    const client = postgres(w.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const again = await applyComments(client);
      expect(again.missing).toEqual([]);
      expect(again.written).toBe(0);
      expect(again.unchanged).toBe(commentTargets().length);
      // One query, whatever it takes on a loaded machine (timing targets live in the bench).
      console.log(`comments in step: ${again.unchanged} compared in ${again.ms.toFixed(1)} ms`);

      // A wording changed in the code: only that comment is written again.
      await client.unsafe(`comment on column app.tokens.slug is 'an older wording'`);
      const changed = await applyComments(client);
      expect({ written: changed.written, missing: changed.missing }).toEqual({ written: 1, missing: [] });
      const [row] = await client<{ d: string }[]>`select col_description('app.tokens'::regclass, 1) as d`;
      expect(row!.d).toBe(plainText(SCHEMAS.find((s) => s.name === 'app')!.tables!.tokens!.columns.slug!));
    } finally {
      await client.end();
    }
    const started = performance.now();
    await w.migrate();
    console.log(`migrate of a migrated warehouse: ${(performance.now() - started).toFixed(1)} ms`);
  });

  it("psql's \\d+ shows them", async () => {
    const psql = requireBinary('psql', 'apt-get install postgresql-client');
    const show = async (command: string) => (await run(psql, ['-X', '-d', w.databaseUrl, '-c', command], { env: { ...process.env, PAGER: '' } })).stdout;
    const tokens = await show('\\d+ app.tokens');
    expect(tokens).toContain('the token list entry as sent');
    expect(tokens).toContain(plainText(EVERY_ROW.raw_response_id!));
    expect(await show('\\dt+ app.tokens')).toContain('Tokens and what the API covers for them.');
    expect(await show('\\dt+ app.tokens_history')).toContain('Earlier versions of app.tokens');
    expect(await show('\\df+ app.tokens_as_of')).toContain("app.tokens's rows as tesync knew them");
    expect(await show('\\dn+ gateway')).toContain('The gateway API (/v1)');
  });
});

describe('comments after migrate, on the embedded server', () => {
  let folder: TempFolder;
  beforeAll(async () => {
    folder = await embeddedFolder('tesync-descriptions');
  });
  afterAll(async () => {
    await folder?.cleanup();
  });

  it('every schema, table, column, view and function of the tesync schemas has one', async () => {
    const w = await openWarehouse({ dataDir: folder.dir });
    try {
      await w.migrate();
      expect(await undescribed(w)).toEqual([]);
      expect((await covered(w)).map((s) => s.schema)).toEqual(expect.arrayContaining(['app', 'gateway', 'sync']));
    } finally {
      await w.close();
    }
  });
});
