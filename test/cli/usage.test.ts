// The command line says the same everywhere: README.md's command table, the top-level usage
// (`tesync`) and each command's `--help` are the one declaration of src/cli/commands.ts, every
// flag a synopsis names is one the command takes, and no usage line is wider than 80 columns.
// An unknown flag gets the nearest the command takes; with --json, errors are a JSON line.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { asksJson, COMMAND_SPECS, generatedHelp, knownOptions, synopses, synopsisFlags, topUsage, USAGE_COLUMNS, usageLines, wrapSynopsis, type CommandSpec } from '../../src/cli/commands.ts';
import { displayWidth } from '../../src/lib/display-width.ts';
import { editDistance, nearest, unknownOptionLine, unknownOptionOf, usageLine } from '../../src/cli/did-you-mean.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** README's "## Commands" table: each row's command and synopsis, in order. */
function readmeCommands(): { name: string; synopsis: string }[] {
  const section = README.split('\n## Commands\n')[1]?.split('\n## ')[0] ?? '';
  const rows: { name: string; synopsis: string }[] = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*`tesync ([a-z]+)((?:[^`])*)`\s*\|/.exec(line);
    if (m) rows.push({ name: m[1]!, synopsis: normal(m[2]!.replace(/\\\|/g, '|')) });
  }
  return rows;
}

const normal = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A command's own output for `argv` (in this process: its --help returns before it does anything). */
async function run(spec: CommandSpec, argv: string[]): Promise<{ code: number; out: string } | { error: { code?: unknown; message: string } }> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  try {
    const command = await spec.load();
    const code = await command({ config: loadConfig({}), logger: createLogger({ level: 'silent', secrets: [] }), argv });
    return { code, out };
  } catch (err) {
    return { error: err as { code?: unknown; message: string } };
  } finally {
    vi.restoreAllMocks();
  }
}

/** The `Usage:` lines at the top of a help text (up to the first blank line). */
const usageBlock = (help: string) => help.split('\n\n')[0]!;

/** The flags a help text lists on lines of their own (`  --port N   ...`). */
const listedFlags = (help: string) => [...help.matchAll(/^ {2,}(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!);

const OWN_HELP = COMMAND_SPECS.filter((c) => c.help === undefined);

describe('every --help at 80 columns', () => {
  it.each(COMMAND_SPECS.map((c) => [c.name, c] as const))('tesync %s --help: no line over 80 columns', async (_name, c) => {
    const r = c.help === undefined ? await run(c, ['--help']) : { code: 0, out: `${generatedHelp(c)}\n` };
    expect('code' in r && r.code, JSON.stringify(r)).toBe(0);
    const help = 'out' in r ? r.out : '';
    expect(help.length).toBeGreaterThan(0);
    expect(help.split('\n').filter((l) => displayWidth(l) > 80)).toEqual([]);
  });
});

describe('a number that starts with a dash', () => {
  it("is judged as a value, naming what it must be: not the parser's three lines of \"ambiguous\"", async () => {
    const r = await runCli(['demo', '--tokens', '-5'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('tesync: --tokens must be a whole number from 1 to 100000, not "-5"\n');
    // A flag that takes no number: one line, how to write such a value.
    expect(usageLine('ERR_PARSE_ARGS_INVALID_OPTION_VALUE', "Option '--token <value>' argument is ambiguous.\nDid you forget to specify the option argument for '--token'?\nTo specify an option argument starting with a dash use '--token=-XYZ'.", 'sync')).toBe(
      '--token needs a value; one that starts with a dash is written --token=-…',
    );
  }, patience(30_000));
});

describe('one declaration of the commands', () => {
  it("README's command table lists the same commands, in the same order, with the same synopses", () => {
    expect(readmeCommands()).toEqual(COMMAND_SPECS.flatMap((c) => synopses(c).map((s) => ({ name: c.name, synopsis: normal(s) }))));
  });

  it('the top-level usage has each synopsis and summary, and no line over 80 columns', () => {
    const usage = topUsage();
    for (const c of COMMAND_SPECS) {
      expect(usage).toContain(`${synopses(c).flatMap((s) => wrapSynopsis(`  ${c.name}`, s)).join('\n')}\n      ${c.summary}\n`);
    }
    const wide = usage.split('\n').filter((l) => l.length > USAGE_COLUMNS);
    expect(wide).toEqual([]);
  });

  it.each(OWN_HELP.map((c) => [c.name, c] as const))("tesync %s --help begins with the declared synopsis, within 80 columns", async (_name, c) => {
    const r = await run(c, ['--help']);
    expect('code' in r && r.code).toBe(0);
    const help = 'out' in r ? r.out : '';
    expect(usageBlock(help)).toBe(usageLines(c).join('\n'));
    expect(usageBlock(help).split('\n').every((l) => l.length <= USAGE_COLUMNS)).toBe(true);
  });

  it.each(OWN_HELP.map((c) => [c.name, c] as const))('tesync %s takes every flag its synopsis and --help name, as they name it', async (_name, c) => {
    const flags = synopses(c).flatMap((s) => synopsisFlags(s).flags);
    const more = synopses(c).some((s) => synopsisFlags(s).more);
    // A flag with a value must take one; a switch must refuse one.
    for (const f of flags) {
      const r = await run(c, [f.value === undefined ? f.flag : `${f.flag}=x`, '--help']);
      expect('code' in r ? r.code : r.error.message, `${c.name} ${f.flag}`).toBe(0);
    }
    const help = await run(c, ['--help']);
    const listed = listedFlags('out' in help ? help.out : '');
    for (const flag of new Set([...listed, ...(c.also ?? [])])) {
      // As a switch, or with a value.
      const accepted = 'code' in (await run(c, [flag, '--help'])) || 'code' in (await run(c, [`${flag}=x`, '--help']));
      expect(accepted, `${c.name} ${flag}`).toBe(true);
    }
    // What --help lists, the synopsis names (or it says `...`: more than it names).
    if (!more) expect(listed.filter((f) => !knownOptions(c).includes(f))).toEqual([]);
  });

  it('a command that reads no options of its own declares none', () => {
    for (const c of COMMAND_SPECS.filter((s) => s.help !== undefined)) expect(knownOptions(c)).toEqual(['--help']);
  });

  it('synopses are read into flags, values and repetition', () => {
    expect(synopsisFlags('[--schedule ID | --only GROUP,...] [--token SLUG]... [--wait [--timeout SECONDS]] [--json] ...')).toEqual({
      flags: [
        { flag: '--schedule', value: 'ID', repeatable: false },
        { flag: '--only', value: 'GROUP,...', repeatable: false },
        { flag: '--token', value: 'SLUG', repeatable: true },
        { flag: '--wait', repeatable: false },
        { flag: '--timeout', value: 'SECONDS', repeatable: false },
        { flag: '--json', repeatable: false },
      ],
      more: true,
    });
    expect(wrapSynopsis('Usage: tesync x', '[--aaaa] [--bbbb [--cc N]]', 30)).toEqual(['Usage: tesync x [--aaaa]', '                [--bbbb [--cc N]]']);
  });
});

describe('an unknown flag gets the nearest', () => {
  it('edit distance counts a swap of neighbours as one', () => {
    expect(editDistance('tokn', 'token')).toBe(1);
    expect(editDistance('jsno', 'json')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it.each([
    ['--tokn', ['--source', '--token', '--only', '--help'], ['--token']],
    ['--jsno', ['--json', '--wide'], ['--json']],
    ['--dryrun', ['--queues', '--dry-run', '--force'], ['--dry-run']],
    ['--unconfirmed', ['--max-age', '--max-unconfirmed'], ['--max-unconfirmed']],
    ['--tokens', ['--token', '--tokenz'], ['--token', '--tokenz']],
    ['--zzz', ['--json', '--wide'], []],
    ['--x', ['--json'], []],
  ])('%s among %j: %j', (word, known, meant) => {
    expect(nearest(word, known)).toEqual(meant);
  });

  it("reads the option out of Node's own error, and says the line", () => {
    let err: { code?: string; message: string } | undefined;
    try {
      parseArgs({ args: ['--tokn', 'x'], strict: true, options: { token: { type: 'string' } } });
    } catch (e) {
      err = e as { code?: string; message: string };
    }
    expect(err?.code).toBe('ERR_PARSE_ARGS_UNKNOWN_OPTION');
    expect(unknownOptionOf(err!.message)).toBe('--tokn');
    expect(usageLine(err!.code, err!.message, 'sync')).toBe('unknown option --tokn; did you mean --token?');
    expect(usageLine(err!.code, err!.message, 'migrate')).toBe('unknown option --tokn for tesync migrate (see tesync migrate --help)');
    expect(unknownOptionLine('-q', 'status', ['--json'])).toBe('unknown option -q for tesync status (see tesync status --help)');
    expect(usageLine(undefined, '--max-age needs a number', 'status')).toBe('--max-age needs a number');
  });

  it('--json is asked before a `--` only', () => {
    expect(asksJson(['--json'])).toBe(true);
    expect(asksJson(['--wide', '--', '--json'])).toBe(false);
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('as a person runs it', () => {
  afterEach(() => vi.restoreAllMocks());

  it('`tesync help` prints the generated usage, exit 0', async () => {
    const r = await runCli(['help'], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${topUsage()}\n`);
  }, patience(30_000));

  it('an unknown flag: the nearest one, exit 2', async () => {
    const r = await runCli(['sync', '--tokn', 'x'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('tesync: unknown option --tokn; did you mean --token?\n');
  }, patience(30_000));

  it('--json: a usage error is one JSON line', async () => {
    const r = await runCli(['status', '--json', '--wid'], {});
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.endsWith('\n') && r.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stderr)).toEqual({ error: { code: 2, kind: 'usage', message: 'unknown option --wid; did you mean --wide?' } });
  }, patience(30_000));

  it('--json: a configuration error is one JSON line naming the variable', async () => {
    const r = await runCli(['sync', '--json'], { TE_APP_URL: 'app.example.com' });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr)).toEqual({
      error: { code: 2, kind: 'configuration', variable: 'TE_APP_URL', message: 'TE_APP_URL: must be an http(s) URL without credentials (example: TE_APP_URL=https://app.example.com)' },
    });
  }, patience(30_000));

  it('status --json on a database that cannot be reached: one JSON line, exit 1, no password', async () => {
    const port = await closedPort();
    const r = await runCli(['status', '--json'], { DATABASE_URL: `postgres://tesync:pw_canary_4711@127.0.0.1:${port}/warehouse` });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const { error } = JSON.parse(r.stderr) as { error: { code: number; kind: string; message: string } };
    expect(error).toMatchObject({ code: 1, kind: 'warehouse' });
    expect(error.message).toMatch(new RegExp(`^cannot reach Postgres at 127\\.0\\.0\\.1:${port}/warehouse \\(DATABASE_URL\\): connection refused`));
    expect(r.stderr).not.toContain('pw_canary_4711');
  }, patience(30_000));
});
