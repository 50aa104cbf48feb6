// docs/adding-a-resource.md stays true: the files it says adding a resource touches are the
// ones its walkthrough adds to (in a copy), and nothing else is edited. Its table declaration,
// description and job type-check as if they were in place; the table is described with the
// rest of the warehouse, created from the declaration, and the job, run through the one
// lifecycle against the simulator, mirrors the catalog the simulator served; the table is
// versioned as it stands, by the SQL files migrate() applies, `analytics.data_age` reports it
// under the group its declaration names, and the set it declares closes a group no longer listed.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveJob, runJob } from '../../src/engine/job/lifecycle.ts';
import type { JobDefinition } from '../../src/engine/kit/types.ts';
import { catalogOf, resourceExports } from '../../src/resources/index.ts';
import { settingsFrom } from '../../src/cli/sync-session.ts';
import { InProcessBudget } from '../../src/upstream/budget/budget.ts';
import { createUpstream } from '../../src/upstream/client.ts';
import { WarehouseRecorder } from '../../src/store/books/request-log.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import * as gateway from '../../src/schema/warehouse/gateway.ts';
import { versionedTables } from '../../src/schema/warehouse/history.ts';
import { applySqlFiles, SQL_FILES } from '../../src/store/schema/sql-files.ts';
import { declaredTables } from '../../src/schema/warehouse/declare-table.ts';
import { dataAgeView } from '../../src/schema/warehouse/analytics.ts';
import * as declarations from '../../src/schema/warehouse/index.ts';
import { SCHEMAS, type SchemaDescription } from '../../src/schema/warehouse/descriptions/index.ts';
import { analyticsStatements } from '../../src/store/schema/analytics-sql.ts';
import { warehouseCatalog } from '../../src/store/schema/catalog.ts';
import { ROUTES } from '../../src/upstream/routes.ts';
import postgres from 'postgres';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';
import { simConfig } from '../helpers/sync.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DOC = join(ROOT, 'docs/adding-a-resource.md');

interface Block {
  /** Where the block goes, from the repository's root. */
  path: string;
  /**
   * Added to the end of an existing file (which already imports what it uses), inside its
   * `tables` (a schema's descriptions), or a file of its own.
   */
  place: 'added' | 'in tables' | 'own';
  code: string;
}

