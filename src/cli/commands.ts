// The commands, declared once: name, synopsis and one-line summary. The top-level usage is
// generated from this table, main.ts finds each command here, an unknown flag is judged
// against the flags its synopsis names, and test/cli/usage.test.ts keeps README.md's command
// table and each command's own `--help` equal to it.
import type { CommandContext } from './context.ts';

export type Command = (ctx: CommandContext) => Promise<number>;

export interface CommandSpec {
  readonly name: string;
  /**
   * What follows `tesync <name>`, exactly as README.md's table and the command's `--help` say
   * it; a command used in two ways has a synopsis for each (a README row each, in this order).
   */
  readonly synopsis: string | readonly string[];
  /** One line of the top-level usage (at most SUMMARY_COLUMNS). */
  readonly summary: string;
  /** Options it takes that its synopsis leaves out (an older name, `--help`): heard by suggestions. */
  readonly also?: readonly string[];
  /** Without configuration it still runs (on the defaults). */
  readonly needsConfig: boolean;
  /**
   * The command reads no options of its own: main.ts refuses any (as parseArgs would) and
   * answers `--help` with this text below the synopsis.
   */
  readonly help?: string;
  /** Loaded on demand: a command pulls in only what it uses, so start-up stays quick. */
  readonly load: () => Promise<Command>;
}

/** In README.md's order. */
export const COMMAND_SPECS: readonly CommandSpec[] = [
  {
    name: 'demo',
    synopsis: '[--tokens N] [--page-size N] [--json] [--force]',
    summary: 'the bundled simulator synced into the warehouse; a summary and a query',
    needsConfig: true,
    load: async () => (await import('./demo.ts')).runDemo,
  },
  {
    name: 'check',
    synopsis: '[--json]',
    summary: 'reach the database and ask each source and key once; writes nothing',
    needsConfig: true,
    load: async () => (await import('./check.ts')).runCheck,
  },
  {
    name: 'sync',
    synopsis: '[--source app|gateway] [--token SLUG]... [--only GROUP,...] [--full] [--wait] [--json] [--force]',
    summary: 'one full walk of the configured sources, in this process',
    needsConfig: true,
    load: async () => (await import('./sync.ts')).runSync,
  },
  {
    name: 'status',
    synopsis: ['[--json] [--wide] [--max-age HOURS] [--max-unconfirmed HOURS] [--min-coverage PCT]', '--serve [--port N] [--host ADDRESS] [--max-age HOURS] [--max-unconfirmed HOURS] [--min-coverage PCT]'],
    summary: "each group's data age and last confirmation, table sizes; --serve: a page",
    needsConfig: true,
    load: async () => (await import('./status.ts')).runStatusCommand,
  },
  {
    name: 'sql',
    synopsis: '',
    summary: 'keep the embedded warehouse up; print its URL for psql and BI tools',
    needsConfig: true,
    load: async () => (await import('./sql.ts')).runSql,
  },
  {
    name: 'worker',
    synopsis: '[--force] [--demo] [--json]',
    summary: 'run scheduled walks and queued jobs until SIGTERM',
    needsConfig: true,
    load: async () => (await import('./worker.ts')).runWorker,
  },
  {
    name: 'enqueue',
    synopsis: '[--schedule ID | --only GROUP,...] [--source S] [--token SLUG]... [--full] [--wait [--wait-timeout SECONDS] [--timeout SECONDS]] [--json] [--force]',
    summary: 'queue a walk now for the running workers',
    needsConfig: true,
    load: async () => (await import('./enqueue.ts')).runEnqueue,
  },
  {
    name: 'migrate',
    synopsis: '',
    summary: 'apply the warehouse migrations (idempotent)',
    needsConfig: true,
    help:
      "Applies the warehouse migrations, and BullMQ's to the queue schema when the\n" +
      'queues are in the warehouse (REDIS_URL unset). Idempotent, and safe when several\n' +
      'processes start at once. sync, worker and demo migrate first too.',
    load: async () => (await import('./migrate.ts')).runMigrate,
  },
  {
    name: 'reset',
    synopsis: '--queues [--dry-run] [--force]',
    summary: "remove the workers' queues, schedules and budgets under TE_QUEUE_PREFIX",
    also: ['--redis'],
    needsConfig: true,
    load: async () => (await import('./reset.ts')).runReset,
  },
  {
    name: 'export',
    synopsis: '[--to DIR] [--as-of INSTANT] [--tables T,...] [--since YYYY-MM-DD] [--rebuild] [--json]',
    summary: 'the warehouse as Parquet',
    needsConfig: true,
    load: async () => (await import('./export.ts')).runExport,
  },
  {
    name: 'diff',
    synopsis: '--from A --to B [--table T,...] [--net] [--revisions] [--format text|jsonl|parquet] [--to-dir DIR]',
    summary: 'what changed in the warehouse between two instants or runs',
    needsConfig: true,
    load: async () => (await import('./diff.ts')).runDiff,
  },
  {
    name: 'replay',
    synopsis: '[--into DATABASE_URL] [--check] [--json]',
    summary: 'the warehouse written again from its archive; --check: and compared',
    needsConfig: true,
    load: async () => (await import('./replay.ts')).runReplay,
  },
  {
    name: 'notify',
    synopsis: '--test [--json]',
    summary: 'send a test event to each TE_NOTIFY_URL; say what it answered',
    needsConfig: true,
    load: async () => (await import('./notify.ts')).runNotify,
  },
  {
    name: 'sim',
    synopsis: '[--port N] [--tokens N] [--history-days N] [--charts N] [--seed N] [--rate-limit N/MS] ...',
    summary: 'run the bundled upstream simulator alone',
    needsConfig: false,
    load: async () => (await import('./sim.ts')).runSim,
  },
];

