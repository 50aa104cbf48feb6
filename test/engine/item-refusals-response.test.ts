// A refusal is as small as the thing refused, for a response that is not a list but holds one
// (src/engine/fetch/judge-items.ts `judgeResponse`, pure but for the try's findings): a chart's
// rows, located by its reader (`Ask.items`). A string Postgres cannot hold inside a row refuses
// that row alone, named by its field (its x cell, a series key); one in the chart's own fields
// (title, config, meta) refuses the response whole, its body kept `invalid`.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { judgeResponse } from '../../src/engine/fetch/judge-items.ts';
import { splitItems } from '../../src/engine/kit/item-refusals.ts';
import { TryFindings } from '../../src/engine/fetch/findings.ts';
import type { Fetched, ItemsLocator, JobContext } from '../../src/engine/kit/types.ts';
import { InvalidResponseError } from '../../src/lib/errors.ts';
import { parseJson } from '../../src/lib/json.ts';
import { unholdableStrings } from '../../src/lib/pg-text.ts';
import { chartRows as appChartRows } from '../../src/resources/app/chart.ts';
import { chartRows as gatewayChartRows } from '../../src/resources/gateway/chart.ts';
import { chartData } from '../../src/schema/upstream/app.ts';
import { gatewayChartItem } from '../../src/schema/upstream/gateway.ts';
import type { UpstreamResponse } from '../../src/upstream/index.ts';

const CANNOT = 'which Postgres cannot store exactly';

const ctx = () => ({ findings: new TryFindings(), logger: pino({ level: 'silent' }), runId: 'r' }) as unknown as JobContext;

/** A response as the client hands it back with `refusableItems`: its strings located, its data read by `schema`. */
function fetched<S extends z.ZodType>(text: string, schema: S): Fetched<z.output<S>> {
  const body = parseJson(text) as { data: unknown; meta?: unknown };
  const unholdable = unholdableStrings(body);
  const response = { path: '/x', status: 200, text, headers: {}, body, sha256: 'h', ...(unholdable.length > 0 ? { unholdable } : {}) } as unknown as UpstreamResponse;
  return { response, data: schema.parse(body.data), meta: {} as Fetched<unknown>['meta'], body: body as Record<string, unknown> };
}

const appChart = (rows: string, title = 'Fees') => `{"data":{"title":"${title}","x":"date","columns":[{"key":"date"},{"key":"fees"}],"rows":[${rows}]},"meta":{}}`;
const gatewayChart = (rows: string, title = 'Fees') => `{"data":{"type":"line","config":{"title":"${title}","series":[]},"data":[${rows}]},"meta":{}}`;

describe('the chart locators: the rows array itself, as served and as read', () => {
  it.each([
    ['app', appChartRows, { rows: [[1]] }, 'rows'],
    ['gateway', gatewayChartRows, { data: [{ t: 1 }] }, 'data'],
  ] as const)('%s', (_name, locate: ItemsLocator, data, member) => {
    expect(locate(data)).toBe((data as Record<string, unknown>)[member]);
    expect(locate({ title: 'no rows' })).toBeUndefined();
    expect(locate([1, 2])).toBeUndefined();
    expect(locate(null)).toBeUndefined();
  });
});

describe('judgeResponse', () => {
  it('an x cell holding U+0000 refuses that row alone, named by its place; the other rows are read', () => {
    const f = fetched(appChart('["2026-01-01","1"],["2026-01-02\\u0000","2"],["2026-01-03","3"]'), chartData);
    const judged = judgeResponse(ctx(), 'app.chart', f, appChartRows);
    expect([...judged.refused!.values()]).toEqual([`data.rows[1][0] holds U+0000, ${CANNOT}`]);
    expect(judged.refused!.has(f.data.rows[1])).toBe(true);
    const split = splitItems({ items: judged.data.rows, refused: judged.refused }, { shapes: false });
    expect(split.understood).toEqual([f.data.rows[0], f.data.rows[2]]);
    expect(split.refused.map((r) => r.index)).toEqual([1]);
  });

  it('a series key holding an unpaired surrogate refuses its row alone; two rows, two refusals', () => {
    const f = fetched(gatewayChart('{"timestamp":"2026-01-01","rev":"1"},{"timestamp":"2026-01-02","rev\\ud83d":"2"},{"timestamp":"2026-01-03\\u0000","rev":"3"}'), gatewayChartItem);
    const judged = judgeResponse(ctx(), 'gateway.chart', f, gatewayChartRows);
    expect([...judged.refused!.values()]).toEqual([`data.data[1]["rev\\ud83d"] holds an unpaired surrogate U+D83D in its name, ${CANNOT}`, `data.data[2].timestamp holds U+0000, ${CANNOT}`]);
    expect(splitItems({ items: judged.data.data, refused: judged.refused }, { shapes: false }).understood).toEqual([f.data.data[0]]);
  });

  it("a string in the chart's own fields refuses the response whole, its body kept invalid", () => {
    for (const [text, route, locate, schema] of [
      [appChart('["2026-01-01","1"]', 'Fees\\u0000'), 'app.chart', appChartRows, chartData],
      [gatewayChart('{"timestamp":"2026-01-01","rev":"1"}', 'Fees\\ud83d'), 'gateway.chart', gatewayChartRows, gatewayChartItem],
    ] as const) {
      const c = ctx();
      expect(() => judgeResponse(c, route, fetched(text, schema), locate)).toThrow(InvalidResponseError);
      expect(() => judgeResponse(ctx(), route, fetched(text, schema), locate)).toThrow(/not understood: data\.(config\.)?title holds .*, outside every item of the list$/);
      expect(c.findings.refused).toHaveLength(1);
    }
  });

  it('a response whose locator finds no rows is refused whole', () => {
    const f = fetched('{"data":{"title":"x\\u0000","x":"date","columns":[{"key":"date"}],"rows":[]},"meta":{}}', chartData);
    expect(() => judgeResponse(ctx(), 'app.chart', f, () => undefined)).toThrow(/data\.title holds U\+0000, .*and the response holds no items$/);
  });

  it('a clean response is returned as it is', () => {
    const f = fetched(appChart('["2026-01-01","1"]'), chartData);
    expect(judgeResponse(ctx(), 'app.chart', f, appChartRows)).toBe(f);
  });
});
