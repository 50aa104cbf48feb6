// docs/adding-a-resource.md, "How one response travels", kept true: every `function` a step
// names in a `file` is declared there, and the table of what a try costs is what a traced try
// costs. Each traced job runs alone, through runJob, against the simulator over HTTP on a real
// warehouse: its store visits are counted from the statements postgres.js sends on the job's
// warehouse handle (its `debug` hook: a transaction, from `begin` to its end, is one visit; a
// statement outside one, one more), and its calls into the resource by a Proxy over the job's
// definition (each call of a function of it, of its readers or of its `unchanged`). The
// recorder (the request log, src/store/books/request-log.ts) writes on a handle of its own:
// its batches are the client's record, written across jobs, not the job's visits; a body the
// job read reaches the archive inside the job's commit, which the trace shows.
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsFrom } from '../../src/cli/sync-session.ts';
import { resolveJob, runJob, type ResolvedJob } from '../../src/engine/job/lifecycle.ts';
import type { JobDefinition, RunContext } from '../../src/engine/kit/types.ts';
import { catalog } from '../../src/resources/index.ts';
import * as schema from '../../src/schema/warehouse/index.ts';
import { WarehouseRecorder } from '../../src/store/books/request-log.ts';
import { rowsOf, type Db, type Warehouse } from '../../src/store/connection.ts';
import { WarehouseClock } from '../../src/store/warehouse-clock.ts';
import { InProcessBudget } from '../../src/upstream/budget/budget.ts';
import { createUpstream } from '../../src/upstream/client.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { simConfig } from '../helpers/sync.ts';

const DOC = readFileSync(new URL('../../docs/adding-a-resource.md', import.meta.url), 'utf8');
const ROOT = new URL('../../', import.meta.url);

/** The section of the doc this test keeps: from its heading to the end. */
export function travelSection(doc: string): string {
  const at = doc.indexOf('## How one response travels');
  if (at < 0) throw new Error('docs/adding-a-resource.md has no "## How one response travels"');
  return doc.slice(at);
}

/**
 * Pure: the numbered steps of the section (a line `N. ` and the indented lines under it), each
 * with the `function` in `file` pairs it names.
 */