export function commandSpec(name: string): CommandSpec | undefined {
  return COMMAND_SPECS.find((c) => c.name === name);
}

/** A command's synopses, one per way it is used. */
export function synopses(c: Pick<CommandSpec, 'synopsis'>): readonly string[] {
  return typeof c.synopsis === 'string' ? [c.synopsis] : c.synopsis;
}

/** The widest a usage line may be: an 80-column terminal. */
export const USAGE_COLUMNS = 80;
const SUMMARY_INDENT = '      ';

const FOOTER = `\`tesync <command> --help\` says more of each.
--force (demo, sync, worker, enqueue): write into a warehouse bound to another
upstream, rebinding it to the configured one (sync.upstream_binding_log).
Exit codes: 0 done, 1 could not complete, 2 bad configuration or command line,
130 or 143 stopped by Ctrl-C or SIGTERM (sync and demo close their run
\`interrupted\`). Configuration comes from the environment (or a .env file); see
the README.`;

/** Pure: the top-level usage, from COMMAND_SPECS. */
export function topUsage(specs: readonly CommandSpec[] = COMMAND_SPECS): string {
  const lines = ['Usage: tesync <command> [options]', '', 'Commands:'];
  for (const c of specs) {
    for (const synopsis of synopses(c)) lines.push(...wrapSynopsis(`  ${c.name}`, synopsis));
    lines.push(`${SUMMARY_INDENT}${c.summary}`);
  }
  return [...lines, '', FOOTER].join('\n');
}

/** Pure: a command's own `Usage:` lines, wrapped to USAGE_COLUMNS; a second way of using it below the first. */
export function usageLines(c: Pick<CommandSpec, 'name' | 'synopsis'>): string[] {
  return synopses(c).flatMap((synopsis, i) => wrapSynopsis(`${i === 0 ? 'Usage: ' : '       '}tesync ${c.name}`, synopsis));
}

/** Pure: `--help` of a command that reads no options of its own (CommandSpec.help). */
export function generatedHelp(c: CommandSpec): string {
  return [...usageLines(c), '', c.help ?? `${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.`].join('\n');
}

/**
 * Pure: `head` then the synopsis's parts (a bracketed group is never split), wrapped so that no
 * line exceeds `columns`; a continued line starts below the first part after `head`.
 */
export function wrapSynopsis(head: string, synopsis: string, columns = USAGE_COLUMNS): string[] {
  const lines: string[] = [];
  let line = head;
  let filled = false;
  for (const part of synopsisParts(synopsis)) {
    if (filled && line.length + 1 + part.length > columns) {
      lines.push(line);
      line = ' '.repeat(head.length);
    }
    line = `${line} ${part}`;
    filled = true;
  }
  lines.push(line);
  return lines;
}

/** Pure: the synopsis cut at spaces outside brackets (`[--wait [--timeout S]]` is one part). */
function synopsisParts(synopsis: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of synopsis.trim()) {
    if (ch === '[') depth++;
    if (ch === ']') depth--;
    if (ch === ' ' && depth === 0) {
      if (current) parts.push(current);
      current = '';
    } else current += ch;
  }
  if (current) parts.push(current);
  return parts;
}

export interface SynopsisFlag {
  /** `--only` */
  flag: string;
  /** Its value's placeholder (`GROUP,...`); undefined for a switch. */
  value?: string;
  /** `[--token SLUG]...`: given more than once. */
  repeatable: boolean;
}

/** Pure: the flags a synopsis names, and whether it ends in `...` (more options than it names). */
export function synopsisFlags(synopsis: string): { flags: SynopsisFlag[]; more: boolean } {
  const words = synopsis.replace(/\\\|/g, '|').split(/\s+/).filter(Boolean);
  const flags: SynopsisFlag[] = [];
  let more = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '...') more = true;
    const m = /^\[*(--[a-z][a-z0-9-]*)(\]*)(\.\.\.)?$/.exec(word);
    if (!m) continue;
    const next = words[i + 1];
    const valueWord = m[2] === '' && next !== undefined && !/^[[|]/.test(next) && next !== '...' ? /^([^\]]+)(\]*)(\.\.\.)?$/.exec(next) : null;
    if (valueWord) i++;
    flags.push({ flag: m[1]!, ...(valueWord ? { value: valueWord[1]! } : {}), repeatable: Boolean(m[3] ?? valueWord?.[3]) });
  }
  return { flags, more };
}

/** Every option a command is known to take: its synopsis's, `also`, and `--help`. */
export function knownOptions(c: Pick<CommandSpec, 'synopsis' | 'also'>): string[] {
  const named = synopses(c).flatMap((s) => synopsisFlags(s).flags.map((f) => f.flag));
  return [...new Set([...named, ...(c.also ?? []), '--help'])];
}

/** Pure: `--json` among a command line's options (before a `--`): its errors are said as JSON too. */
export function asksJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}
