// An empty free-space map beside each index of an embedded warehouse that has none.
//
// A B-tree asks its free-space map for a recycled page at every page split. An index that has
// never had a page deleted has no map file, and Postgres then checks whether the file exists
// at each ask; through PGlite's file layer each check is a failed path lookup on the host. A
// 100-token first sync made about 45 000 of them: 3.6 s of its database thread's ~60 s
// (docs/performance.md).
//
// An all-zero page is an empty map to Postgres: it initializes a new page when it first reads
// it, and an all-zero page passes checksum verification. Free-space maps are not WAL-logged;
// Postgres extends this one itself when VACUUM records a deleted page. An index rewritten
// later (REINDEX, TRUNCATE) gets a new file without a map, correct but slow again, until the
// warehouse is next migrated.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface IndexFile {
  /** The index's main fork, relative to the data directory (pg_relation_filepath). */
  path: string;
}

/** The indexes that may need a map: every permanent user index, its tables' TOAST indexes included. */
export const INDEX_FILES_SQL = `select pg_relation_filepath(c.oid) as path from pg_class c where c.relkind = 'i' and c.oid >= 16384 and c.relpersistence = 'p'`;

/** Writes a one-page empty map for each index that lacks one; returns how many it wrote. */
export function addFreeSpaceMaps(dataDir: string, indexes: readonly IndexFile[], blockSize: number): number {
  let written = 0;
  const empty = new Uint8Array(blockSize);
  for (const index of indexes) {
    const main = path.join(dataDir, index.path);
    if (!existsSync(main)) continue;
    try {
      // 'wx': never over a map Postgres made.
      writeFileSync(`${main}_fsm`, empty, { flag: 'wx' });
      written++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return written;
}
