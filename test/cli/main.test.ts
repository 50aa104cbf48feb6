// Errors a person can act on: which source or variable, where, and no stack traces.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useSimulator, useTestDatabase } from '../helpers/mirror-fixture.ts';
import { canaryKey } from '../helpers/services.ts';

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('errors a person can act on', () => {
  const goodKey = canaryKey('good');
  const badKey = canaryKey('bad');
  const fx = useSimulator({ tokens: 3, gatewayKeys: [goodKey] });
  const db = useTestDatabase();
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tesync-errors-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a refused key says which key, exit 1, and never prints it', async () => {
    const r = await runCli(['sync'], { TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: badKey, DATABASE_URL: db.databaseUrl }, { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('The gateway refused the API key in TE_GATEWAY_API_KEY (401 unauthorized)');
    expect(r.stdout + r.stderr).not.toContain(badKey);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('an upstream that refuses the connection says which and where', async () => {
    const port = await closedPort();
    const r = await runCli(['sync'], { TE_APP_URL: `http://127.0.0.1:${port}`, TE_MAX_ATTEMPTS: '2', DATABASE_URL: db.databaseUrl }, { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Could not connect to the app host: connection refused by 127.0.0.1:${port} (TE_APP_URL)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('no source configured: exit 2 naming the variables', async () => {
    const r = await runCli(['sync'], { DATABASE_URL: db.databaseUrl }, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TE_APP_URL');
  });

  it('a bad number for demo --tokens: exit 2 naming the flag, nothing started', async () => {
    for (const tokens of ['abc', '0', '-3', '2.5']) {
      const r = await runCli(['demo', `--tokens=${tokens}`], { TE_DATA_DIR: path.join(dir, 'demo-never') }, { cwd: dir });
      expect(r.code, tokens).toBe(2);
      expect(r.stderr.trim()).toBe(`tesync: --tokens must be a whole number from 1 to 100000, not ${JSON.stringify(tokens)}`);
    }
    expect(existsSync(path.join(dir, 'demo-never'))).toBe(false);
  });

  it('bad configuration: exit 2 naming the variable with an example', async () => {
    const r = await runCli(['sync'], { TE_APP_URL: 'app.example.com' }, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('tesync: configuration error: TE_APP_URL: must be an http(s) URL without credentials (example: TE_APP_URL=https://app.example.com)');
  });

  it('a .env file in the working folder is read, and the environment wins over it', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(dir, '.env'), 'TE_APP_URL=not a url\nLOG_LEVEL=loud\n');
    const fromFile = await runCli(['migrate'], {}, { cwd: dir });
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain('TE_APP_URL');
    const overridden = await runCli(['migrate'], { TE_APP_URL: 'http://127.0.0.1:1', LOG_LEVEL: 'warn', DATABASE_URL: db.databaseUrl }, { cwd: dir });
    expect(overridden.code).toBe(0);
    await rm(path.join(dir, '.env'));
  });
});
