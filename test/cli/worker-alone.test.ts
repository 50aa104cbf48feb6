// Issue 33's promise, as a new user meets it: `tesync worker` with nothing installed. A network
// namespace of its own with only loopback (`unshare -n`: no Redis, no Postgres of the machine
// reachable), a fresh TE_DATA_DIR, no REDIS_URL, no DATABASE_URL: the worker starts the embedded
// warehouse, keeps its queues there, runs a scheduled walk and an enqueued one to `succeeded`, and
// not one connection reaches the port Redis would listen on. The fixture does the work inside
// the namespace (test/helpers/worker-alone-run.ts) and says what happened.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';

const run = promisify(execFile);
const FIXTURE = fileURLToPath(new URL('../helpers/worker-alone-run.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('tesync worker with nothing else installed', () => {
  it('on the embedded warehouse, without Redis or a network: a scheduled walk and an enqueued one succeed; no Redis connection is attempted', async () => {
    requireBinary('unshare', 'util-linux');
    requireBinary('ip', 'iproute2');
    const dir = mkdtempSync(path.join(tmpdir(), 'tesync-alone-'));
    // The embedded server runs as another user when we are root: it must enter the folder.
    chmodSync(dir, 0o755);
    try {
      // As root a network namespace of its own; as a user, inside a user namespace too.
      const unshare = userInfo().uid === 0 ? ['-n'] : ['-rn'];
      const script = `ip link set lo up && exec "${process.execPath}" --import tsx "${FIXTURE}" "${dir}"`;
      const { stdout } = await run('unshare', [...unshare, 'sh', '-c', script], {
        cwd: ROOT,
        // TEST_PATIENCE too: the fixture's own hang guards scale as this test's do.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...(process.env.TEST_PATIENCE ? { TEST_PATIENCE: process.env.TEST_PATIENCE } : {}) },
        timeout: patience(170_000),
        maxBuffer: 16 << 20,
      });
      const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
      expect(out.error, JSON.stringify(out)).toBeUndefined();
      // The trap listened where Redis would be, and nothing came.
      expect(out.traps).toBeGreaterThanOrEqual(1);
      expect(out.redisAttempts).toEqual([]);
      expect(out.workerMentionsRedis).toBe(false);
      expect(out.location).toMatch(/embedded Postgres server/);
      expect(out.scheduled).toEqual({ status: 'succeeded', trigger: 'schedule' });
      expect(out.enqueue.code, out.enqueue.stderr).toBe(0);
      expect(out.enqueue.outcome.status).toBe('succeeded');
      expect(out.enqueue.outcome.stats.failed).toBe(0);
      expect(out.health).toEqual({ status: 'ok', queues: 'ok', postgres: 'ok' });
      expect(out.runs.every((r: { backend: string }) => r.backend === 'postgres')).toBe(true);
      expect(out.runs.some((r: { trigger: string; status: string }) => r.trigger === 'manual' && r.status === 'succeeded')).toBe(true);
      expect(out.workerErrors).toEqual([]);
      expect(out.workerExit).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, patience(180_000));
});
