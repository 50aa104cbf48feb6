// The catalog is what the resource files export: found, not listed (src/resources/index.ts).
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { resolveJob } from '../../src/engine/job/lifecycle.ts';
import { defineJob } from '../../src/engine/kit/types.ts';
import { catalog, catalogOf, groups, walkRoots } from '../../src/resources/index.ts';

const job = (name: string, extra: object = {}) => defineJob({ name, source: 'app', group: 'g', route: 'app.metrics', payload: z.object({}), resource: () => name, reader: { asks: () => [], read: () => ({ status: 'ok' }) }, ...extra });

describe('the job catalog', () => {
  it('holds every shipped job, found in the resource files', () => {
    expect([...catalog.keys()]).toEqual([
      'app.bundle', 'app.chart', 'app.charts', 'app.history', 'app.metrics', 'app.screener', 'app.snapshot', 'app.tokens',
      'gateway.chart', 'gateway.charts', 'gateway.history', 'gateway.openapi', 'gateway.page', 'gateway.screener', 'gateway.tokens',
    ]);
    expect(groups()).toEqual(['bundle', 'catalog', 'chart', 'charts', 'contract', 'history', 'page', 'screener', 'snapshot', 'tokens']);
  });

  it('starts a walk at the jobs declared root', () => {
    expect(walkRoots(['app', 'gateway'])).toEqual([{ name: 'app.metrics', payload: {} }, { name: 'gateway.tokens', payload: {} }]);
    expect(walkRoots(['gateway'])).toEqual([{ name: 'gateway.tokens', payload: {} }]);
  });

  it('a job planned by another follows it; exports that are not jobs are passed over', () => {
    const parent = job('app.parent');
    const child = job('app.child', { plannedBy: 'app.parent' });
    const c = catalogOf([parent, child, 42, 'app.parent', { name: 'not a job' }]);
    expect([...c.keys()]).toEqual(['app.child', 'app.parent']);
    const resolved = resolveJob(c, { name: 'app.parent', payload: {} });
    expect('error' in resolved ? resolved.error : resolved.children.map((j) => j.name)).toEqual(['app.child']);
  });

  it('refuses two jobs of one name, and a job planned by no job', () => {
    expect(() => catalogOf([job('app.x'), job('app.x')])).toThrow('two jobs are named app.x');
    expect(() => catalogOf([job('app.y', { plannedBy: 'app.nothing' })])).toThrow('app.y is planned by app.nothing, which is no job');
  });
});
