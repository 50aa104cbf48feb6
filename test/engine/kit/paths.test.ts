// documentedPath (src/engine/kit/paths.ts), pure: a route's documented path as `data_path` shows
// it, every parameter put in its place and percent-encoded, for every route of the table.
import { describe, expect, it } from 'vitest';
import { documentedPath } from '../../../src/engine/kit/paths.ts';
import { ROUTES, templateParams, type RouteName } from '../../../src/upstream/routes.ts';

describe('documentedPath', () => {
  it('is the template itself for a route without parameters', () => {
    expect(documentedPath('app.tokens', {})).toBe('/api/v1/tokens');
    expect(documentedPath('gateway.openapi', {})).toBe('/openapi-product.json');
  });

  it('puts each parameter in its place, encoded', () => {
    expect(documentedPath('app.chart', { slug: 'aurora', chartKey: 'fees-30d' })).toBe('/api/v1/tokens/aurora/charts/fees-30d');
    expect(documentedPath('gateway.history', { slug: 'a b/c?d' })).toBe('/v1/tokens/a%20b%2Fc%3Fd/metrics/history');
    expect(documentedPath('app.token', { slug: 'Zürich' })).toBe('/api/v1/tokens/Z%C3%BCrich');
  });

  it('leaves no placeholder in any route, and only the route\'s own parameters count', () => {
    for (const route of Object.keys(ROUTES) as RouteName[]) {
      const params = Object.fromEntries(templateParams(ROUTES[route].template).map((p) => [p, `v-${p}`]));
      const path = documentedPath(route, { ...params, other: 'x' });
      expect(path, route).not.toMatch(/[{}]/);
      expect(path, route).not.toContain('/x');
      for (const v of Object.values(params)) expect(path, route).toContain(`/${v}`);
    }
  });
});
