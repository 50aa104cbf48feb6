import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/lib/config.ts';
import { VARIABLES } from '../../src/lib/variables.ts';

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const c = loadConfig({});
    expect(c.app).toBeUndefined();
    expect(c.gateway).toBeUndefined();
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toBe('./.tesync');
    expect(c.redisUrl).toBeUndefined();
    expect(c.logLevel).toBe('info');
    expect(c.gatewayHistoryPeriods).toEqual(['365d']);
    expect(c.gatewayChartTimeframes).toEqual(['all']);
    expect(c.secrets).toEqual([]);
  });

  it('turns the sources on from their URLs and trims trailing slashes', () => {
    const c = loadConfig({
      TE_APP_URL: 'https://app.example.com/',
      TE_GATEWAY_URL: 'https://gw.example.com',
      TE_GATEWAY_API_KEY: 'gw_key_123456',
    });
    expect(c.app).toEqual({ url: 'https://app.example.com', apiKey: undefined });
    expect(c.gateway).toEqual({ url: 'https://gw.example.com', apiKey: 'gw_key_123456' });
    expect(c.secrets).toEqual(['gw_key_123456']);
  });

  it('requires the gateway key when the gateway URL is set', () => {
    const err = errorOf({ TE_GATEWAY_URL: 'https://gw.example.com' });
    expect(err.variable).toBe('TE_GATEWAY_API_KEY');
    expect(err.message).toMatch(/^TE_GATEWAY_API_KEY: is required when TE_GATEWAY_URL is set/);
  });

  it.each([
    ['TE_APP_URL', 'not a url'],
    ['TE_APP_URL', 'ftp://x.example.com'],
    ['TE_APP_URL', 'https://user:pw@x.example.com'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['REDIS_URL', 'localhost:6379'],
    ['LOG_LEVEL', 'loud'],
    ['TE_CONCURRENCY', '0'],
    ['TE_CONCURRENCY', '2.5'],
    ['TE_REQUEST_TIMEOUT_MS', 'soon'],
    ['TE_GATEWAY_HISTORY_PERIODS', '365d,2y'],
    ['TE_GATEWAY_CHART_TIMEFRAMES', 'forever'],
  ])('names %s when it is %j', (variable, value) => {
    const err = errorOf({ [variable]: value });
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`${variable}: `)).toBe(true);
    expect(err.message).toContain('example:');
  });

  it('parses lists and numbers', () => {
    const c = loadConfig({ TE_GATEWAY_HISTORY_PERIODS: ' 30d, 365d ,30d', TE_CONCURRENCY: '16', TE_GATEWAY_CHART_TIMEFRAMES: 'all,7d' });
    expect(c.gatewayHistoryPeriods).toEqual(['30d', '365d']);
    expect(c.gatewayChartTimeframes).toEqual(['all', '7d']);
    expect(c.concurrency).toBe(16);
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig({ TE_APP_URL: '', LOG_LEVEL: '' }).app).toBeUndefined();
  });

  it('counts connection-string passwords as secrets', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u:s3cr%40t@db:5432/x' });
    expect(c.secrets).toContain('s3cr%40t');
    expect(c.secrets).toContain('s3cr@t');
  });

  it('TE_DATABASE_SESSION_URL: its password a secret, only beside DATABASE_URL, read as DATABASE_URL is', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u@pooler:6432/x', TE_DATABASE_SESSION_URL: 'postgres://u:dir%23ect@db:5432/x' });
    expect(c.databaseSessionUrl).toBe('postgres://u:dir%23ect@db:5432/x');
    expect(c.secrets).toEqual(expect.arrayContaining(['dir%23ect', 'dir#ect']));
    expect(() => loadConfig({ TE_DATABASE_SESSION_URL: 'postgres://u@db:5432/x' })).toThrow(/^TE_DATABASE_SESSION_URL: is set but DATABASE_URL is not/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@pooler:6432/x', TE_DATABASE_SESSION_URL: 'mysql://db/x' })).toThrow(/^TE_DATABASE_SESSION_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@pooler:6432/x', TE_DATABASE_SESSION_URL: 'postgres://u:50%@db:5432/x' })).toThrow(/^TE_DATABASE_SESSION_URL: its password is not percent-encoded right/);
  });

  it('documents every variable with a description and an example', () => {
    for (const [name, doc] of Object.entries(VARIABLES)) {
      expect(doc.description.length, name).toBeGreaterThan(10);
      expect(doc.example.length, name).toBeGreaterThan(0);
    }
  });
});
