// Pure: `tesync diff`'s command line read into what to compare. A bound is an instant (read as
// `tesync export --as-of` reads one: UTC unless it carries an offset, to the microsecond), a
// run id (its run's end), or `last` / `last-N` (the end of the last finished sync run, or of
// the N-th before it). Whatever is not understood is a UsageError naming its flag (exit 2).
import { readInstant } from '../export/instants.ts';
import type { Bound, ChangedTable } from '../store/read/changes.ts';
import { UsageError } from './context.ts';
import { didYouMean, nearest } from '../lib/nearest.ts';
import { shownValue } from './flag-values.ts';

export const DIFF_FORMATS = ['text', 'jsonl', 'parquet'] as const;
export type DiffFormat = (typeof DIFF_FORMATS)[number];

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LAST = /^last(?:-(\d{1,6}))?$/;

/** Pure: a bound as given after `flag`. */
export function readBound(flag: string, raw: string): Bound {
  const text = raw.trim();
  const last = LAST.exec(text);
  if (last) return { last: Number(last[1] ?? '0') };
  if (RUN_ID.test(text)) return { run: text.toLowerCase() };
  const read = readInstant(text);
  if ('error' in read) {
    throw new UsageError(`${flag} ${shownValue(raw)}: an instant (2026-11-28T12:00:00Z; UTC unless it carries an offset), a run id, or last / last-N; ${read.error}`);
  }
  return { instant: read.iso };
}

export interface DiffArgs {
  from: Bound;
  to: Bound;
  /** The tables asked for, in name order; every versioned table when none is named. */
  tables: ChangedTable[];
  net: boolean;
  revisions: boolean;
  format: DiffFormat;
  /** Where Parquet goes (with --format parquet only). */
  toDir?: string;
}

export interface DiffFlags {
  from?: string;
  to?: string;
  table?: string[];
  net?: boolean;
  revisions?: boolean;
  format?: string;
  'to-dir'?: string;
}

/** Pure: the flags as parseArgs left them, read against the versioned tables and the export folder configured. */
export function readDiffArgs(v: DiffFlags, tables: readonly ChangedTable[], exportDir?: string): DiffArgs {
  if (v.from === undefined) throw new UsageError('tesync diff: say from when with --from (an instant, a run id, last or last-N)');
  if (v.to === undefined) throw new UsageError('tesync diff: say up to when with --to (an instant, a run id, last or last-N)');
  const format = (v.format ?? 'text') as DiffFormat;
  if (!DIFF_FORMATS.includes(format)) throw new UsageError(`--format must be ${DIFF_FORMATS.join(', ')}, not ${shownValue(v.format!)}`);
  const names = (v.table ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  const chosen: ChangedTable[] = [];
  for (const name of names) {
    // A table named without its schema, when only one schema has it.
    const bare = tables.filter((x) => x.name.endsWith(`.${name}`) && !name.includes('.'));
    const t = tables.find((x) => x.name === name) ?? (bare.length === 1 ? bare[0] : undefined);
    if (bare.length > 1) throw new UsageError(`--table ${shownValue(name)}: say which, ${bare.map((x) => x.name).join(' or ')}`);
    if (!t) {
      const meant = didYouMean(nearest(name, tables.map((x) => x.name)));
      throw new UsageError(`--table ${shownValue(name)} is not a versioned table${meant ? `; ${meant}` : ''} (the tables of app and gateway, as schema.table, the daily archives aside)`);
    }
    if (!chosen.includes(t)) chosen.push(t);
  }
  if (v['to-dir'] !== undefined && format !== 'parquet') throw new UsageError('--to-dir is where --format parquet writes: give it with --format parquet');
  const toDir = format === 'parquet' ? (v['to-dir'] ?? exportDir) : undefined;
  if (format === 'parquet' && !toDir) throw new UsageError('--format parquet: say where with --to-dir DIR, or set TE_EXPORT_DIR');
  return {
    from: readBound('--from', v.from),
    to: readBound('--to', v.to),
    tables: chosen.length > 0 ? [...chosen].sort((a, b) => a.name.localeCompare(b.name)) : [...tables],
    net: v.net === true,
    revisions: v.revisions === true,
    format,
    ...(toDir ? { toDir } : {}),
  };
}
