// Canary keys planted in every secret variable must never come out of the process:
// not on stdout, not in a log line, not in an error message.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';
import { canaryKey } from '../helpers/services.ts';

describe('secrets never reach the output', () => {
  const db = useTestDatabase();
  const appKey = canaryKey('app');
  const gatewayKey = canaryKey('gw');
  const dbPassword = canaryKey('pg');

  function withPassword(url: string): string {
    const u = new URL(url);
    u.password = dbPassword; // trust auth ignores it, so the connection still works
    return u.toString();
  }

  it('at trace level, through a successful command and through failures', async () => {
    const base = { LOG_LEVEL: 'trace', TE_APP_URL: 'http://127.0.0.1:9', TE_APP_API_KEY: appKey, TE_GATEWAY_URL: 'http://127.0.0.1:9', TE_GATEWAY_API_KEY: gatewayKey };
    const runs = await Promise.all([
      runCli(['migrate'], { ...base, DATABASE_URL: withPassword(db.databaseUrl) }),
      runCli(['migrate'], { ...base, DATABASE_URL: `postgres://postgres:${dbPassword}@127.0.0.1:1/x` }),
      runCli(['migrate'], { ...base, TE_GATEWAY_URL: `not-a-url-${gatewayKey}` }),
      runCli(['migrate'], { ...base, LOG_LEVEL: 'loud' }),
    ]);
    expect(runs.map((r) => r.code)).toEqual([0, 1, 2, 2]);
    const everything = runs.map((r) => r.stdout + r.stderr).join('\n');
    expect(everything.length).toBeGreaterThan(100);
    for (const secret of [appKey, gatewayKey, dbPassword]) expect(everything).not.toContain(secret);
  });
});
