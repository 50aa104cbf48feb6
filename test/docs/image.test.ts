// The image builds and runs (issue 60 item 4), with no Docker engine: the Dockerfile is read and
// run here, step by step, in a clean copy of the tree. Every COPY source is in the tree (tracked,
// or new and not ignored) and not left out of the build context by .dockerignore; its RUN steps
// (`npm ci --omit=dev`, with the npm registry, this machine's package cache seeded into one of
// the test's own, which `npm cache clean` then empties) and its entry point run in a temporary
// folder standing for WORKDIR, holding only what the COPY steps put there: `--help`, the
// default command's `--help`, and `check` against a database of the test and the simulator.
// docker-compose.yml publishes Postgres off the local ports (5432, 6379) and can scale its
// workers (`docker compose up --scale worker=3`): no container_name, no fixed host port.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { patience } from '../helpers/patience.ts';
import { useSimulator, useTestDatabase } from '../helpers/mirror-fixture.ts';
import { canaryKey } from '../helpers/services.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = pending + line;
    pending = '';
    const m = /^(\w+)\s+(.*)$/.exec(whole);
    if (m) out.push({ op: m[1]!.toUpperCase(), args: m[2]! });
  }
  return out;
}

/** A JSON array (exec form) or words (shell form). */
const words = (args: string): string[] => (args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/).filter(Boolean));

/** A COPY's sources and destination, its flags left out. */
function copyOf(args: string): { from: boolean; sources: string[]; dest: string } {
  const all = words(args);
  const flags = all.filter((w) => w.startsWith('--'));
  const rest = all.filter((w) => !w.startsWith('--'));
  return { from: flags.some((f) => f.startsWith('--from')), sources: rest.slice(0, -1), dest: rest.at(-1)! };
}

const dockerfile = instructions(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));

/** The files of `source` a clean clone's build context holds: tracked, or new and not ignored. */
async function treeFiles(source: string): Promise<string[]> {
  const { stdout } = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', source], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  return stdout.split('\n').filter((f) => f !== '' && existsSync(path.join(ROOT, f)));
}

describe('Dockerfile', () => {
  it('copies only what the tree holds, none of it left out by .dockerignore', async () => {
    const copies = dockerfile.filter((i) => i.op === 'COPY' || i.op === 'ADD').map((i) => copyOf(i.args));
    expect(copies.length).toBeGreaterThan(3);
    const ignore = existsSync(path.join(ROOT, '.dockerignore'))
      ? readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim().replace(/^\/|\/$/g, '')).filter((l) => l !== '' && !l.startsWith('#'))
      : [];
    for (const c of copies.filter((x) => !x.from)) {
      for (const source of c.sources) {
        expect(existsSync(path.join(ROOT, source)), `COPY ${source}: no such file or folder`).toBe(true);
        expect((await treeFiles(source)).length, `COPY ${source}: nothing of it in the tree`).toBeGreaterThan(0);
        expect(ignore.filter((p) => p === source.replace(/\/$/, '') || source.startsWith(`${p}/`)), `COPY ${source}: left out by .dockerignore`).toEqual([]);
      }
    }
  });

  describe('run in a clean copy of the tree', () => {
    let dir: string;
    let workdir: string;
    let entry: string[] = [];
    let cmd: string[] = [];
    let env: Record<string, string>;
    const appKey = canaryKey('imageapp');
    const gatewayKey = canaryKey('imagegw');
    const db = useTestDatabase({ migrated: true });
    const fx = useSimulator({ tokens: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'tesync-image-'));
    }, patience(60_000));

    afterAll(async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, patience(60_000));

    it('installs as its RUN steps say, from what its COPY steps put there', async () => {
      const cache = path.join(dir, 'npm-cache');
      await seedCache(cache);
      env = { PATH: process.env.PATH ?? '', HOME: path.join(dir, 'home'), npm_config_cache: cache, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };
      mkdirSync(env.HOME!, { recursive: true });
      workdir = path.join(dir, 'root');
      mkdirSync(workdir, { recursive: true });
      const at = (p: string) => path.join(dir, 'root', p);
      for (const i of dockerfile) {
        if (i.op === 'WORKDIR') {
          workdir = at(i.args);
          mkdirSync(workdir, { recursive: true });
        } else if (i.op === 'ENV') {
          for (const m of i.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
        } else if (i.op === 'COPY' || i.op === 'ADD') {
          const c = copyOf(i.args);
          const dest = path.resolve(workdir, c.dest);
          for (const source of c.sources) {
            const files = await treeFiles(source);
            const isFolder = !(files.length === 1 && files[0] === source);
            for (const f of files) {
              const target = isFolder ? path.join(dest, path.relative(source, f)) : c.dest.endsWith('/') ? path.join(dest, path.basename(f)) : dest;
              mkdirSync(path.dirname(target), { recursive: true });
              cpSync(path.join(ROOT, f), target);
            }
          }
        } else if (i.op === 'RUN') {
          const r = await shell(i.args, workdir, env, patience(300_000));
          expect(r.code, `RUN ${i.args}:\n${r.output.slice(-3000)}`).toBe(0);
        } else if (i.op === 'ENTRYPOINT') entry = words(i.args);
        else if (i.op === 'CMD') cmd = words(i.args);
      }
      expect(existsSync(path.join(workdir, 'node_modules', 'tsx'))).toBe(true);
      expect(existsSync(path.join(workdir, 'node_modules', 'vitest')), 'dev dependencies left out').toBe(false);
      expect(entry.length).toBeGreaterThan(0);
    }, patience(330_000));

    it('its entry point starts: --help, the default command, check', async () => {
      expect(entry.length, 'the install ran').toBeGreaterThan(0);
      const start = (args: string[], extra: Record<string, string> = {}) => exec([...entry, ...args], workdir, { ...env, ...extra }, patience(90_000));
      const help = await start(['--help']);
      expect(help.code, help.output).toBe(0);
      expect(help.output).toMatch(/^Usage: tesync <command>/);
      const worker = await start([...cmd, '--help']);
      expect(worker.code, worker.output).toBe(0);
      expect(worker.output).toMatch(/^Usage: tesync worker/);
      const check = await start(['check', '--json'], { DATABASE_URL: db.databaseUrl, TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey });
      expect(check.code, check.output).toBe(0);
      const checks = (JSON.parse(check.stdout) as { checks: { variable: string; status: string }[] }).checks;
      expect(checks.map((c) => `${c.variable} ${c.status}`)).toEqual(['DATABASE_URL ok', 'TE_APP_URL ok', 'TE_APP_API_KEY ok', 'TE_GATEWAY_URL ok', 'TE_GATEWAY_API_KEY ok']);
    }, patience(300_000));
  });
});

