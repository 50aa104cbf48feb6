// The warehouse database's session defaults (src/store/schema/session-defaults.ts): a session
// that opens after migrate reads with JIT off, whoever it is (a BI tool, a notebook); a
// database made from a migrated template (which carries tables, not settings) gets them at its
// next migrate; a role that does not own the database changes nothing and is told which.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { keepSessionDefaults } from '../../../src/store/schema/session-defaults.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

describe('session defaults of the warehouse database', () => {
  const w = useTestWarehouse();
  const clients: postgres.Sql[] = [];
  const fresh = (url: string) => {
    const c = postgres(url, { max: 1, onnotice: () => {} });
    clients.push(c);
    return c;
  };
  afterAll(async () => {
    for (const c of clients) await c.end();
  });

  it('a session opened after migrate has jit off; it may still turn it on', async () => {
    await w.migrate();
    const c = fresh(w.databaseUrl);
    expect((await c`show jit`)[0]!.jit).toBe('off');
    await c`set jit = on`;
    expect((await c`show jit`)[0]!.jit).toBe('on');
  });

  it('a database whose setting was lost (a dump, a template) gets it again at migrate', async () => {
    const admin = fresh(w.databaseUrl);
    const db = (await admin<{ db: string }[]>`select current_database() as db`)[0]!.db;
    await admin.unsafe(`alter database "${db}" reset jit`);
    expect((await fresh(w.databaseUrl)`show jit`)[0]!.jit).not.toBe('off');
    expect(await keepSessionDefaults(admin)).toEqual([]);
    expect((await fresh(w.databaseUrl)`show jit`)[0]!.jit).toBe('off');
    // Held already: nothing to set, nothing refused.
    expect(await keepSessionDefaults(admin)).toEqual([]);
  });

  it('a role that does not own the database sets nothing and says what it could not', async () => {
    const admin = fresh(w.databaseUrl);
    const db = (await admin<{ db: string }[]>`select current_database() as db`)[0]!.db;
    const role = `tesync_reader_${Date.now().toString(36)}`;
    await admin.unsafe(`create role ${role} login`);
    try {
      await admin.unsafe(`alter database "${db}" reset jit`);
      const url = new URL(w.databaseUrl);
      url.username = role;
      const reader = fresh(url.toString());
      expect(await keepSessionDefaults(reader)).toEqual(['jit = off']);
      await reader.end();
      await keepSessionDefaults(admin);
    } finally {
      await admin.unsafe(`drop role if exists ${role}`);
    }
  });
});
