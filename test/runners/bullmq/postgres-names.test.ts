// The names the Postgres queue backend derives from TE_QUEUE_PREFIX (src/runners/bullmq/
// postgres-backend.ts), and the choice of backend (backend.ts): pure functions. The schema of a
// prefix's queues is one of its own for every prefix the configuration accepts, and one BullMQ
// accepts; the pattern of its workers' sessions matches their names as Postgres keeps them
// (cut at 63 bytes), and no other prefix's. The last case asks Postgres's own LIKE.
import { quoteSchemaName } from 'bullmq';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/lib/config.ts';
import { VARIABLES } from '../../../src/lib/variables.ts';
import { queueBackendKind, workerName } from '../../../src/runners/bullmq/backend.ts';
import { prefixSessionPattern, queueSchema, workerSessionPattern } from '../../../src/runners/bullmq/postgres-backend.ts';
import { freshDatabase } from '../../helpers/mirror-fixture.ts';

/** Whether the configuration accepts this TE_QUEUE_PREFIX. */
const validPrefix = (p: string) => VARIABLES.TE_QUEUE_PREFIX.schema.safeParse(p).success;

describe('queueBackendKind', () => {
  it('Redis when REDIS_URL is set, the warehouse\'s Postgres otherwise', () => {
    expect(queueBackendKind({ redisUrl: 'redis://127.0.0.1:6379' })).toBe('redis');
    expect(queueBackendKind({ redisUrl: 'rediss://user:secret@redis.example:6380/2' })).toBe('redis');
    expect(queueBackendKind({ redisUrl: undefined })).toBe('postgres');
    expect(queueBackendKind({ redisUrl: '' })).toBe('postgres');
  });
});

