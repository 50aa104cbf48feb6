// What resources declare they need of the warehouse (`JobDefinition.knows`), asked by the engine
// and handed to their pure parts as data: a resource never reaches the warehouse.
import type { Known } from '../../store/read/known.ts';
import type { Knowledge, KnownAsk } from '../kit/types.ts';

export async function gatherKnown(known: Known, ask: KnownAsk | undefined): Promise<Knowledge> {
  const out: Knowledge = {};
  if (!ask) return out;
  if (ask.metricCatalog) out.metricCatalog = await known.metricCatalog();
  if (ask.appCharts !== undefined) out.appCharts = await known.appCharts(ask.appCharts);
  if (ask.streamKeys !== undefined) out.streamKeys = await known.streamKeys(ask.streamKeys);
  if (ask.gatewayCharts !== undefined) out.gatewayCharts = await known.gatewayCharts(ask.gatewayCharts);
  if (ask.appTokenItems) out.appTokenItems = await known.appTokenItems();
  if (ask.gatewayTokens) out.gatewayTokens = await known.gatewayTokens();
  if (ask.archivedBody) out.archivedBody = await known.archivedBody(ask.archivedBody.source, ask.archivedBody.path, ask.archivedBody.sha256);
  return out;
}
