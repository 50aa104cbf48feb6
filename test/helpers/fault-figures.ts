// Figures the fault tests measured (hostile-input, process-faults, redis-restart, secrets-sync,
// upstream faults), written to test/results/fault-figures.json so that docs/reliability.md can
// quote them from a real run.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const FILE = new URL('../results/fault-figures.json', import.meta.url);

export function recordFigure(name: string, value: unknown): void {
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>;
  } catch {
    // first figure of the run
  }
  all[name] = value;
  all.updatedAt = new Date().toISOString();
  writeFileSync(FILE, `${JSON.stringify(all, null, 2)}\n`);
}