describe('queueSchema', () => {
  it('is bullmq_ and the prefix, each of `.`, `-`, `{`, `}` written `$` and its code in hex', () => {
    expect(queueSchema('tesync')).toBe('bullmq_tesync');
    expect(queueSchema('tesync_2')).toBe('bullmq_tesync_2');
    expect(queueSchema('tesync-staging')).toBe('bullmq_tesync$2dstaging');
    expect(queueSchema('eu.prod')).toBe('bullmq_eu$2eprod');
    expect(queueSchema('{tesync}')).toBe('bullmq_$7btesync$7d');
    // Case is kept (the schema is always quoted): two prefixes, two schemas.
    expect(queueSchema('TeSync')).toBe('bullmq_TeSync');
  });

  it('gives every prefix the configuration accepts a schema of its own, a name BullMQ accepts', () => {
    // Every prefix of up to 3 characters over letters, digits and the characters written in
    // hex, chosen so that a lossy encoding (`-` as `_`, `.` dropped, a code without its `$`)
    // would make two of them share a schema.
    const alphabet = ['a', 'A', '2', 'd', 'e', '7', 'b', '_', '-', '.', '{', '}'];
    let prefixes = [''];
    const all: string[] = [];
    for (let len = 1; len <= 3; len++) {
      prefixes = prefixes.flatMap((p) => alphabet.map((c) => p + c));
      all.push(...prefixes);
    }
    expect(all.every(validPrefix)).toBe(true);
    const schemas = new Map<string, string>();
    for (const p of all) {
      const schema = queueSchema(p);
      expect(schemas.get(schema), `${p} and ${schemas.get(schema)} share ${schema}`).toBeUndefined();
      schemas.set(schema, p);
      // BullMQ refuses any other name (letters, digits, `_` and `$`, at most 63).
      expect(quoteSchemaName(schema)).toBe(`"${schema}"`);
    }
    expect(schemas.size).toBe(all.length);
  });

  it('refuses, naming TE_QUEUE_PREFIX, a prefix whose schema would pass 63 bytes; up to there it is whole', () => {
    const longest = 'p'.repeat(63 - 'bullmq_'.length);
    expect(queueSchema(longest)).toBe(`bullmq_${longest}`);
    expect(quoteSchemaName(queueSchema(longest))).toBe(`"bullmq_${longest}"`);
    // Each `-` costs three bytes: one character more than fits, written in hex.
    expect(queueSchema(`${'p'.repeat(53)}-`)).toHaveLength(63);
    for (const tooLong of [`${longest}p`, `${'p'.repeat(54)}-`, 'p'.repeat(64), `{${'p'.repeat(62)}}`]) {
      // The configuration accepts it (up to 64 characters): only this backend cannot name it.
      expect(validPrefix(tooLong), tooLong).toBe(true);
      let err: unknown;
      try {
        queueSchema(tooLong);
      } catch (e) {
        err = e;
      }
      expect(err, tooLong).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('TE_QUEUE_PREFIX');
      expect((err as ConfigError).message).toMatch(/^TE_QUEUE_PREFIX: is too long for the Postgres queue backend: its schema bullmq_\S+ would pass Postgres's 63-byte limit \(shorten the prefix, or set REDIS_URL\)$/);
    }
  });
});

describe('workerSessionPattern', () => {
  it('matches `walk:w:<prefix>@` and anything after, with LIKE\'s `_`, `%` and `\\` taken literally', () => {
    expect(workerSessionPattern('tesync')).toBe('walk:w:tesync@%');
    expect(workerSessionPattern('tesync_eu')).toBe('walk:w:tesync\\_eu@%');
    expect(workerSessionPattern('a%b\\c_')).toBe('walk:w:a\\%b\\\\c\\_@%');
    // The `@` ends the prefix: tesync's workers are not tesync-staging's.
    expect(workerSessionPattern('tesync-staging')).toBe('walk:w:tesync-staging@%');
  });

  it('is cut at 63 bytes, as Postgres cuts a session\'s name, before its characters are escaped', () => {
    // `walk:w:` and 56 characters make 63: the `@` is cut off.
    const cut = 'q'.repeat(56);
    expect(workerSessionPattern(cut)).toBe(`walk:w:${cut}%`);
    expect(workerSessionPattern(`${cut}more`)).toBe(`walk:w:${cut}%`);
    // An `_` that is the 63rd byte is kept, escaped; escaping never pushes a character out.
    const underscored = `${'q'.repeat(55)}_`;
    expect(workerSessionPattern(`${underscored}zz`)).toBe(`walk:w:${'q'.repeat(55)}\\_%`);
    // One byte less: the `@` is kept.
    expect(workerSessionPattern('q'.repeat(55))).toBe(`walk:w:${'q'.repeat(55)}@%`);
  });

  it("matches, in Postgres, the names its workers' sessions have there, and not those of other prefixes", async () => {
    const db = await freshDatabase();
    const sql = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const matches = async (pattern: string, name: string) => (await sql<{ ok: boolean }[]>`select ${name}::text like ${pattern} as ok`)[0]!.ok;
      const session = (queue: string, prefix: string) => `${queue}:w:${workerName(prefix, 'host-a', 17)}`;
      expect(await matches(workerSessionPattern('tesync_eu'), session('walk', 'tesync_eu'))).toBe(true);
      // `_` is not any character, `%` not any characters.
      expect(await matches(workerSessionPattern('tesync_eu'), session('walk', 'tesyncXeu'))).toBe(false);
      expect(await matches(workerSessionPattern('a%b'), session('walk', 'aXYZb'))).toBe(false);
      expect(await matches(workerSessionPattern('a%b'), session('walk', 'a%b'))).toBe(true);
      expect(await matches(workerSessionPattern('tesync'), session('walk', 'tesync-staging'))).toBe(false);
      expect(await matches(workerSessionPattern('tesync'), session('fetch-gateway', 'tesync'))).toBe(false);

      // The longest prefix the backend takes (its schema is 63 bytes): its workers' names, as
      // Postgres keeps them (cut to 63 bytes, the `@` and the host gone), still match; those of
      // a prefix one character shorter, which otherwise shares its letters, do not.
      const longest = `tesync_${'x'.repeat(49)}`;
      const shorter = longest.slice(0, -1);
      expect(queueSchema(longest)).toHaveLength(63);
      const named = postgres(db.databaseUrl, { max: 2, onnotice: () => {}, connection: { application_name: session('walk', longest) } });
      const other = postgres(db.databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: session('walk', shorter) } });
      try {
        const [kept] = await named<{ name: string }[]>`select current_setting('application_name') as name`;
        const [otherKept] = await other<{ name: string }[]>`select current_setting('application_name') as name`;
        expect(kept!.name).toBe(`walk:w:${longest}`);
        expect(otherKept!.name).toBe(`walk:w:${shorter}@`);
        expect(await matches(workerSessionPattern(longest), kept!.name)).toBe(true);
        expect(await matches(workerSessionPattern(shorter), otherKept!.name)).toBe(true);
        expect(await matches(workerSessionPattern(longest), otherKept!.name)).toBe(false);
        expect(await matches(workerSessionPattern(shorter), kept!.name)).toBe(false);
      } finally {
        await named.end();
        await other.end();
      }
    } finally {
      await sql.end();
    }
  });

  it("prefixSessionPattern: the sessions tesync names `<prefix>:...`, LIKE characters escaped, cut at 63 bytes; not another prefix's", () => {
    expect(prefixSessionPattern('te_st')).toBe('te\\_st:%');
    expect(prefixSessionPattern('a%b')).toBe('a\\%b:%');
    // A prefix of 56 characters (the longest the schema allows) keeps its colon inside 63 bytes.
    const longest = `tesync_${'x'.repeat(49)}`;
    expect(prefixSessionPattern(longest)).toBe(`${longest.replace('_', '\\_')}:%`);
    const like = (pattern: string, name: string) => new RegExp(`^${pattern.replace(/\\(.)|%|_|[.*+?^${}()|[\]]/g, (m, esc: string | undefined) => (esc !== undefined ? esc.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : m === '%' ? '.*' : m === '_' ? '.' : `\\${m}`))}$`).test(name);
    expect(like(prefixSessionPattern('tesync'), 'tesync:budget 0a1b2c3d4e5f')).toBe(true);
    expect(like(prefixSessionPattern('tesync'), 'tesync:tesync')).toBe(true);
    expect(like(prefixSessionPattern('tesync'), 'tesync-staging:tesync')).toBe(false);
    expect(like(prefixSessionPattern('tesync'), 'walk:w:tesync@host.1')).toBe(false);
  });
});
