// The coverage views name each promised resource as its job does, and every group of the job
// catalog has its promise: a resource file added without one would be left out of coverage.
// Pure: the SQL's resource expressions are read, not run (test/cli/status-coverage.test.ts runs them).
import { describe, expect, it } from 'vitest';
import { catalog } from '../../../src/resources/index.ts';
import { PROMISES, SINGLE } from '../../../src/schema/warehouse/coverage.ts';

/** The sample each column of a promise's SELECT stands for. */
const SAMPLE = { slug: 'tok', chartKey: 'key', period: '365d', timeframe: 'all' };

/** Pure: a promise's resource expression (`'token/' || t.slug || '/snapshot'`) with the sample's values in it. */
function resourceOf(select: string): string {
  const expression = /^select (.*?), t\.slug,/s.exec(select)![1]!;
  return expression
    .replaceAll('t.slug', `'${SAMPLE.slug}'`)
    .replaceAll('ch.chart_key', `'${SAMPLE.chartKey}'`)
    .replaceAll('p.period', `'${SAMPLE.period}'`)
    .replaceAll('tf.timeframe', `'${SAMPLE.timeframe}'`)
    .split('||')
    .map((part) => /^\s*'(.*)'\s*$/.exec(part)![1])
    .join('');
}

describe('coverage promises', () => {
  const jobs = [...catalog.values()];

  it('every group of every source is promised: by its lists, or by the walk itself', () => {
    const promised = new Set([...PROMISES.map((p) => `${p.source}.${p.group}`), ...SINGLE.map(([s, g]) => `${s}.${g}`)]);
    expect([...new Set(jobs.map((j) => `${j.source}.${j.group}`))].sort()).toEqual([...promised].sort());
  });

  it('each promise names its resources as the group\'s job does', () => {
    for (const p of PROMISES) {
      const job = jobs.find((j) => j.source === p.source && j.group === p.group)!;
      expect(resourceOf(p.select), `${p.source}.${p.group}`).toBe(job.resource({ ...SAMPLE, requested: [], marker: null, link: null }));
    }
    for (const [source, group, resource] of SINGLE) {
      const job = jobs.find((j) => j.source === source && j.group === group)!;
      expect(job.resource({}), `${source}.${group}`).toBe(resource);
    }
  });

  it('the per-token promises follow the fan-out: each is planned by its source\'s token list or a chart catalog', () => {
    for (const p of PROMISES) {
      const job = jobs.find((j) => j.source === p.source && j.group === p.group)!;
      expect([`${p.source}.tokens`, `${p.source}.charts`], `${p.source}.${p.group}`).toContain(job.plannedBy);
    }
  });
});
