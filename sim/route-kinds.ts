/** the routes with a `data` envelope, by tesync's route names: the keys addedFields takes */
export const DATA_ROUTE_KINDS = [
  'app.metrics',
  'app.tokens',
  'app.screener',
  'app.token',
  'app.bundle',
  'app.history',
  'app.charts',
  'app.chart',
  'gateway.tokens',
  'gateway.screener',
  'gateway.token',
  'gateway.history',
  'gateway.charts',
  'gateway.chart',
] as const;
export type DataRouteKind = (typeof DATA_ROUTE_KINDS)[number];