export function stepsOf(section: string): { step: string; named: { name: string; file: string }[] }[] {
  const steps: string[] = [];
  let open = false;
  for (const line of section.split('\n')) {
    if (/^\d+\. /.test(line)) {
      steps.push(line);
      open = true;
    } else if (open && /^\s{2,}\S/.test(line)) steps[steps.length - 1] += `\n${line}`;
    else if (line.trim() !== '') open = false;
  }
  return steps.map((text) => ({ step: text.slice(0, 60), named: [...text.matchAll(/`([A-Za-z_$][\w$.]*)`\s+in\s+`((?:src|sim)\/[^`]+\.ts)`/g)].map((m) => ({ name: m[1]!, file: m[2]! })) }));
}

/** Pure: whether a source file declares `name` (a function, class, type or constant; `A.b`: class A's method or property b). */
export function declares(text: string, name: string): boolean {
  const [owner, member] = name.includes('.') ? name.split('.', 2) : [undefined, name];
  const word = (n: string) => n.replace(/\$/g, '\\$');
  const top = (n: string) => new RegExp(`\\b(?:function\\*?|class|const|let|interface|type|enum)\\s+${word(n)}\\b`).test(text);
  const inner = (n: string) => new RegExp(`^\\s*(?:(?:public|private|protected|readonly|static|async|override|get)\\s+)*${word(n)}\\??\\s*(?:<[^>\\n]*>)?\\s*[(:=]`, 'm').test(text);
  return owner === undefined ? top(member!) || inner(member!) : top(owner) && inner(member!);
}

/** Pure: the table of what a try costs: per path, its store visits and resource calls. */
export function costsOf(section: string): Map<string, { visits: number; calls: number }> {
  const out = new Map<string, { visits: number; calls: number }>();
  for (const m of section.matchAll(/^\| ([^|]+?) \| (\d+) \| (\d+) \|/gm)) out.set(m[1]!, { visits: Number(m[2]), calls: Number(m[3]) });
  return out;
}

describe('How one response travels: the steps', () => {
  const steps = stepsOf(travelSection(DOC));

  it('has steps, each naming what runs it', () => {
    expect(steps.length).toBeGreaterThanOrEqual(6);
    for (const s of steps) expect(s.named, s.step).not.toEqual([]);
  });

  it('names only functions the named files declare', () => {
    const missing: string[] = [];
    for (const { named } of steps) {
      for (const { name, file } of named) {
        const path = new URL(file, ROOT);
        if (!existsSync(path)) missing.push(`${file} (no such file)`);
        else if (!declares(readFileSync(path, 'utf8'), name)) missing.push(`${name} in ${file}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

/** A statement postgres.js sent, on which connection. */
interface Sent {
  conn: number;
  query: string;
}

/** Pure: the store visits the statements make: a transaction (begin to commit or rollback) is one, a statement outside one another. */
export function visitsOf(sent: readonly Sent[]): string[][] {
  const open = new Map<number, string[]>();
  const out: string[][] = [];
  for (const { conn, query } of sent) {
    const q = query.trim().toLowerCase();
    const tx = open.get(conn);
    if (q.startsWith('begin')) open.set(conn, []);
    else if (tx && (q === 'commit' || (q.startsWith('rollback') && !q.startsWith('rollback to')))) {
      out.push([...tx, q]);
      open.delete(conn);
    } else if (tx) tx.push(query);
    else out.push([query]);
  }
  return out;
}

/** The job's definition, its calls counted: every function of it, of its readers and of its `unchanged`. */
function counted<P>(job: JobDefinition<P>, calls: string[]): JobDefinition<P> {
  const wrap = <T extends object>(target: T, prefix: string, nested: readonly string[]): T => {
    const kept = new Map<PropertyKey, unknown>();
    return new Proxy(target, {
      get(t, key, receiver) {
        const v: unknown = Reflect.get(t, key, receiver);
        if (kept.has(key)) return kept.get(key);
        let out = v;
        if (typeof v === 'function') {
          out = (...args: unknown[]) => {
            calls.push(`${prefix}${String(key)}`);
            return (v as (...a: unknown[]) => unknown).apply(t, args);
          };
        } else if (typeof v === 'object' && v !== null && nested.includes(String(key))) out = wrap(v, `${String(key)}.`, []);
        kept.set(key, out);
        return out;
      },
    });
  };
  return wrap(job, '', ['reader', 'alternative', 'unchanged']);
}

const gwKey = canaryKey('gw');
const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, etags: true, gatewayKeys: [gwKey] });
let sent: Sent[] = [];
let tracing = false;
let client: postgres.Sql | undefined;
let traced: Warehouse;
let recorder: WarehouseRecorder;
let run: RunContext;
const log = createTestLogger([gwKey], 'info');

beforeAll(async () => {
  client = postgres(sa.databaseUrl, {
    max: 4,
    onnotice: () => {},
    connection: { TimeZone: 'UTC' },
    debug: (conn: number, query: string) => {
      if (tracing) sent.push({ conn, query });
    },
  });
  const db = drizzle({ client, schema }) as unknown as Db;
  traced = { ...sa.warehouse, db, query: async (s) => rowsOf(await db.execute(s)) };
  const config = simConfig(sa.sim, { gatewayKey: gwKey }, ['app', 'gateway']);
  // The request log's own handle: its batches are not the job's.
  recorder = new WarehouseRecorder(sa.warehouse, log.logger);
  const clock = new WarehouseClock(sa.warehouse.db);
  await clock.refresh();
  const upstream = createUpstream({ config, budget: new InProcessBudget(), recorder, logger: log.logger, retry: FAST_RETRY_POLICY });
  run = { warehouse: traced, upstream, recorder, logger: log.logger, now: clock.now, runId: randomUUID(), settings: settingsFrom(config, false) };
  // postgres.js reads the array types once per client, on its first statement: not a job's.
  await client`select 1`;
});
afterAll(async () => {
  await recorder?.close();
  await client?.end({ timeout: 5 });
});

/** One job's try, alone: its store visits and its calls into the resource. */
async function trace(name: string, payload: unknown): Promise<{ status: string; visits: string[][]; calls: string[] }> {
  const resolved = resolveJob(catalog, { name, payload });
  if ('error' in resolved) throw new Error(resolved.error);
  const calls: string[] = [];
  const job: ResolvedJob = { ...resolved, job: counted(resolved.job, calls) };
  sent = [];
  tracing = true;
  try {
    const settled = await runJob(job, run, { last: true });
    return { status: settled.status, visits: visitsOf(sent), calls };
  } finally {
    tracing = false;
  }
}

/** An untraced try of a job, to set the warehouse up (on the traced handle: the same process caches). */
async function plainly(name: string, payload: unknown): Promise<string> {
  const resolved = resolveJob(catalog, { name, payload });
  if ('error' in resolved) throw new Error(resolved.error);
  const settled = await runJob(resolved, run, { last: true });
  if (settled.failure) throw new Error(`${name}: ${settled.failure.message}`);
  return settled.status;
}

describe('How one response travels: what a try costs', () => {
  const costs = costsOf(travelSection(DOC));
  const stated = (path: string) => {
    const c = costs.get(path);
    if (!c) throw new Error(`docs/adding-a-resource.md: no row "${path}" in the table of what a try costs`);
    return c;
  };
  const writes = (visit: readonly string[], table: string) => visit.some((q) => new RegExp(`^insert into "?sync"?\\."?${table}"?`, 'i').test(q.trim()));

  /** The visits a route's first response in a run adds: its field drift, kept when the try ends. */
  const driftOnly = (visits: readonly string[][]) => visits.every((v) => v.some((q) => /"?sync"?\."?resource_(fields|kinds)"?/i.test(q)));

  it('app history, a plain 200: its state and knowledge, then one commit that archives its body', async () => {
    // The route's first response in the run: its field drift after the try, and nothing else more.
    const first = await trace('app.history', { slug: 'basalt-finance' });
    expect(first.status).toBe('ok');
    const { status, visits, calls } = await trace('app.history', { slug: 'aurora' });
    expect(status).toBe('ok');
    expect({ visits: visits.length, calls: calls.length }, JSON.stringify({ visits, calls }, null, 1)).toEqual(stated('app history, a plain 200'));
    expect(calls).toEqual(['declared', 'reader.read']);
    // The body and the rows commit together: the body archived in the commit's transaction.
    expect(writes(visits.at(-1)!, 'raw_responses')).toBe(true);
    expect(writes(visits.at(-1)!, 'writes')).toBe(true);
    expect(first.calls).toEqual(calls);
    expect(first.visits.length).toBeGreaterThan(visits.length);
    expect(first.visits.slice(0, 2).map((v) => v.length > 0)).toEqual([true, true]);
    expect(driftOnly(first.visits.slice(2)), JSON.stringify(first.visits.slice(2), null, 1)).toBe(true);
  });

  it('app history, a 404, and again under its marker', async () => {
    const first = await trace('app.history', { slug: 'no-such-token', marker: 'm1' });
    expect(first.status).toBe('not_found');
    expect({ visits: first.visits.length, calls: first.calls.length }, JSON.stringify(first)).toEqual(stated('app history, its 404'));
    const again = await trace('app.history', { slug: 'no-such-token', marker: 'm1' });
    expect(again.status).toBe('not_found');
    expect({ visits: again.visits.length, calls: again.calls.length }, JSON.stringify(again)).toEqual(stated('app history, again under its 404\'s marker'));
  });

  it('gateway screener, a plain 200, then its 304', async () => {
    expect(await plainly('gateway.tokens', {})).toMatch(/^(ok|partial)$/);
    // Its route's first response in the run (field drift) untraced; then a changed screener.
    expect(await plainly('gateway.screener', {})).toMatch(/^(ok|partial)$/);
    // Epoch 2: the first token's values revised, every token listed as at epoch 0.
    sa.sim.setEpoch(2);
    try {
      const first = await trace('gateway.screener', {});
      expect(first.status).toBe('ok');
      expect({ visits: first.visits.length, calls: first.calls.length }, JSON.stringify(first, null, 1)).toEqual(stated('gateway screener, a plain 200'));
      expect(writes(first.visits.at(-1)!, 'raw_responses')).toBe(true);
      const again = await trace('gateway.screener', {});
      expect(again.status).toBe('unchanged');
      expect({ visits: again.visits.length, calls: again.calls.length }, JSON.stringify(again, null, 1)).toEqual(stated('gateway screener, its 304'));
      expect(again.calls).toEqual(['declared']);
    } finally {
      sa.sim.setEpoch(0);
    }
  });
});
