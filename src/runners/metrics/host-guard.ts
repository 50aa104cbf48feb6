// Which `Host` a request to the metrics port may name, per route. A DNS-rebinding page reaches
// the port through a name its author controls (the browser sends that name as Host), so the
// rule is about names: the page (`/`, `/status.json`, `/body/<id>`) answers its own loopback
// names and addresses and the hosts the operator lists, nothing else. /metrics also answers a
// bare IP address: a page of another origin can only reach the port through a name, and a
// Prometheus that finds its targets by DNS or in Kubernetes names them by address. /healthz
// answers any Host: it shows nothing but whether the worker's connections answer, and a
// kubelet's probe names the pod's address. Pure.
import { hostListed, isLoopbackName, readHostName } from '../../lib/host-names.ts';
import type { HostName } from '../../lib/host-names.ts';

export type GuardedRoute = 'page' | 'metrics';

/**
 * Pure: whether a request whose Host header lines are `values` (node's `headersDistinct.host`)
 * is for this server's `route`. One header, read whole, or no.
 */
export function hostAnswered(values: readonly string[] | undefined, route: GuardedRoute, listed: readonly HostName[]): boolean {
  if (values?.length !== 1) return false;
  const h = readHostName(values[0]!);
  if (!h) return false;
  if (isLoopbackName(h) || hostListed(h, listed)) return true;
  return route === 'metrics' && h.kind !== 'name';
}

/** The 421's body: what the port answers to, and nothing of what it serves. */
export const MISDIRECTED =
  'misdirected request: this port answers to localhost, 127.0.0.1 and [::1], and to the hosts listed in TE_STATUS_HOSTS; the Host of this request is not one of them\n';
