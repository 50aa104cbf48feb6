// docs/glossary.md stays true: every term is defined once and says where it lives, every file
// it names exists, and every name written right after a file (`src/x.ts` `Name`, `A.b`)
// occurs in that file as a word. A rename that leaves the glossary behind fails here.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const glossary = readFileSync(join(ROOT, 'docs/glossary.md'), 'utf8');

interface Entry {
  term: string;
  text: string;
}

/** The entries: a `- **term**: ...` line and the indented lines under it. */
function entries(): Entry[] {
  return [...glossary.matchAll(/^- \*\*([^*]+)\*\*: ([\s\S]*?)(?=\n- \*\*|\n\n|\n#|(?![\s\S]))/gm)].map((m) => ({ term: m[1]!, text: m[2]! }));
}

/** A backticked path in the repository: has a slash, starts with none, names no placeholder. */
const PATH = /`([\w.-]+\/[\w./-]*)`/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

interface Location {
  path: string;
  names: string[];
}

/** Each path the text names, with the backticked names (no slash) that follow it (`, ` or a space between). */
function locations(text: string): Location[] {
  const found: Location[] = [];
  const re = new RegExp(`${PATH.source}((?:,?\\s+\`[^\`/]+\`)*)`, 'g');
  for (const m of text.matchAll(re)) {
    found.push({ path: m[1]!, names: [...(m[2] ?? '').matchAll(/`([^`]+)`/g)].map((n) => n[1]!) });
  }
  return found;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('docs/glossary.md', () => {
  const list = entries();

  it('defines each term once', () => {
    expect(list.length).toBeGreaterThan(60);
    const seen = list.map((e) => e.term.toLowerCase());
    expect(seen.filter((t, i) => seen.indexOf(t) !== i)).toEqual([]);
  });

  it('says where each term lives', () => {
    expect(list.filter((e) => locations(e.text).length === 0).map((e) => e.term)).toEqual([]);
  });

  it('names files that exist, and names that occur in them', () => {
    const wrong: string[] = [];
    for (const e of list) {
      for (const { path, names } of locations(e.text)) {
        const file = join(ROOT, path);
        if (!existsSync(file)) {
          wrong.push(`${e.term}: ${path} does not exist`);
          continue;
        }
        if (names.length === 0) continue;
        const source = readFileSync(file, 'utf8');
        for (const name of names) {
          if (!IDENTIFIER.test(name)) {
            wrong.push(`${e.term}: \`${name}\` after ${path} is not a name`);
            continue;
          }
          for (const part of name.split('.')) {
            if (!new RegExp(`(?<![\\w$])${escape(part)}(?![\\w$])`).test(source)) wrong.push(`${e.term}: ${path} has no \`${part}\``);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('reads its locations as the test expects', () => {
    expect(locations('x `src/a.ts` `A`, `B.c` and `src/b/` then `C`, `src/c.ts` `src/d.ts` `D`')).toEqual([
      { path: 'src/a.ts', names: ['A', 'B.c'] },
      { path: 'src/b/', names: [] },
      { path: 'src/c.ts', names: [] },
      { path: 'src/d.ts', names: ['D'] },
    ]);
  });
});
