// What resources declare they need of the warehouse (`JobDefinition.knows`), asked by the engine
// and handed to their pure parts as data: a resource never reaches the warehouse. Each question
// says how the warehouse answers it (kit/knows.ts); the engine only asks, one after another.
import type { Knowledge, KnownAsk, WarehouseReads } from '../kit/knows.ts';

export async function gatherKnown(warehouse: WarehouseReads, asks: KnownAsk | undefined): Promise<Knowledge> {
  const out: Record<string, unknown> = {};
  for (const { question, arg } of asks ?? []) {
    if (Object.hasOwn(out, question.name)) throw new Error(`a job asks two questions named ${question.name}`);
    out[question.name] = await question.answer(warehouse, arg);
  }
  return out;
}
