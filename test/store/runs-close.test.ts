// One run lifecycle (issue 57): every run is opened and closed by the run driver
// (src/engine/run/run-driver.ts), and one SQL statement closes a run, whoever closes it (a
// runner at its end, a worker's finish, a run that cannot go on, the export, the closers of
// abandoned runs). Read from the source: what writes a run's end, and who may call it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sources(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

const files = sources('src').map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));

describe('one run lifecycle', () => {
  it('one statement writes the end of a run: closeRuns in src/store/books/runs.ts', () => {
    // Every update of sync.runs, drizzle's or in SQL: only one sets a status (the other records an interrupt).
    const updates = files.flatMap(({ file, text }) =>
      [...text.matchAll(/\.update\(runs\)([\s\S]*?)\.where\(|update\s+sync\.runs\s+set([\s\S]*?)\bwhere\b/gi)].map((m) => ({ file, set: m[1] ?? m[2]!, at: m.index })),
    );
    const closing = updates.filter((u) => /\bstatus\b/.test(u.set));
    expect(closing.map((u) => u.file)).toEqual(['src/store/books/runs.ts']);
    expect(closing[0]!.set).toMatch(/finishedAt:/);
    const runs = files.find((f) => f.file === 'src/store/books/runs.ts')!.text;
    const closeRuns = runs.indexOf('async function closeRuns(');
    expect(closing[0]!.at).toBeGreaterThan(closeRuns);
    expect(closing[0]!.at).toBeLessThan(runs.indexOf('\n}\n', closeRuns));
    expect(updates.filter((u) => !/\bstatus\b/.test(u.set)).map((u) => u.set)).toEqual([expect.stringContaining("'interrupted'")]);
  });

  it('only the run driver opens and closes runs: the functions that write sync.runs are imported by it alone', () => {
    const writers = ['startRun', 'finishRun', 'closeAbandoned', 'markInterrupted'];
    const importers = files.flatMap(({ file, text }) =>
      [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'[./]*\/(?:store\/)?books\/runs\.ts'/g)].flatMap((m) =>
        m[1]!.split(',').map((n) => n.trim()).filter((n) => writers.includes(n)).map((n) => `${file}: ${n}`),
      ),
    );
    // close-run.ts is the driver's close: RunDriver.close calls it, nothing else does.
    expect(importers.sort()).toEqual([
      'src/engine/run/close-run.ts: finishRun',
      'src/engine/run/run-driver.ts: closeAbandoned',
      'src/engine/run/run-driver.ts: finishRun',
      'src/engine/run/run-driver.ts: markInterrupted',
      'src/engine/run/run-driver.ts: startRun',
    ]);
    const closeRunCallers = files.filter(({ file, text }) => file !== 'src/engine/run/close-run.ts' && /\bcloseRun\(/.test(text)).map((f) => f.file);
    expect(closeRunCallers).toEqual(['src/engine/run/run-driver.ts']);
  });
});
