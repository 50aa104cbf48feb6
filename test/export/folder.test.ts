// The export folder never lies and is never trusted (issue 56): a `tesync export` killed with
// SIGKILL at 20 points of its run leaves a manifest whose every file is there with its sha256
// and rows, and the next export completes and leaves nothing behind; a tampered manifest
// cannot make an export touch a folder outside DIR, a garbled one gets a message and
// `--rebuild`; `--as-of` reads alike in every time zone, to the microsecond; each file's entry
// carries the types that file holds.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportWarehouse } from '../../src/export/export.ts';
import type { Manifest } from '../../src/export/manifest.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { childEnv, runCli } from '../helpers/cli.ts';
import { compiledScript } from '../helpers/compiled-bin.ts';
import { patience } from '../helpers/patience.ts';
import type { TestLogger, TestWarehouse } from '../helpers/services.ts';
import { syncedTwice, type SyncedTwice } from './synced-twice.ts';

const KILLER = compiledScript('test/export/kill-export.ts');

let fixture: SyncedTwice;
let tw: TestWarehouse;
let w: Warehouse;
let log: TestLogger;
let duck: DuckDBConnection;
/** An export of the first sync: what every killed export starts from. */
let base: string;
/** Between the two syncs, as the server printed it in UTC without a zone (`YYYY-MM-DD HH:MM:SS.ffffff`). */
let between: string;
const newDir = () => fixture.newDir();
const copyOf = (from: string) => {
  const d = newDir();
  cpSync(from, d, { recursive: true });
  return d;
};

beforeAll(async () => {
  fixture = await syncedTwice(async (first, s) => {
    base = s.newDir();
    await exportWarehouse(first, s.log.logger, { to: base });
  });
  ({ tw, w, log, duck } = fixture);
  between = (await w.query<{ t: string }>(sql`select to_char((clock_timestamp() - interval '2 days') at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') || '.123456' as t`))[0]!.t;
  // A day the archive no longer holds (its file goes) and a day rewritten by a late commit.
  await w.query(sql.raw(`delete from app.screener_daily where snapshot_date = (select min(snapshot_date) from app.screener_daily)`));
  await w.query(sql.raw(`update app.token_snapshots_daily set fetched_at = fetched_at where snapshot_date = (select min(snapshot_date) from app.token_snapshots_daily)`));
}, patience(180_000));

afterAll(async () => {
  await fixture?.close();
});

const manifestOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, '_manifest.json'), 'utf8')) as Manifest;
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const rowsIn = async (file: string) => Number((await duck.runAndReadAll(`select count(*)::BIGINT as n from read_parquet('${file}')`)).getRowObjectsJson()[0]!.n);

/** Every entry's file is there, with the entry's sha256 and rows. */
async function matchesFiles(dir: string, label: string): Promise<Manifest> {
  const m = manifestOf(dir);
  for (const f of m.files) {
    const file = path.join(dir, f.path);
    expect(existsSync(file), `${label}: ${f.path} is listed and missing`).toBe(true);
    expect(sha256(file), `${label}: ${f.path} sha256`).toBe(f.sha256);
    expect(await rowsIn(file), `${label}: ${f.path} rows`).toBe(f.rows);
  }
  return m;
}

