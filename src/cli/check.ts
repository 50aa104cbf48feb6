// `tesync check`: is this configuration right, before a sync binds a warehouse to it? The
// configuration was validated by main.ts (exit 2 naming the variable); here the database is
// reached without migrating (check-database.ts) and each configured source and key is asked once
// (check-upstream.ts). Exit 0 when all answer as they should, 1 naming each variable that is
// wrong, 2 when what is wrong is bad configuration by the README's rule (the code sync and
// status exit with for the same fault). It writes nothing: no schema, no binding, no request
// log, no shared rate budget.
import { parseArgs } from 'node:util';
import { ConfigError, type Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { scrub } from '../lib/logger.ts';
import { wrapToWidth } from '../lib/display-width.ts';
import { InProcessBudget } from '../upstream/budget/budget.ts';
import { createUpstream } from '../upstream/client.ts';
import { checkDatabase } from './check-database.ts';
import { checkRedis } from './check-redis.ts';
import { checkUpstreams, type CheckResult } from './check-upstream.ts';
import { outputWidth, type CommandContext } from './context.ts';

const HELP = `Usage: tesync check [--json]

Checks the configuration before a sync uses it, and writes nothing:
- the warehouse: DATABASE_URL reached (or the embedded server in TE_DATA_DIR,
  when it has one), read without migrating: its schema, and the upstream each
  source is bound to;
- each configured source asked once: its token list (TE_APP_URL; TE_GATEWAY_URL
  with TE_GATEWAY_API_KEY, which every gateway route needs);
- REDIS_URL, when set: the workers' Redis answers as what it names (one server,
  or a Redis Cluster, all of whose slots are served), and where the queues'
  keys are (on a cluster: their slot and the primary that serves it);
- TE_APP_API_KEY, when set, on one token's research bundle.
One line per check: ok, FAIL (and which variable to look at, and why), or skip.
  --json  the checks as JSON

Exit 0 when every check passed, 1 when one failed (a refused key, a URL that
cannot be reached or answers as another API, a database not reached), 2 for bad
configuration, as sync and status exit for it: a variable that cannot be read,
a login or database the Postgres server refused, a warehouse bound to another
upstream or migrated by a newer tesync. A Retry-After is honoured, nothing is
retried, and no key is ever printed.`;

/** The longest a check waits for rate budget (a Retry-After): longer, and it says so instead. */
const CHECK_RATE_WAIT_MS = 30_000;

export async function runCheck({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { json: { type: 'boolean', default: false }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // Nothing to ask: a sync would refuse it too (and `worker --demo` needs no check).
  if (!config.app && !config.gateway) throw new ConfigError('TE_APP_URL', 'no source is configured: set TE_APP_URL and/or TE_GATEWAY_URL (with TE_GATEWAY_API_KEY)');
  const results = [...(await checkDatabase(config)), ...(await checkRedis(config)), ...(await checkUpstreams(config, checkClient(config, logger)))];
  const failed = results.filter((r) => r.status === 'failed');
  // Keys never reach a line: the messages are built without them; scrubbed all the same.
  const shown = results.map((r) => ({ ...r, message: scrub(r.message, config.secrets) }));
  process.stdout.write(values.json ? `${JSON.stringify({ ok: failed.length === 0, checks: shown }, null, 2)}\n` : formatChecks(shown, outputWidth(process.stdout)));
  return checkExitCode(results);
}

/** Pure: 0 when nothing failed; 2 when a failure is bad configuration (CheckResult.configuration); else 1. */
export function checkExitCode(results: readonly CheckResult[]): number {
  const failed = results.filter((r) => r.status === 'failed');
  if (failed.length === 0) return 0;
  return failed.some((r) => r.configuration) ? 2 : 1;
}


/**
 * The one upstream client, as a sync uses it, made to ask once: a refusal, an error or a 5xx
 * is the answer (never retried); a Retry-After is honoured once, for a while. Its budget is
 * this process's own: the shared one lives in Redis or the warehouse, which a check does not
 * write. Nothing is recorded.
 */
function checkClient(config: Config, logger: Logger) {
  return createUpstream({
    config: { ...config, maxAttempts: 1, maxRateWaitMs: Math.min(config.maxRateWaitMs, CHECK_RATE_WAIT_MS) },
    budget: new InProcessBudget(),
    logger,
    secrets: config.secrets,
    retry: { maxRateLimitRetries: 1, invalidJsonRetries: 0 },
  });
}

const LABEL: Readonly<Record<CheckResult['status'], string>> = { ok: 'ok', failed: 'FAIL', skipped: 'skip' };

/**
 * Pure: one check per line: its verdict, the variable, what was found, broken between words
 * to `columns` (a terminal wraps a long line mid-word), the rest under the first line's text.
 */
export function formatChecks(results: readonly CheckResult[], columns = Infinity): string {
  const width = Math.max(0, ...results.map((r) => r.variable.length));
  const indent = ' '.repeat(4 + 2 + width + 2);
  return results.map((r) => `${wrapToWidth(`${LABEL[r.status].padEnd(4)}  ${r.variable.padEnd(width)}  ${r.message}`, columns, indent).join('\n')}\n`).join('');
}
