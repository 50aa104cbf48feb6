import { ROUTES, type RouteName } from '../../upstream/routes.ts';

/** The documented path of a route (what `data_path` columns show), parameters encoded. */
export function documentedPath(route: RouteName, params: Record<string, string>): string {
  return ROUTES[route].template.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}