describe('docker-compose.yml', () => {
  type Service = { build?: unknown; image?: string; container_name?: string; ports?: (string | { published?: string | number })[] };
  const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
  /** A published port's host side, `${VAR:-default}` read as its default; undefined when none is fixed. */
  const hostPort = (p: string | { published?: string | number }): string | undefined => {
    const spec = typeof p === 'string' ? p : String(p.published ?? '');
    const resolved = spec.replace(/\$\{\w+:-([^}]*)\}/g, '$1');
    const parts = resolved.split(':');
    return typeof p === 'string' ? (parts.length >= 2 ? parts.at(-2) : undefined) : resolved || undefined;
  };

  it('scales its workers: built from the Dockerfile, no container_name, no fixed host port', () => {
    const worker = compose.services.worker!;
    expect(worker.build).toBe('.');
    expect(worker.container_name).toBeUndefined();
    expect((worker.ports ?? []).map(hostPort).filter((p) => p !== undefined && p !== '')).toEqual([]);
  });

  it('publishes no port a local Postgres or Redis usually holds', () => {
    const published = Object.entries(compose.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, port: hostPort(p) })));
    expect(published.filter((p) => p.port === '5432' || p.port === '6379')).toEqual([]);
    for (const p of published) expect(p.port, `${p.name}: a fixed host port`).toMatch(/^\d+$/);
  });
});

/** The machine's npm cache (as `npm ci` left it) in `cache`: its contents hard-linked, its index copied, so nothing the test's npm does reaches the original. */
async function seedCache(cache: string): Promise<void> {
  const { stdout } = await run('npm', ['config', 'get', 'cache']);
  const from = path.join(stdout.trim(), '_cacache');
  mkdirSync(path.join(cache, '_cacache'), { recursive: true });
  if (!existsSync(path.join(from, 'content-v2'))) return;
  try {
    await run('cp', ['-al', path.join(from, 'content-v2'), path.join(cache, '_cacache/')]);
  } catch {
    // Another file system: the registry serves what the cache cannot.
    return;
  }
  if (existsSync(path.join(from, 'index-v5'))) cpSync(path.join(from, 'index-v5'), path.join(cache, '_cacache', 'index-v5'), { recursive: true });
}

interface Ran {
  code: number | null;
  stdout: string;
  /** stdout and stderr as they came. */
  output: string;
}

function exec(argv: string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, output });
    });
  });
}

const shell = (command: string, cwd: string, env: Record<string, string>, timeoutMs: number) => exec(['sh', '-c', command], cwd, env, timeoutMs);
