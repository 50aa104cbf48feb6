// Only a real answer binds (issue 45): a first `tesync sync` whose TE_APP_URL is on a wrong port
// (nobody answers) fails, and the right URL then syncs without --force; no rebinding is
// logged, and the warehouse is bound to the upstream that answered. A warehouse with data of
// its upstream is still refused another one.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { freePort } from '../helpers/own-servers.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';

describe('a warehouse is bound by the first upstream that answers', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 3, chartsPerToken: 1 });

  it('a wrong port first, then the right URL: exit 0 without --force, no rebinding logged', async () => {
    const wrong = `http://127.0.0.1:${await freePort()}`;
    const first = await runCli(['sync', '--source', 'app'], { DATABASE_URL: fx.databaseUrl, TE_APP_URL: wrong }, { timeoutMs: 60_000 });
    expect(first.code, first.stdout + first.stderr).toBe(1);

    const right = await runCli(['sync', '--source', 'app'], { DATABASE_URL: fx.databaseUrl, TE_APP_URL: fx.sim.url }, { timeoutMs: 120_000 });
    expect(right.code, right.stdout + right.stderr).toBe(0);
    const [binding] = await fx.warehouse.query<{ port: number | null }>(sql`select port from sync.upstream_bindings where source = 'app'`);
    expect(binding!.port).toBe(Number(new URL(fx.sim.url).port));
    const events = await fx.warehouse.query<{ event: string }>(sql`select event from sync.upstream_binding_log where source = 'app' order by at`);
    expect(events.map((e) => e.event)).not.toContain('rebound');

    // Now it holds data of that upstream: another one is refused, as ever.
    const other = await runCli(['sync', '--source', 'app'], { DATABASE_URL: fx.databaseUrl, TE_APP_URL: wrong }, { timeoutMs: 60_000 });
    expect(other.code, other.stdout + other.stderr).toBe(2);
    expect(other.stderr).toMatch(/mirrors another upstream/);
  }, patience(240_000));
});
