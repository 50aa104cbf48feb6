import { describe, expect, it } from 'vitest';
import { catalog } from '../../../src/resources/index.ts';
import { encodeResource, fetchJobId, finishJobId, resourceKey, runIdFor } from '../../../src/runners/bullmq/ids.ts';
import { bucketOf } from '../../../src/engine/job/lifecycle.ts';
import { fetchQueueName, FETCH_QUEUES } from '../../../src/runners/bullmq/queues.ts';

const RUN = '0b7f7c1e-3c1a-4c1f-9a7e-2f1d8a9b0c1d';

describe('job ids', () => {
  it('are derived from run and resource, never contain ":" and are never integer strings', () => {
    const resources = ['metrics', 'token/aurora/chart/price:usd/all', 'token/a b/chart/%41', 'token/ünï/history/365d', '12345'];
    for (const r of resources) {
      const id = fetchJobId(RUN, 'app', r);
      expect(id).not.toContain(':');
      expect(/^\d+$/.test(id)).toBe(false);
      expect(id).toBe(fetchJobId(RUN, 'app', r));
    }
    expect(fetchJobId(RUN, 'gateway', 'token/aurora/chart/tvl/30d')).toBe(`${RUN}.gateway.token/aurora/chart/tvl/30d`);
    expect(finishJobId(RUN)).toBe(`finish.${RUN}`);
  });

  it('encode injectively: distinct resources never share an id', () => {
    const tricky = ['a:b', 'a%3Ab', 'a%b', 'a b', 'a+b', 'a/b', 'a.b', 'ä', '%C3%A4'];
    const ids = tricky.map(encodeResource);
    expect(new Set(ids).size).toBe(tricky.length);
    expect(encodeResource('a:b')).toBe('a%3Ab');
    expect(encodeResource('a%3Ab')).toBe('a%253Ab');
  });

  it('deduplicate by source and resource across runs', () => {
    expect(resourceKey('app', 'token/x/history')).toBe('app.token/x/history');
    expect(resourceKey('app', 'token/x/history')).not.toBe(resourceKey('gateway', 'token/x/history'));
  });

  it('give a walk job that runs twice the same run id, a UUID', () => {
    const a = runIdFor('tesync:walk', 'repeat:screener:1700000000000');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(runIdFor('tesync:walk', 'repeat:screener:1700000000000')).toBe(a);
    expect(runIdFor('tesync:walk', 'repeat:screener:1700003600000')).not.toBe(a);
    expect(runIdFor('other:walk', 'repeat:screener:1700000000000')).not.toBe(a);
  });
});

describe('queues', () => {
  it('send every catalog job to the queue of the bucket its requests use', () => {
    const names = new Set(FETCH_QUEUES.map((q) => q.name));
    for (const job of catalog.values()) expect(names.has(fetchQueueName(bucketOf(job))), job.name).toBe(true);
    expect(bucketOf(catalog.get('app.bundle')!)).toBe('app-key');
    expect(bucketOf(catalog.get('app.snapshot')!)).toBe('app-public');
    expect(bucketOf(catalog.get('app.chart')!)).toBe('app-public');
    for (const job of catalog.values()) if (job.source === 'gateway') expect(bucketOf(job), job.name).toBe('gateway');
  });
});
