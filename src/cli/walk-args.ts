// The options `tesync sync`, `tesync enqueue` and `tesync demo` share; `--source`, `--only`
// and unknown `--token`s as sync and enqueue both read and say them.
import { groups, type Source } from '../resources/index.ts';
import type { Config } from '../lib/config.ts';
import { UsageError } from './context.ts';
import { configuredSources } from './sync-session.ts';

/** `--json` (every log line, no progress line), `--force` and `--help`, on every command that walks. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  help: { type: 'boolean' },
} as const;

/** What a walk is asked to cover, as `tesync sync` and `tesync enqueue` take it. */
export const WALK_OPTIONS = {
  source: { type: 'string', multiple: true },
  token: { type: 'string', multiple: true },
  only: { type: 'string', multiple: true },
  full: { type: 'boolean', default: false },
  wait: { type: 'boolean', default: false },
  ...COMMON_OPTIONS,
} as const;

/** The sources asked for (default: every configured one); each must be configured. */
export function sourcesArg(config: Config, asked: string[] | undefined): Source[] {
  const available = configuredSources(config);
  const sources = asked ?? available;
  for (const s of sources) {
    if (s !== 'app' && s !== 'gateway') throw new UsageError(`--source must be app or gateway, not ${JSON.stringify(s)}`);
    if (!available.includes(s)) throw new UsageError(`the ${s} source is not configured: set ${s === 'app' ? 'TE_APP_URL' : 'TE_GATEWAY_URL and TE_GATEWAY_API_KEY'}`);
  }
  if (sources.length === 0) throw new UsageError('no source is configured: set TE_APP_URL and/or TE_GATEWAY_URL (see the README)');
  return sources as Source[];
}

/** Resource groups from repeated or comma-separated `--only`; each must exist. */
export function onlyArg(asked: string[] | undefined): string[] {
  const only = (asked ?? []).flatMap((o) => o.split(',')).map((o) => o.trim()).filter(Boolean);
  const known = new Set(groups());
  for (const o of only) if (!known.has(o.replace(/^(app|gateway)\./, ''))) throw new UsageError(`--only: unknown resource group ${JSON.stringify(o)} (known: ${[...known].join(', ')})`);
  return only;
}

/** Pure: the line of a walk whose `--token`s name no listed token (with the slug each may have meant). */
export function unknownTokensLine(unknown: readonly { slug: string; meant?: string }[], done: 'fetched' | 'queued'): string {
  const named = unknown.map((u) => `${JSON.stringify(u.slug)}${u.meant ? ` (did you mean ${u.meant}?)` : ''}`).join(', ');
  return `--token: ${named} ${unknown.length === 1 ? 'is' : 'are'} in neither token list; nothing was ${done} for ${unknown.length === 1 ? 'it' : 'them'}`;
}
