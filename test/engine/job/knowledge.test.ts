// What a job knows of the warehouse (src/engine/job/knowledge.ts, src/engine/kit/knows.ts): the
// questions it asks, each answered once with what it was asked with, handed to the read by name.
import { describe, expect, it } from 'vitest';
import { gatherKnown } from '../../../src/engine/job/knowledge.ts';
import { question, type WarehouseReads } from '../../../src/engine/kit/knows.ts';

// The answers below never touch it: a question's answer is its own, the engine only asks.
const warehouse = {} as WarehouseReads;

describe('gatherKnown', () => {
  const asked: unknown[] = [];
  const keys = question('keys', async (_w, slug: string) => {
    asked.push(slug);
    return new Set([`${slug}:a`]);
  });
  const catalog = question('catalog', async () => new Map([['fees', { unit: 'usd' }]]));

  it('answers each question asked, with its argument, and hands the answers on by name', async () => {
    const known = await gatherKnown(warehouse, [keys.ask('aurora'), catalog.ask()]);
    expect(asked).toEqual(['aurora']);
    expect(keys.answerIn(known)).toEqual(new Set(['aurora:a']));
    expect(catalog.answerIn(known)?.get('fees')).toEqual({ unit: 'usd' });
  });

  it('asks nothing when a job asks nothing; an answer not asked is absent', async () => {
    expect(await gatherKnown(warehouse, undefined)).toEqual({});
    expect(keys.answerIn(await gatherKnown(warehouse, []))).toBeUndefined();
  });

  it('refuses two questions of one name in one job: one name, one answer', async () => {
    await expect(gatherKnown(warehouse, [keys.ask('a'), keys.ask('b')])).rejects.toThrow(/two questions named keys/);
  });
});
