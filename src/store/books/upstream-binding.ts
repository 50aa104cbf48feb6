// A warehouse is bound to its upstream: sync.upstream_bindings holds, per source, the upstream
// its data came from; sync.upstream_binding_log every change of it. `bindingSteps` decides
// (pure); `bindUpstreams` reads the facts, decides and writes, in one transaction under an
// advisory lock, so two processes binding at once cannot both win with different upstreams.
import { hostname } from 'node:os';
import { sql } from 'drizzle-orm';
import { SERVER_CLOCK } from '../warehouse-clock.ts';
import { SIMULATOR, type UpstreamIdentity } from './upstream-identity.ts';
import { rowsOf, type Db } from '../connection.ts';

/** The commands that write a warehouse, as recorded with a binding. */
export type BindingCommand = 'sync' | 'worker' | 'enqueue' | 'demo';

/** pg_advisory_xact_lock(int4, int4): the source locks' namespace (source-lock.ts), then this. */
const BINDING_LOCK = { namespace: 0x7e5c_5101, id: 0xb1 };

/** What the warehouse says about one source. */
export interface SourceFacts {
  source: string;
  configured: UpstreamIdentity;
  /** The bound upstream's canonical text, when one is recorded. */
  bound: string | undefined;
  /**
   * What the warehouse holds of the source: `none` (nothing upstream ever answered as itself:
   * no body of a 2xx archived, no resource fetched), `demo` (data, and every run that synced
   * the source was a `tesync demo`: the simulator's), `other` (data of another upstream, or
   * one an earlier release did not record).
   */
  data: 'none' | 'demo' | 'other';
}

export type BindingStep =
  | { source: string; action: 'keep'; upstream: string }
  | { source: string; action: 'bind'; event: 'bound' | 'adopted'; to: UpstreamIdentity }
  | { source: string; action: 'rebind'; from: string | null; to: UpstreamIdentity }
  /** `bound` null: data whose upstream was never recorded. */
  | { source: string; action: 'refuse'; bound: string | null; configured: UpstreamIdentity };

export type BindingRefusal = Extract<BindingStep, { action: 'refuse' }>;

/**
 * Pure: what to do for each source. A bound source keeps its binding, or with `force` is
 * rebound; a source with no data is bound. Data an earlier release wrote without a binding
 * is adopted by the upstream it came from: the simulator's when only demos synced it, else
 * the configured one (the user has been syncing it), except that the demo never adopts data
 * it cannot tell is its own.
 */
export function bindingSteps(facts: readonly SourceFacts[], force: boolean): BindingStep[] {
  return facts.map((f): BindingStep => {
    const { source, configured } = f;
    if (f.bound === configured.upstream) return { source, action: 'keep', upstream: f.bound };
    // Nothing of the source came from upstream yet (a first sync on a wrong port, a DNS typo,
    // a 404 at the root): a binding made then binds nothing, and the configured one takes its
    // place, as a first binding, without --force.
    if (f.data === 'none') return { source, action: 'bind', event: 'bound', to: configured };
    // The upstream the data came from: recorded; else inferred (the simulator's, when only
    // demos synced it); else the configured one, unless the demo is what is configured (null:
    // unknown, never the simulator's to take).
    const previous = f.bound ?? (f.data === 'demo' ? SIMULATOR : configured.kind === 'simulator' ? null : configured.upstream);
    if (previous === configured.upstream) {
      return f.bound === undefined ? { source, action: 'bind', event: 'adopted', to: configured } : { source, action: 'keep', upstream: previous };
    }
    return force ? { source, action: 'rebind', from: previous, to: configured } : { source, action: 'refuse', bound: previous, configured };
  });
}

export interface BindingResult {
  steps: BindingStep[];
  /** Non-empty: nothing was written, the command must not write either. */
  refused: BindingRefusal[];
}

/**
 * Checks the configured upstream of each source against the warehouse, binding what is
 * unbound (and with `force` rebinding what differs). When any source is refused, nothing is
 * written at all.
 */
export async function bindUpstreams(db: Db, configured: ReadonlyMap<string, UpstreamIdentity>, options: { force: boolean; command: BindingCommand }): Promise<BindingResult> {
  return db.transaction(async (tx) => {
    const run = async <T>(statement: ReturnType<typeof sql>) => rowsOf<T>(await tx.execute(statement));
    await run(sql`select pg_advisory_xact_lock(${BINDING_LOCK.namespace}::int4, ${BINDING_LOCK.id}::int4)`);
    const bound = new Map((await run<{ source: string; upstream: string }>(sql`select source, upstream from sync.upstream_bindings`)).map((r) => [r.source, r.upstream]));
    const facts: SourceFacts[] = [];
    for (const [source, identity] of configured) {
      const upstream = bound.get(source);
      facts.push({ source, configured: identity, bound: upstream, data: await dataOf(run, source) });
    }
    const steps = bindingSteps(facts, options.force);
    const refused = steps.filter((s): s is BindingRefusal => s.action === 'refuse');
    if (refused.length > 0) return { steps, refused };
    for (const step of steps) {
      if (step.action === 'bind') await write(run, step.source, step.to, step.event, null, options.command);
      if (step.action === 'rebind') await write(run, step.source, step.to, 'rebound', step.from, options.command);
    }
    return { steps, refused };
  });
}

type Run = <T>(statement: ReturnType<typeof sql>) => Promise<T[]>;

/** Only what upstream answered as itself counts: a body of a 2xx, a resource fetched. */
async function dataOf(run: Run, source: string): Promise<SourceFacts['data']> {
  const [r] = await run<{ has_data: boolean; demo_only: boolean | null }>(sql`
    select (exists (select 1 from sync.resource_state where source = ${source} and last_success_at is not null)
            or exists (select 1 from sync.raw_responses where source = ${source} and http_status between 200 and 299 and status = 'ok')) as has_data,
           (select bool_and(trigger = 'demo') from sync.runs where ${source} = any(sources)) as demo_only`);
  if (!r?.has_data) return 'none';
  return r.demo_only === true ? 'demo' : 'other';
}

async function write(run: Run, source: string, to: UpstreamIdentity, event: 'bound' | 'adopted' | 'rebound', from: string | null, command: BindingCommand): Promise<void> {
  const parts = to.kind === 'url' ? to : { scheme: null, host: null, port: null, path: null };
  await run(sql`
    insert into sync.upstream_bindings (source, upstream, scheme, host, port, path, bound_at, event, command)
    values (${source}, ${to.upstream}, ${parts.scheme}, ${parts.host}, ${parts.port}, ${parts.path}, ${SERVER_CLOCK}, ${event}, ${command})
    on conflict (source) do update set upstream = excluded.upstream, scheme = excluded.scheme, host = excluded.host, port = excluded.port,
      path = excluded.path, bound_at = excluded.bound_at, event = excluded.event, command = excluded.command`);
  await run(sql`
    insert into sync.upstream_binding_log (source, event, at, from_upstream, to_upstream, command, host)
    values (${source}, ${event}, ${SERVER_CLOCK}, ${from}, ${to.upstream}, ${command}, ${hostname()})`);
}

/** Pure: whether a step changed the warehouse's binding (for a log line). */
export function changed(step: BindingStep): step is Extract<BindingStep, { action: 'bind' | 'rebind' }> {
  return step.action === 'bind' || step.action === 'rebind';
}
