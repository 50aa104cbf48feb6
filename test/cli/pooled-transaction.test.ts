// A warehouse behind PgBouncer in transaction mode (issue 60 item 3), run as a user runs it:
// without TE_DATABASE_SESSION_URL every command refuses at start (exit 2), naming it and the
// fix, and writes nothing; with it (a direct URL of the same database) `tesync sync`, `tesync
// worker` on both queue backends, `tesync status --serve` and `tesync export` work, the
// warehouse's reads and writes through the pooler and what needs a session past it.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { checks, exportThrough, serveStatusOnce, syncThrough, usePooledWarehouse, workerWalk } from '../helpers/pooled-warehouse.ts';

describe('tesync behind PgBouncer in transaction mode', () => {
  const fx = usePooledWarehouse('transaction');
  const direct = () => ({ TE_DATABASE_SESSION_URL: fx.db.databaseUrl });

  it('without TE_DATABASE_SESSION_URL: exit 2 at start, naming it and the fix, nothing written', async () => {
    for (const args of [['sync'], ['status']]) {
      const r = await runCli(args, fx.env());
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/^tesync: configuration error: TE_DATABASE_SESSION_URL: is needed: DATABASE_URL reaches Postgres at 127\.0\.0\.1:\d+\/\S+ through a pooler that does not keep a server session per connection \(PgBouncer's pool_mode = transaction/m);
      expect(r.stderr).toContain('Set TE_DATABASE_SESSION_URL to a direct URL of the same database');
    }
    const check = await runCli(['check', '--json'], fx.env());
    expect(check.code, check.stdout).toBe(2);
    expect(checks(check.stdout)).toContainEqual(expect.objectContaining({ variable: 'TE_DATABASE_SESSION_URL', status: 'failed', message: expect.stringMatching(/^is needed: DATABASE_URL reaches Postgres at/) }));
    expect(await fx.query("select to_regnamespace('sync') as s")).toEqual([{ s: null }]);
  }, patience(60_000));

  it('tesync check says where the sessions go', async () => {
    const check = await runCli(['check', '--json'], fx.env(direct()));
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(checks(check.stdout)).toContainEqual(expect.objectContaining({ variable: 'TE_DATABASE_SESSION_URL', status: 'ok', message: expect.stringMatching(/^Postgres at 127\.0\.0\.1:\d+\/\S+ keeps sessions and is DATABASE_URL's database/) }));
  }, patience(60_000));

  it('tesync sync migrates and walks', async () => {
    const { cli, runs } = await syncThrough(fx, direct());
    expect(cli.code, cli.stderr).toBe(0);
    expect(runs).toEqual([{ status: 'succeeded' }]);
    const [rows] = await fx.query<{ n: number }>('select count(*)::int as n from app.tokens');
    expect(rows!.n).toBe(2);
  }, patience(150_000));

  it.each(['redis', 'postgres'] as const)('tesync worker on the %s queue backend walks what enqueue --wait queues', async (backend) => {
    const walk = await workerWalk(await fx.workerEnv(backend, direct()));
    expect(walk.enqueue.code, walk.enqueue.stderr + walk.worker.stderr()).toBe(0);
    expect(walk.run).toEqual({ status: 'succeeded', backend });
    expect(walk.errors).toEqual([]);
  }, patience(150_000));

  it('tesync status --serve serves the page', async () => {
    const page = await serveStatusOnce(fx.env(direct()));
    expect(page.status).toBe(200);
    expect(Array.isArray(page.groups)).toBe(true);
  }, patience(90_000));

  it('tesync export writes the warehouse out', async () => {
    const { cli, files } = await exportThrough(fx, fx.env(direct()));
    expect(cli.code, cli.stderr).toBe(0);
    expect(files).toBeGreaterThan(10);
  }, patience(120_000));
});