/** Every file in the folder, relative (`/`). */
function filesIn(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as { name: string; parentPath: string; isFile(): boolean }[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

/** What a manifest says, without the names and times of one export. */
const contents = (m: Manifest) => m.files.map((f) => `${f.table} ${f.kind} ${f.partition ?? ''} ${f.asOf ?? ''} ${f.rows}`).sort();

function killedAt(dir: string, n: number): Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KILLER, tw.databaseUrl, dir, String(n)], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), patience(120_000));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('tesync export: the folder never lies', () => {
  it('killed with SIGKILL at 20 points, the manifest still matches its files; the next export completes and leaves nothing behind', async () => {
    // The whole run once, its steps counted, and the folder it leaves.
    const whole = copyOf(base);
    const steps: string[] = [];
    await exportWarehouse(w, log.logger, { to: whole, onStep: (s) => void steps.push(s) });
    const done = await matchesFiles(whole, 'uninterrupted');
    expect(filesIn(whole)).toEqual([...done.files.map((f) => f.path), '_manifest.json'].sort());
    expect(steps.filter((s) => s.startsWith('moved ')).length).toBeGreaterThan(10);
    expect(steps.filter((s) => s.startsWith('removed ')).length).toBeGreaterThan(5);

    // 20 points: every step of the manifest, the first removal, and the rest spread over the run.
    const manifestSteps = steps.flatMap((s, i) => (s.startsWith('manifest') ? [i] : []));
    const must = [...manifestSteps, steps.findIndex((s) => s.startsWith('removed ')), steps.findIndex((s) => s.startsWith('moved '))];
    const spread = Array.from({ length: 20 - must.length }, (_, i) => Math.floor(((i + 0.5) * steps.length) / (20 - must.length)));
    const points = [...new Set([...must, ...spread])].sort((a, b) => a - b);
    expect(points.length).toBeGreaterThanOrEqual(18);

    const seen: string[] = [];
    for (let i = 0; i < points.length; i += 4) {
      await Promise.all(
        points.slice(i, i + 4).map(async (n) => {
          const dir = copyOf(base);
          const r = await killedAt(dir, n);
          expect(r.signal, `killed at step ${n}: ${r.stderr}`).toBe('SIGKILL');
          const at = r.stdout.trim().split('\n').at(-1) ?? '';
          seen.push(at);
          // At the instant of the kill: the last complete export, or the new one.
          const m = await matchesFiles(dir, `killed at ${at}`);
          expect([contents(manifestOf(base)), contents(done)], `killed at ${at}`).toContainEqual(contents(m));
          // The next export completes: the new one, and nothing a manifest does not name.
          await exportWarehouse(w, log.logger, { to: dir });
          const after = await matchesFiles(dir, `after the kill at ${at}`);
          expect(contents(after), `after the kill at ${at}`).toEqual(contents(done));
          expect(filesIn(dir), `after the kill at ${at}: no staging, no stray file`).toEqual([...after.files.map((f) => f.path), '_manifest.json'].sort());
        }),
      );
    }
    expect(seen.some((s) => s.includes('manifest half written'))).toBe(true);
    expect(seen.some((s) => s.includes('removed '))).toBe(true);
    expect(seen.some((s) => s.includes('moved '))).toBe(true);
  }, patience(600_000));

  it('an export that fails after moving files in leaves the last manifest true, and the next removes what it left', async () => {
    const dir = copyOf(base);
    const before = manifestOf(dir);
    let moved = 0;
    const failing = exportWarehouse(w, log.logger, {
      to: dir,
      onStep: (s) => {
        if (s.startsWith('moved ') && ++moved === 3) throw new Error('the disk is full (a test)');
      },
    });
    await expect(failing).rejects.toThrow(/the disk is full/);
    // Three files moved in that no manifest names; the manifest is the last complete one.
    expect(await matchesFiles(dir, 'after the failure')).toEqual(before);
    expect(filesIn(dir).filter((f) => !f.startsWith('.') && f !== '_manifest.json' && !before.files.some((x) => x.path === f))).toHaveLength(3);
    await exportWarehouse(w, log.logger, { to: dir });
    const after = await matchesFiles(dir, 'the next export');
    expect(filesIn(dir)).toEqual([...after.files.map((f) => f.path), '_manifest.json'].sort());
  }, patience(120_000));

  it('a tampered manifest cannot reach outside DIR; a garbled one gets a message, and --rebuild writes anew, leaving foreign files alone', async () => {
    const env = { DATABASE_URL: tw.databaseUrl, LOG_LEVEL: 'warn' };
    const victim = newDir();
    writeFileSync(path.join(victim, 'precious.txt'), 'keep me');
    const d = copyOf(base);
    mkdirSync(path.join(d, 'app.tokens'), { recursive: true });
    writeFileSync(path.join(d, 'notes.txt'), 'mine');
    writeFileSync(path.join(d, 'app.tokens', 'mine.parquet'), 'not tesync');
    // A partition pointing four folders up, as the issue found it.
    const m = manifestOf(d);
    const day = m.files.find((f) => f.kind === 'archive')!;
    day.partition = path.relative(path.join(d, day.table), victim);
    writeFileSync(path.join(d, '_manifest.json'), JSON.stringify(m));
    const tampered = await runCli(['export', '--to', d], env);
    expect(tampered.code, tampered.stderr).toBe(2);
    expect(tampered.stderr).toMatch(/_manifest\.json cannot be read: its file \d+ .*partition.*--rebuild/s);
    expect(existsSync(path.join(victim, 'precious.txt'))).toBe(true);

    // A path leading out, and a manifest that is not JSON or has no list.
    for (const garbled of [JSON.stringify({ ...m, files: [{ ...day, path: `../${path.basename(victim)}/precious.txt` }] }), 'not json{', JSON.stringify({ ...m, tables: null })]) {
      writeFileSync(path.join(d, '_manifest.json'), garbled);
      const r = await runCli(['export', '--to', d, '--tables', 'app.tokens'], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/cannot be read: .*tesync export --rebuild/s);
      expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
    }
    const rebuilt = await runCli(['export', '--to', d, '--rebuild'], env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const after = await matchesFiles(d, 'rebuilt');
    expect(existsSync(path.join(victim, 'precious.txt'))).toBe(true);
    expect(readFileSync(path.join(d, 'notes.txt'), 'utf8')).toBe('mine');
    expect(readFileSync(path.join(d, 'app.tokens', 'mine.parquet'), 'utf8')).toBe('not tesync');
    // What the first export wrote is gone; what is there is what the manifest names, and the foreign files.
    expect(filesIn(d)).toEqual([...after.files.map((f) => f.path), '_manifest.json', 'app.tokens/mine.parquet', 'notes.txt'].sort());

    // A folder of the export replaced by a symbolic link out: nothing is removed through it.
    const e = copyOf(base);
    const away = newDir();
    rmSync(away, { recursive: true });
    renameSync(path.join(e, 'app.tokens'), away);
    symlinkSync(away, path.join(e, 'app.tokens'));
    const held = readdirSync(away).sort();
    await expect(exportWarehouse(w, log.logger, { to: e, rebuild: true })).rejects.toThrow(/app\.tokens is a symbolic link/);
    expect(readdirSync(away).sort()).toEqual(held);
  }, patience(240_000));

  it('--as-of reads alike in every time zone, kept to the microsecond; words, the time before the first sync and days not in the calendar are refused', async () => {
    const env = { DATABASE_URL: tw.databaseUrl, LOG_LEVEL: 'warn' };
    const iso = `${between.replace(' ', 'T')}Z`;
    // Side by side: each a process of its own, in its own time zone, into a folder of its own.
    const cuts = await Promise.all(
      ['Asia/Tokyo', 'America/New_York', 'UTC'].map(async (tz) => {
        const d = newDir();
        const r = await runCli(['export', '--to', d, '--as-of', between, '--tables', 'app.tokens', '--json'], { ...env, TZ: tz });
        expect(r.code, `${tz}: ${r.stderr}`).toBe(0);
        expect(manifestOf(d).files.map((f) => f.path)).toEqual([expect.stringMatching(new RegExp(`^asof=${iso.replaceAll('.', '\\.')}/app\\.tokens/part-[0-9a-f]{12}-0\\.parquet$`))]);
        return (JSON.parse(r.stdout) as { tables: { asOf: string }[] }).tables[0]!.asOf;
      }),
    );
    expect(cuts).toEqual([iso, iso, iso]);
    // The same instant with an offset.
    const tokyo = new Date(Date.parse(iso) + 9 * 3_600_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, `.${iso.slice(20, 26)}+09:00`);
    const off = await runCli(['export', '--to', newDir(), '--as-of', tokyo, '--tables', 'app.tokens', '--json'], { ...env, TZ: 'America/New_York' });
    expect((JSON.parse(off.stdout) as { tables: { asOf: string }[] }).tables[0]!.asOf).toBe(iso);

    // Each refusal's reading is unit-tested (test/export/instants.test.ts); here, the command's exit and message.
    const refused: [string[], RegExp][] = [
      [['--as-of', 'epoch'], /"epoch" is a word, not an instant/],
      [['--as-of', '2020-01-01T00:00:00Z'], /before the first sync/],
      [['--as-of', '2026-11-28T12:00:00.1234567Z'], /finer than a microsecond/],
      [['--since', '2026-02-30'], /--since "2026-02-30": 2026-02-30 is not a day of the calendar/],
    ];
    const d = newDir();
    await Promise.all(
      refused.map(async ([args, message]) => {
        const r = await runCli(['export', '--to', d, ...args], env);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(message);
      }),
    );
    expect(readdirSync(d)).toEqual([]);
  }, patience(240_000));

  it("each file's entry carries the types that file holds, whichever export wrote it", async () => {
    const d = newDir();
    const tables = ['gateway.chart_points', 'app.screener_rows', 'app.metric_history'];
    await exportWarehouse(w, log.logger, { to: d, tables });
    await exportWarehouse(w, log.logger, { to: d, tables, asOf: `${between.replace(' ', 'T')}Z` });
    const m = await matchesFiles(d, 'current and as-of');
    expect(new Set(m.files.map((f) => f.kind))).toEqual(new Set(['current', 'asOf']));
    let numeric = 0;
    for (const f of m.files) {
      const described = (await duck.runAndReadAll(`describe select * from read_parquet('${path.join(d, f.path)}')`)).getRowObjectsJson() as { column_name: string; column_type: string }[];
      for (const [name, c] of Object.entries(f.columns)) {
        if (!c.sourceType.startsWith('numeric')) continue;
        numeric++;
        expect(described.find((x) => x.column_name === name)?.column_type, `${f.path}: ${name}`).toBe(c.type);
        expect(c.asString, `${f.path}: ${name}`).toBe(c.type === 'VARCHAR');
      }
    }
    expect(numeric).toBeGreaterThan(5);
  }, patience(120_000));
});
