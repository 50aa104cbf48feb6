// Before a command writes a warehouse, the warehouse must mirror the upstream the command is
// configured with (sync.upstream_bindings, src/store/books/upstream-binding.ts). Part of the
// composition root: it knows the configuration's variable names and the commands' flags.
import type { Source } from '../resources/index.ts';
import type { Config } from '../lib/config.ts';
import { UpstreamMismatchError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { describeUpstream, simulatorIdentity, upstreamIdentity, type UpstreamIdentity } from '../store/books/upstream-identity.ts';
import type { Warehouse } from '../store/connection.ts';
import { bindUpstreams, changed, type BindingCommand, type BindingRefusal, type BindingStep } from '../store/books/upstream-binding.ts';
import { SOURCE_URL_VARIABLE } from '../upstream/connect-errors.ts';

/** Pure: the identity of each source's configured base URL (sources must be configured). */
export function configuredUpstreams(config: Pick<Config, 'app' | 'gateway'>, sources: readonly Source[]): Map<string, UpstreamIdentity> {
  const out = new Map<string, UpstreamIdentity>();
  for (const source of sources) {
    const url = config[source]?.url;
    if (url) out.set(source, upstreamIdentity(url));
  }
  return out;
}

/** Pure: the demo's sources, each the bundled simulator. */
export function simulatorUpstreams(sources: readonly Source[]): Map<string, UpstreamIdentity> {
  return new Map(sources.map((s) => [s, simulatorIdentity()]));
}

export interface UpstreamCheck {
  command: BindingCommand;
  /** `--force`: rebind the sources whose upstream differs. */
  force: boolean;
  logger: Logger;
}

/**
 * Binds the warehouse to `configured` where it is unbound (rebinds with `force`), or throws
 * UpstreamMismatchError (exit 2) having written nothing. Call it before any write of data.
 */
export async function ensureBoundUpstream(warehouse: Warehouse, configured: ReadonlyMap<string, UpstreamIdentity>, check: UpstreamCheck): Promise<BindingStep[]> {
  if (configured.size === 0) return [];
  const { steps, refused } = await bindUpstreams(warehouse.db, configured, { force: check.force, command: check.command });
  if (refused.length > 0) {
    const where = { location: warehouse.location, embedded: warehouse.kind === 'embedded' };
    throw new UpstreamMismatchError(refusalVariable(refused, check.command, where.embedded), refusalMessage(refused, check.command, where));
  }
  for (const step of steps.filter(changed)) {
    if (step.action === 'rebind') {
      check.logger.warn({ source: step.source, from: step.from, to: step.to.upstream }, `rebound the ${step.source} source of this warehouse (--force): from ${describeUpstream(step.from)} to ${describeUpstream(step.to)}`);
    } else {
      check.logger.info({ source: step.source, upstream: step.to.upstream, event: step.event }, `warehouse bound to its ${step.source} upstream`);
    }
  }
  return steps;
}

/** Pure: the variable a refusal is about, for the error's `variable`. */
export function refusalVariable(refused: readonly BindingRefusal[], command: BindingCommand, embedded: boolean): string {
  if (command === 'demo') return embedded ? 'TE_DATA_DIR' : 'DATABASE_URL';
  return SOURCE_URL_VARIABLE[refused[0]!.source as Source] ?? 'TE_APP_URL';
}

/** Pure: the one message of a refusal, naming the bound and the configured upstream of each source. */
export function refusalMessage(refused: readonly BindingRefusal[], command: BindingCommand, where: { location: string; embedded: boolean }): string {
  const bound = (r: BindingRefusal) => (r.bound === null ? `${r.source} holds data of ${describeUpstream(null)}` : `${r.source} is bound to ${describeUpstream(r.bound)}`);
  const log = 'recorded in sync.upstream_binding_log';
  if (command === 'demo') {
    const elsewhere = where.embedded ? 'set TE_DATA_DIR to another folder' : 'unset DATABASE_URL to use the embedded warehouse, or point it at another database';
    return (
      `this warehouse (${where.location}) mirrors another upstream than tesync demo's bundled simulator: ${refused.map(bound).join('; ')}. ` +
      `The demo never writes into another upstream's warehouse: ${elsewhere}; or pass --force to rebind it to the simulator (${log}).`
    );
  }
  const each = refused.map((r) => `${bound(r)}, ${SOURCE_URL_VARIABLE[r.source as Source] ?? r.source} is ${describeUpstream(r.configured)}`);
  return (
    `this warehouse (${where.location}) mirrors another upstream: ${each.join('; ')}. ` +
    `Syncing another upstream into it would mix two upstreams' data: point DATABASE_URL at another warehouse, or pass --force to rebind it (${log}).`
  );
}
