// docs/adding-a-resource.md stays true: its table declaration and its job type-check as if
// they were in place, the table is created from the declaration, and the job, run through
// the one lifecycle against the simulator, mirrors the catalog the simulator served; the table
// is versioned as it stands, by the SQL files migrate() applies, with no other edit.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planJob, runJob } from '../../src/engine/lifecycle.ts';
import type { JobDefinition } from '../../src/engine/types.ts';
import { catalogOf, resourceExports } from '../../src/resources/index.ts';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { settingsFrom } from '../../src/cli/sync-session.ts';
import { InProcessBudget } from '../../src/upstream/budget.ts';
import { createUpstream } from '../../src/upstream/client.ts';
import { WarehouseRecorder } from '../../src/store/books/request-log.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import * as gateway from '../../src/schema/warehouse/gateway.ts';
import { versionedTables } from '../../src/schema/warehouse/history.ts';
import { applySqlFiles, SQL_FILES } from '../../src/store/schema/sql-files.ts';
import postgres from 'postgres';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { createTestLogger, createTestWarehouse, type TestWarehouse } from '../helpers/services.ts';
import { simConfig } from '../helpers/sync.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DOC = join(ROOT, 'docs/adding-a-resource.md');

interface Block {
  /** Where the block goes, from the repository's root. */
  path: string;
  /** Added to an existing file (which already imports what it uses), or a file of its own. */
  added: boolean;
  code: string;
}

/** The doc's TypeScript blocks, each headed by a `// <path>` line. */
function blocks(): Block[] {
  return [...readFileSync(DOC, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => {
    const [first, ...rest] = m[1]!.split('\n');
    const head = /^\/\/ (\S+)( \(added\))?$/.exec(first ?? '');
    if (!head) throw new Error(`a ts block of ${DOC} does not start with "// <path>": ${first}`);
    return { path: head[1]!, added: head[2] !== undefined, code: rest.join('\n') };
  });
}

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
    let code = b.code.replace(/from '(\.{1,2}\/[^']+)'/g, (_all, spec: string) => `from '${to(resolve(dirname(real), spec))}'`);
    if (b.added) {
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
  let sim: Simulator;
  let tw: TestWarehouse;
  beforeAll(async () => {
    dir = mkdtempSync(join(ROOT, 'test/.walkthrough-'));
    placed = placeBlocks(dir, blocks());
    sim = await startSimulator({ tokens: 3, historyDays: 10, chartsPerToken: 1 });
    tw = await createTestWarehouse();
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await sim?.close();
    await tw?.cleanup();
  });

  it('has a table declaration and a job file, and both type-check in place', () => {
    expect([...placed.keys()].map((p) => relative(ROOT, p))).toEqual(['src/schema/warehouse/app.ts', 'src/resources/app/metric-groups.ts']);
    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, ROOT);
    const program = ts.createProgram([...placed.values()], config.options);
    const problems = [...placed.values()].flatMap((f) => {
      const source = program.getSourceFile(f)!;
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    });
    expect(problems.map((d) => `${relative(dir, d.file?.fileName ?? '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)).toEqual([]);
  });

  it('its job mirrors the catalog the simulator served, through the lifecycle', async () => {
    const table = await import(placed.get(join(ROOT, 'src/schema/warehouse/app.ts'))!);
    const { appMetricGroupsJob: job } = (await import(placed.get(join(ROOT, 'src/resources/app/metric-groups.ts'))!)) as { appMetricGroupsJob: JobDefinition<any> };
    // The table, from its declaration, as a generated migration would create it.
    const statements = await generateMigration(generateDrizzleJson({}), generateDrizzleJson({ metricGroups: table.metricGroups }));
    for (const s of statements.filter((s) => !/^CREATE SCHEMA/i.test(s))) await tw.warehouse.query(sql.raw(s));
    // Versioned as migrate() would make it: the declarations, with the new one, are what VERSIONED is made of.
    const versioned = versionedTables(table, gateway);
    expect(versioned).toContain(table.metricGroups);
    const conn = postgres(tw.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const history = SQL_FILES.filter((f) => f.name === 'history.sql').map((f) => ({ ...f, perObject: () => versioned.map((t) => ['sync.keep_history', getTableConfig(t).schema!, getTableConfig(t).name]) }));
      expect(await applySqlFiles(conn, 'with metric_groups', history)).toEqual(['history.sql']);
    } finally {
      await conn.end();
    }

    const config = simConfig(sim, {}, ['app']);
    const { logger } = createTestLogger();
    const recorder = new WarehouseRecorder(tw.warehouse, logger);
    const upstream = createUpstream({ config, budget: new InProcessBudget(), recorder, logger, retry: FAST_RETRY_POLICY });
    const context = { warehouse: tw.warehouse, upstream, archive: recorder, logger, now: () => new Date(), runId: randomUUID(), settings: settingsFrom(config, false) };
    // In place, the catalog would find the file and the metric catalog would plan the job.
    const withIt = catalogOf([...(await resourceExports(new URL('../../src/resources/', import.meta.url))), job]);
    const metrics = planJob(withIt, { name: 'app.metrics', payload: {} });
    expect('error' in metrics ? metrics.error : metrics.children.map((j) => j.name)).toEqual(['app.metric_groups', 'app.tokens']);
    const planned = planJob(withIt, { name: job.name, payload: {} });
    if ('error' in planned) throw new Error(planned.error);
    const result = await runJob(planned, context, { last: true });
    await recorder.close();
    expect(result).toMatchObject({ status: 'ok' });

    const served = ((await (await fetch(`${sim.url}/api/v1/metrics`)).json()) as { data: { group?: string | null; unit?: string | null }[] }).data;
    const expected = new Map<string, { metrics: number; units: Set<string> }>();
    for (const m of served) {
      const g = expected.get(m.group ?? '') ?? { metrics: 0, units: new Set<string>() };
      g.metrics++;
      if (m.unit) g.units.add(m.unit);
      expected.set(m.group ?? '', g);
    }
    expect(expected.size).toBeGreaterThan(1);
    const rows = await tw.warehouse.query<{ group: string; metrics: number; units: string }>(sql`select "group", metrics, units from app.metric_groups order by "group"`);
    expect(rows).toEqual([...expected].sort(([a], [b]) => (a < b ? -1 : 1)).map(([group, g]) => ({ group, metrics: g.metrics, units: [...g.units].sort().join(',') })));
    expect(result.rows).toBe(rows.length);
    // Each row links to the archived body it was read from.
    const [links] = await tw.warehouse.query<{ unlinked: number }>(sql`select count(*) filter (where raw_response_id is null)::int as unlinked from app.metric_groups`);
    expect(links!.unlinked).toBe(0);
    const state = await tw.warehouse.query<{ kind: string; status: string }>(sql`select kind, status from sync.resource_state where source = 'app' and resource = 'metric-groups'`);
    expect(state).toEqual([{ kind: 'catalog', status: 'ok' }]);
    const [asOf] = await tw.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.metric_groups_as_of(now())`);
    expect(asOf!.n).toBe(rows.length);
    await tw.warehouse.query(sql`delete from app.metric_groups`);
    const [kept] = await tw.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.metric_groups_history`);
    expect(kept!.n).toBe(rows.length);
  });
});
