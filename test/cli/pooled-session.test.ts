// A warehouse behind PgBouncer in session mode (issue 60 item 3), run as a user runs it: a
// session pooler is a session, and `tesync sync`, `tesync worker` on Redis, `tesync status
// --serve` and `tesync export` work through it unchanged, nothing else set. The Postgres queue
// backend is the exception: BullMQ sets its schema's search_path with the startup parameter
// `options`, which PgBouncer 1.18 refuses in any mode; tesync says so at start (exit 2, naming
// TE_DATABASE_SESSION_URL and the fix), and with it the worker walks.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { checks, exportThrough, serveStatusOnce, syncThrough, usePooledWarehouse, workerWalk } from '../helpers/pooled-warehouse.ts';

describe('tesync behind PgBouncer in session mode', () => {
  const fx = usePooledWarehouse('session');

  it('tesync sync migrates and walks through it', async () => {
    const { cli, runs } = await syncThrough(fx);
    expect(cli.code, cli.stderr).toBe(0);
    expect(runs).toEqual([{ status: 'succeeded' }]);
  }, patience(150_000));

  it('tesync check says it goes through a pooler in session mode', async () => {
    const check = await runCli(['check', '--json'], fx.env());
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(checks(check.stdout)).toContainEqual(expect.objectContaining({ variable: 'DATABASE_URL', status: 'ok', message: expect.stringMatching(/^goes through a pooler in session mode/) }));
  }, patience(60_000));

  it('tesync worker on the redis queue backend walks what enqueue --wait queues', async () => {
    const walk = await workerWalk(await fx.workerEnv('redis'));
    expect(walk.enqueue.code, walk.enqueue.stderr + walk.worker.stderr()).toBe(0);
    expect(walk.run).toEqual({ status: 'succeeded', backend: 'redis' });
    expect(walk.errors).toEqual([]);
  }, patience(150_000));

  it('tesync worker on the postgres queue backend: exit 2 naming TE_DATABASE_SESSION_URL, then walks with it', async () => {
    const refused = await runCli(['worker'], await fx.workerEnv('postgres'), { timeoutMs: 60_000 });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/^tesync: configuration error: TE_DATABASE_SESSION_URL: is needed for the Postgres queue backend: BullMQ connects with a startup parameter .* that the pooler at 127\.0\.0\.1:\d+\/\S+ refuses \("unsupported startup parameter: options"\); set TE_DATABASE_SESSION_URL to a direct URL of DATABASE_URL's database, or set REDIS_URL/m);
    const walk = await workerWalk(await fx.workerEnv('postgres', { TE_DATABASE_SESSION_URL: fx.db.databaseUrl }));
    expect(walk.enqueue.code, walk.enqueue.stderr + walk.worker.stderr()).toBe(0);
    expect(walk.run).toEqual({ status: 'succeeded', backend: 'postgres' });
    expect(walk.errors).toEqual([]);
  }, patience(180_000));

  it('tesync status --serve serves the page', async () => {
    const page = await serveStatusOnce(fx.env());
    expect(page.status).toBe(200);
    expect(Array.isArray(page.groups)).toBe(true);
  }, patience(90_000));

  it('tesync export writes the warehouse out', async () => {
    const { cli, files } = await exportThrough(fx, fx.env());
    expect(cli.code, cli.stderr).toBe(0);
    expect(files).toBeGreaterThan(10);
  }, patience(120_000));
});
