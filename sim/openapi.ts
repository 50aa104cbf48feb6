// The product-only OpenAPI document served at /openapi-product.json. Epoch 1 adds one path
// so the worker's contract-drift detection has something to find.
import type { OpenApiDocument } from './dataset-types.ts';

export const OPENAPI_ADDED_PATH = '/v1/tokens/{slug}/backtests';

const slug = { name: 'slug', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' } };
const chartKey = { name: 'chart_key', in: 'path', required: true, schema: { type: 'string' } };
const period = { name: 'period', in: 'query', required: false, schema: { type: 'string', enum: ['7d', '30d', '90d', '180d', '365d', '1y'], default: '30d' } };
const timeframe = { name: 'timeframe', in: 'query', required: false, schema: { type: 'string', enum: ['7d', '30d', '90d', '180d', '365d', '1y', 'all'] } };

function op(summary: string, parameters: unknown[] = []): unknown {
  return {
    get: {
      summary,
      security: [{ bearer: [] }],
      parameters,
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
        default: { description: 'Problem', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
      },
    },
  };
}

export function openapiDocument(epoch: number): OpenApiDocument {
  const paths: Record<string, unknown> = {
    '/v1/tokens': op('Token selector list'),
    '/v1/screener': op('Screener rows and insights'),
    '/v1/tokens/{slug}': op('Token page shell', [slug]),
    '/v1/tokens/{slug}/metrics/history': op('Trend for a period', [slug, period]),
    '/v1/tokens/{slug}/charts': op('Curated chart catalog', [slug]),
    '/v1/tokens/{slug}/charts/{chart_key}': op('Chart data for a timeframe', [slug, chartKey, timeframe]),
  };
  if (epoch >= 1) paths[OPENAPI_ADDED_PATH] = op('Backtest summaries', [slug]);
  return {
    openapi: '3.1.0',
    info: { title: 'Token Economics Product API', version: epoch >= 1 ? '1.1.0' : '1.0.0' },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Envelope: { type: 'object', required: ['data', 'meta'], properties: { data: {}, meta: { type: 'object' } } },
        Problem: {
          type: 'object',
          properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, code: { type: 'string' }, instance: { type: 'string' } },
        },
      },
    },
  };
}
