// Test databases made and dropped beside the tests instead of inside them. On a Postgres with
// fsync on, `CREATE DATABASE ... TEMPLATE` writes the whole template (11 MB) to the WAL and
// waits for it to reach the disk, and `DROP DATABASE` waits for a checkpoint of the whole
// server (Postgres requests one so that the checkpointer forgets the database's files): 1-3 s
// of waiting on the disk per warehouse on a busy machine, almost no CPU (docs/performance.md,
// "Issue 57"). The global setup runs a keeper on the test server that holds a few databases
// ready (copies of the migrated template, and empty ones) and drops the databases tests hand
// back, one at a time. A test claims a spare, or hands a database back, by renaming it: one
// catalog update. Without a keeper (a script outside vitest) a test creates and drops as before.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/** Set by the global setup to the server URL its keeper works on; the test processes inherit it. */
export const KEEPER_VARIABLE = 'TESYNC_TEST_KEEPER';

export type SpareKind = 'migrated' | 'empty';

const KINDS: readonly SpareKind[] = ['migrated', 'empty'];

/** How many of each kind the keeper holds ready: about what three test files ask at once. */
const READY: Record<SpareKind, number> = { migrated: 4, empty: 2 };

const POLL_MS = 100;

/** Connections the keeper's drops may hold at once (beside its one for making spares). */
const DROPS_AT_ONCE = 4;

const isCode = (err: unknown, code: string) => (err as { code?: string }).code === code;

/** Names a run's databases carry while the keeper holds them (every one at most 63 bytes). */
export function spareNames(run: string) {
  return {
    /** Ready to be claimed (`m` a copy of the migrated template, `e` empty). */
    spare: (kind: SpareKind) => `tesync_spare_${kind[0]}_${run}_`,
    /** Being made: not yet ready to claim. */
    making: `tesync_making_${run}_`,
    /** Handed back: the keeper drops it. */
    dropping: `tesync_drop_${run}_`,
  };
}

const suffix = () => randomBytes(6).toString('hex');

/** Whether a keeper runs for the server at `serverUrl` in this test run. */
export function keeperRuns(serverUrl: string): boolean {
  return process.env[KEEPER_VARIABLE] === serverUrl;
}

/**
 * Claims a ready database of `kind` by renaming it to `name`; false when none is ready (the
 * caller then creates one itself). Test processes race for the same spares: a rename that finds
 * its spare gone tries another.
 */
export async function claimSpare(admin: postgres.Sql, run: string, kind: SpareKind, name: string): Promise<boolean> {
  const prefix = spareNames(run).spare(kind);
  for (let attempt = 0; attempt < 5; attempt++) {
    const [row] = await admin<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${prefix}) order by random() limit 1`;
    if (!row) return false;
    try {
      await admin.unsafe(`alter database "${row.datname}" rename to "${name}"`);
      return true;
    } catch (err) {
      // Another test process claimed it first (3D000); or it is still open (55006): another.
      if (!isCode(err, '3D000') && !isCode(err, '55006')) throw err;
    }
  }
  return false;
}

/**
 * Hands database `name` back for the keeper to drop; false when it cannot be renamed because a
 * session is still connected to it (the caller then drops it with force itself).
 */
export async function handBack(admin: postgres.Sql, run: string, name: string): Promise<boolean> {
  try {
    await admin.unsafe(`alter database "${name}" rename to "${spareNames(run).dropping}${suffix()}"`);
    return true;
  } catch (err) {
    // Gone already: as `drop database if exists`.
    if (isCode(err, '3D000')) return true;
    if (isCode(err, '55006')) return false;
    throw err;
  }
}

/** What every test database gets: commits that do not wait for the disk (nothing here outlives a crash). */
export async function settleDatabase(admin: postgres.Sql, name: string): Promise<void> {
  await admin.unsafe(`alter database "${name}" set synchronous_commit = off`);
}

export interface Keeper {
  /** Stops making and dropping, then drops every database of the run it still holds. */
  stop(): Promise<void>;
}

/**
 * Starts the keeper of run `run` on the server at `serverUrl`. `template` makes sure the
 * migrated template exists and returns its name. Failures are reported once and retried: the
 * tests create and drop for themselves meanwhile.
 */
export function startKeeper(serverUrl: string, run: string, template: () => Promise<string>): Keeper {
  const names = spareNames(run);
  // Apart: a drop waits for a checkpoint, which must not hold up the spares. Drops run a few
  // at a time: Postgres serves the requests that arrive during a checkpoint with the next one,
  // so a batch costs about two checkpoints instead of one each (each flushes to the disk every
  // file written since the last one: about 550 for each database copied since).
  const maker = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const dropper = postgres(serverUrl, { max: DROPS_AT_ONCE, idle_timeout: 5, onnotice: () => {} });
  let stopping = false;
  let reported = false;
  const report = (what: string, err: unknown) => {
    if (reported || stopping) return;
    reported = true;
    console.error(`test database keeper: ${what} failed (the tests create and drop their own meanwhile): ${(err as Error).message}`);
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const listed = async (sql: postgres.Sql, prefix: string) =>
    (await sql<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${prefix})`).map((r) => r.datname);

  let templateName: string | undefined;
  // Spares ready after the keeper's last look (only claims take them away between looks).
  const madeOf: Record<SpareKind, number> = { migrated: 0, empty: 0 };
  const claimed: Record<SpareKind, boolean> = { migrated: false, empty: false };
  const make = async () => {
    while (!stopping) {
      try {
        let made = false;
        for (const kind of KINDS) {
          const ready = (await listed(maker, names.spare(kind))).length;
          // One of each until the tests claim one: a run of a single file needs few.
          if (ready < madeOf[kind]) claimed[kind] = true;
          madeOf[kind] = ready;
          if (ready >= (claimed[kind] ? READY[kind] : 1) || stopping) continue;
          const making = `${names.making}${suffix()}`;
          await maker.unsafe(kind === 'migrated' ? `create database "${making}" template "${(templateName ??= await template())}"` : `create database "${making}"`);
          await settleDatabase(maker, making);
          await maker.unsafe(`alter database "${making}" rename to "${names.spare(kind)}${suffix()}"`);
          madeOf[kind] += 1;
          made = true;
        }
        if (!made) await pause(POLL_MS);
      } catch (err) {
        templateName = undefined;
        report('making a spare database', err);
        await pause(1000);
      }
    }
  };
  const drop = async () => {
    while (!stopping) {
      try {
        const handed = (await listed(dropper, names.dropping)).slice(0, DROPS_AT_ONCE);
        await Promise.all(handed.map((name) => dropper.unsafe(`drop database if exists "${name}" with (force)`)));
        if (handed.length === 0) await pause(POLL_MS * 2);
      } catch (err) {
        report('dropping a database handed back', err);
        await pause(1000);
      }
    }
  };
  const loops = Promise.all([make(), drop()]);
  return {
    async stop() {
      stopping = true;
      await loops;
      try {
        const left = [
          ...(await listed(dropper, names.dropping)),
          ...(await listed(dropper, names.making)),
          ...(await Promise.all(KINDS.map((k) => listed(dropper, names.spare(k))))).flat(),
        ];
        for (const name of left) await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await Promise.all([maker.end({ timeout: 5 }), dropper.end({ timeout: 5 })]);
      }
    },
  };
}