/** The doc's TypeScript blocks, each headed by a `// <path>` line. */
function blocks(): Block[] {
  return [...readFileSync(DOC, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => {
    const [first, ...rest] = m[1]!.split('\n');
    const head = /^\/\/ (\S+)(?: \((added|in tables)\))?$/.exec(first ?? '');
    if (!head) throw new Error(`a ts block of ${DOC} does not start with "// <path>": ${first}`);
    return { path: head[1]!, place: (head[2] as Block['place'] | undefined) ?? 'own', code: rest.join('\n') };
  });
}

/** The doc's list of the files adding a resource touches: their paths, `<source>` and `<resource>` left as written. */
function touched(): string[] {
  const list = /<!-- touched:start -->\n([\s\S]*?)<!-- touched:end -->/.exec(readFileSync(DOC, 'utf8'))?.[1];
  if (!list) throw new Error(`${DOC} has no touched:start/end list`);
  return [...list.matchAll(/^- `([^`]+)`/gm)].map((m) => m[1]!);
}

/** Whether `path` is the file `pattern` names for some source and resource. */
const names = (pattern: string, path: string) =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('<source>', '(app|gateway)').replace('<resource>', '[a-z0-9-]+')}$`).test(path);

/**
 * Writes the blocks under `dir` as they would stand in the repository: a block added to a file
 * follows that file's own exports and imports; relative imports point at the real sources, or
 * at another block.
 */
function placeBlocks(dir: string, list: readonly Block[]): Map<string, string> {
  const placed = new Map(list.map((b) => [join(ROOT, b.path), join(dir, b.path)]));
  for (const b of list) {
    const real = join(ROOT, b.path);
    const at = placed.get(real)!;
    const specifier = (file: string) => {
      const rel = relative(dirname(at), file);
      return rel.startsWith('.') ? rel : `./${rel}`;
    };
    const to = (target: string) => specifier(placed.get(target) ?? target);
    const pointed = (text: string) => text.replace(/from '(\.{1,2}\/[^']+)'/g, (_all, spec: string) => `from '${to(resolve(dirname(real), spec))}'`);
    let code = pointed(b.code);
    if (b.place === 'in tables') {
      // The file as it is, the block the first entry of its `tables`.
      const [head, tail] = readFileSync(real, 'utf8').split(/^  tables: \{\n/m);
      if (tail === undefined) throw new Error(`${b.path} has no \`  tables: {\``);
      code = pointed(`${head}  tables: {\n${b.code.replace(/^(?=.)/gm, '    ')}${tail}`);
    }
    if (b.place === 'added') {
      const original = readFileSync(real, 'utf8');
      const imports = [...original.matchAll(/^import [\s\S]*?;$/gm)].map((m) => m[0].replace(/from '(\.{1,2}\/[^']+)'/, (_all, spec: string) => `from '${to(resolve(dirname(real), spec))}'`));
      const exported = [...original.matchAll(/^export const (\w+)/gm)].map((m) => m[1]!);
      code = [...imports, `import { ${exported.join(', ')} } from '${specifier(real)}';`, `export * from '${specifier(real)}';`, code].join('\n');
    }
    mkdirSync(dirname(at), { recursive: true });
    writeFileSync(at, code);
  }
  return placed;
}

describe('docs/adding-a-resource.md', () => {
  let dir: string;
  let placed: Map<string, string>;
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 10, chartsPerToken: 1 });
  beforeAll(async () => {
    dir = mkdtempSync(join(ROOT, 'test/.walkthrough-'));
    placed = placeBlocks(dir, blocks());
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('touches the files its list names, which exist; the others it names its route already has', () => {
    const list = touched();
    const files = [...placed.keys()].map((p) => relative(ROOT, p));
    expect(files).toEqual(['src/schema/warehouse/app.ts', 'src/schema/warehouse/descriptions/app.ts', 'src/resources/app/metric-groups.ts']);
    for (const f of files) expect(list.filter((p) => names(p, f)), f).toHaveLength(1);
    for (const p of list) {
      const path = p.replace('<source>', 'app');
      expect(existsSync(join(ROOT, path.includes('<resource>') ? dirname(path) : path)), p).toBe(true);
    }
    // What the walkthrough does not add to, it uses as it stands: the route, the upstream schema
    // its job reads with, the simulator's answer (the job runs against it below).
    const job = readFileSync(placed.get(join(ROOT, 'src/resources/app/metric-groups.ts'))!, 'utf8');
    expect(Object.keys(ROUTES)).toContain(/route: '([\w.]+)'/.exec(job)?.[1]);
    expect(list.filter((p) => !files.some((f) => names(p, f)))).toEqual(['src/upstream/routes.ts', 'src/schema/upstream/<source>.ts', 'sim/<source>-routes.ts']);
  });

  it('has a table declaration, its description and a job file, and all type-check in place', () => {
    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, ROOT);
    const program = ts.createProgram([...placed.values()], config.options);
    const problems = [...placed.values()].flatMap((f) => {
      const source = program.getSourceFile(f)!;
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    });
    expect(problems.map((d) => `${relative(dir, d.file?.fileName ?? '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)).toEqual([]);
  });

  it('describes the table with the rest of the warehouse', async () => {
    const table = await import(placed.get(join(ROOT, 'src/schema/warehouse/app.ts'))!);
    const { app } = (await import(placed.get(join(ROOT, 'src/schema/warehouse/descriptions/app.ts'))!)) as { app: SchemaDescription };
    const catalog = warehouseCatalog(
      SCHEMAS.map((s) => (s.name === 'app' ? app : s)),
      [declarations, table],
    );
    expect(catalog.problems).toEqual([]);
    const relation = catalog.schemas.flatMap((s) => s.relations).find((r) => r.schema === 'app' && r.name === 'metric_groups');
    expect(relation?.comment).toMatch(/^The metric catalog's groups\./);
    expect(relation?.key).toEqual(['group']);
  });

  it('its job mirrors the catalog the simulator served, through the lifecycle', async () => {
    const table = await import(placed.get(join(ROOT, 'src/schema/warehouse/app.ts'))!);
    const { appMetricGroupsJob: job } = (await import(placed.get(join(ROOT, 'src/resources/app/metric-groups.ts'))!)) as { appMetricGroupsJob: JobDefinition<any> };
    // The table, from its declaration, as a generated migration would create it.
    const statements = await generateMigration(generateDrizzleJson({}), generateDrizzleJson({ metricGroups: table.metricGroups }));
    for (const s of statements.filter((s) => !/^CREATE SCHEMA/i.test(s))) await fx.warehouse.query(sql.raw(s));
    // Versioned as migrate() would make it: the declarations, with the new one, are what VERSIONED is made of.
    const versioned = versionedTables(table, gateway);
    expect(versioned).toContain(table.metricGroups);
    const conn = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const history = SQL_FILES.filter((f) => f.name === 'history.sql').map((f) => ({ ...f, perObject: () => versioned.map((t) => ['sync.keep_history', getTableConfig(t).schema!, getTableConfig(t).name]) }));
      expect(await applySqlFiles(conn, 'with metric_groups', history)).toEqual(['history.sql']);
    } finally {
      await conn.end();
    }

    const config = simConfig(fx.sim, {}, ['app']);
    const { logger } = createTestLogger();
    const recorder = new WarehouseRecorder(fx.warehouse, logger);
    const upstream = createUpstream({ config, budget: new InProcessBudget(), recorder, logger, retry: FAST_RETRY_POLICY });
    const context = { warehouse: fx.warehouse, upstream, recorder, logger, now: () => new Date(), runId: randomUUID(), settings: settingsFrom(config, false) };
    // In place, the catalog would find the file and the metric catalog would plan the job.
    const withIt = catalogOf([...(await resourceExports(new URL('../../src/resources/', import.meta.url))), job]);
    const metrics = resolveJob(withIt, { name: 'app.metrics', payload: {} });
    expect('error' in metrics ? metrics.error : metrics.children.map((j) => j.name)).toEqual(['app.metric_groups', 'app.tokens']);
    const resolved = resolveJob(withIt, { name: job.name, payload: {} });
    if ('error' in resolved) throw new Error(resolved.error);
    const result = await runJob(resolved, context, { last: true });
    await recorder.close();
    expect(result).toMatchObject({ status: 'ok' });

    const served = ((await (await fetch(`${fx.sim.url}/api/v1/metrics`)).json()) as { data: { group?: string | null; unit?: string | null }[] }).data;
    const expected = new Map<string, { metrics: number; units: Set<string> }>();
    for (const m of served) {
      const g = expected.get(m.group ?? '') ?? { metrics: 0, units: new Set<string>() };
      g.metrics++;
      if (m.unit) g.units.add(m.unit);
      expected.set(m.group ?? '', g);
    }
    expect(expected.size).toBeGreaterThan(1);
    const rows = await fx.warehouse.query<{ group: string; metrics: number; units: string }>(sql`select "group", metrics, units from app.metric_groups order by "group"`);
    expect(rows).toEqual([...expected].sort(([a], [b]) => (a < b ? -1 : 1)).map(([group, g]) => ({ group, metrics: g.metrics, units: [...g.units].sort().join(',') })));
    expect(result.rows).toBe(rows.length);
    // Each row links to the archived body it was read from.
    const [links] = await fx.warehouse.query<{ unlinked: number }>(sql`select count(*) filter (where raw_response_id is null)::int as unlinked from app.metric_groups`);
    expect(links!.unlinked).toBe(0);
    const state = await fx.warehouse.query<{ kind: string; status: string }>(sql`select kind, status from sync.resource_state where source = 'app' and resource = 'metric-groups'`);
    expect(state).toEqual([{ kind: 'catalog', status: 'ok' }]);
    // `analytics.data_age` as `npm run db:analytics` would write it now: the table, under the group its declaration names.
    expect(declaredTables(table, gateway).find((d) => d.table === table.metricGroups)).toMatchObject({ name: 'app.metric_groups', source: 'app', groups: ['catalog'] });
    for (const s of analyticsStatements([dataAgeView(declaredTables(table, gateway))])) await fx.warehouse.query(sql.raw(s));
    const age = await fx.warehouse.query<{ group: string; resources: number }>(sql`select "group", resources from analytics.data_age where table_name = 'app.metric_groups'`);
    expect(age).toEqual([{ group: 'catalog', resources: 1 }]);
    const [asOf] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.metric_groups_as_of(now())`);
    expect(asOf!.n).toBe(rows.length);
    await fx.warehouse.query(sql`delete from app.metric_groups`);
    const [kept] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.metric_groups_history`);
    expect(kept!.n).toBe(rows.length);
    // The set declared with the table: a group the catalog no longer lists leaves it.
    const rerun = async () => {
      const recorder = new WarehouseRecorder(fx.warehouse, logger);
      const again = resolveJob(withIt, { name: job.name, payload: {} });
      if ('error' in again) throw new Error(again.error);
      const upstream = createUpstream({ config, budget: new InProcessBudget(), recorder, logger, retry: FAST_RETRY_POLICY });
      const outcome = await runJob(again, { ...context, upstream, recorder, runId: randomUUID() }, { last: true });
      await recorder.close();
      expect(outcome).toMatchObject({ status: 'ok' });
    };
    await rerun();
    await fx.warehouse.query(sql`update app.metric_groups set "group" = 'no-longer-listed' where "group" = ${rows[0]!.group}`);
    await rerun();
    const after = await fx.warehouse.query<{ group: string }>(sql`select "group" from app.metric_groups order by "group"`);
    expect(after.map((r) => r.group)).toEqual(rows.map((r) => r.group));
  });
});
