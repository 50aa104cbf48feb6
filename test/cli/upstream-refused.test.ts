// `tesync sync` against an upstream that refuses the connection, or on a port Node's fetch
// will not use, as the real CLI: the roots (the token lists) are tried once each (not 3 job
// tries x 5 request attempts), nothing else is planned, exit 1, and one line per source names
// the cause, the address and the variable. Every attempt is in sync.requests without a
// status. No key is printed. Attempts are counted here; how long it takes belongs to benches.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { freePort } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';
import { freshWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey } from '../helpers/services.ts';

const APP_KEY = canaryKey('app');
const GW_KEY = canaryKey('gw');

type Where = 'refused' | 'port 6000' | 'port 10080';

interface Case {
  name: string;
  app?: Where;
  gateway?: Where;
}

/** The root of each source: the request its walk starts with (the app's catalog, the gateway's token list). */
const ROOT = { app: '/api/v1/metrics', gateway: '/v1/tokens' } as const;

const CASES: Case[] = [
  { name: 'the app host refuses', app: 'refused' },
  { name: 'the gateway refuses', gateway: 'refused' },
  { name: 'the app host on port 6000', app: 'port 6000' },
  { name: 'the gateway on port 10080', gateway: 'port 10080' },
  { name: 'both: the app host on port 6000, the gateway refuses', app: 'port 6000', gateway: 'refused' },
];

async function baseUrl(where: Where): Promise<string> {
  if (where === 'refused') return `http://127.0.0.1:${await freePort()}`;
  return `http://127.0.0.1:${where === 'port 6000' ? 6000 : 10080}`;
}

/** The one line a source's failure should print (stderr), and the error its request records. */
function expected(source: 'app' | 'gateway', where: Where, url: string): { line: RegExp; error: string } {
  const variable = source === 'app' ? 'TE_APP_URL' : 'TE_GATEWAY_URL';
  const name = source === 'app' ? 'app host' : 'gateway';
  const port = new URL(url).port;
  const error = where === 'refused' ? `connection refused by 127.0.0.1:${port} (${variable})` : `port ${port} is one Node's fetch refuses to use (${variable})`;
  const escaped = error.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { line: new RegExp(`^tesync: Could not connect to the ${name}: ${escaped}; `), error };
}

describe('tesync sync against an upstream it cannot connect to', () => {
  for (const c of CASES) {
    it(`${c.name}: one attempt per root, exit 1, one line naming the cause and the variable`, async () => {
      // Its own warehouse: a warehouse is bound to the upstream it mirrors.
      const { warehouse: w, databaseUrl } = await freshWarehouse();
      const env: Record<string, string> = { DATABASE_URL: databaseUrl };
      const urls: Partial<Record<'app' | 'gateway', string>> = {};
      if (c.app) {
        urls.app = await baseUrl(c.app);
        Object.assign(env, { TE_APP_URL: urls.app, TE_APP_API_KEY: APP_KEY });
      }
      if (c.gateway) {
        urls.gateway = await baseUrl(c.gateway);
        Object.assign(env, { TE_GATEWAY_URL: urls.gateway, TE_GATEWAY_API_KEY: GW_KEY });
      }

      const r = await runCli(['sync'], env, { timeoutMs: 60_000 });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/^Sync failed in /);
      expect(r.stdout + r.stderr).not.toContain(APP_KEY);
      expect(r.stdout + r.stderr).not.toContain(GW_KEY);
      const hintLines = r.stderr.split('\n').filter((l) => l.startsWith('tesync: '));
      const sources = (['app', 'gateway'] as const).filter((s) => c[s] !== undefined);
      for (const s of sources) {
        const { line } = expected(s, c[s]!, urls[s]!);
        // One line about this source's URL variable, and it is the one that names the cause.
        const about = hintLines.filter((l) => l.includes(s === 'app' ? 'TE_APP_URL' : 'TE_GATEWAY_URL'));
        expect(about, `${s}: ${r.stderr}`).toHaveLength(1);
        expect(about[0]).toMatch(line);
      }

      const requests = await w.query<{ source: string; path: string; http_status: number | null; attempt: number; error: string | null }>(
        sql`select source, path, http_status, attempt, error from sync.requests order by source`,
      );
      // One attempt per root: not retried by the client, nor the job again.
      expect(requests).toEqual(sources.map((s) => ({ source: s, path: ROOT[s], http_status: null, attempt: 1, error: expected(s, c[s]!, urls[s]!).error })));
      const runs = await w.query<{ status: string }>(sql`select status from sync.runs`);
      expect(runs).toEqual([{ status: 'failed' }]);
    }, patience(90_000));
  }
});
