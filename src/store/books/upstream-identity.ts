// What makes two base URLs the same upstream: scheme, host, port and path. Never a key,
// userinfo, query or fragment: the identity is written to the warehouse and printed in
// messages, so it is built from those four parts alone.

/** The demo's bundled simulator: one upstream whatever loopback port it listens on. */
export const SIMULATOR = 'simulator';

export type UpstreamIdentity =
  | { kind: 'url'; upstream: string; scheme: string; host: string; port: number; path: string }
  | { kind: 'simulator'; upstream: typeof SIMULATOR };

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

/**
 * Pure: the identity of a base URL. `upstream` is its canonical text: lower-case scheme and
 * host, the port only when it is not the scheme's default, the path without trailing slashes
 * (`https://a.example.com`, `http://127.0.0.1:8080/te`). Throws on a URL that cannot be read.
 */
export function upstreamIdentity(baseUrl: string): UpstreamIdentity {
  const u = new URL(baseUrl);
  const scheme = u.protocol.replace(/:$/, '');
  const port = u.port ? Number(u.port) : (DEFAULT_PORTS[scheme] ?? 0);
  const path = u.pathname.replace(/\/+$/, '');
  const shownPort = port === DEFAULT_PORTS[scheme] ? '' : `:${port}`;
  return { kind: 'url', upstream: `${scheme}://${u.hostname}${shownPort}${path}`, scheme, host: u.hostname, port, path };
}

export function simulatorIdentity(): UpstreamIdentity {
  return { kind: 'simulator', upstream: SIMULATOR };
}

/** Pure: an identity as read back from the warehouse's `upstream` column. */
export function identityFromText(upstream: string): UpstreamIdentity {
  return upstream === SIMULATOR ? simulatorIdentity() : upstreamIdentity(upstream);
}

/** Pure: whether two identities name the same upstream (their canonical texts are equal). */
export function sameUpstream(a: UpstreamIdentity, b: UpstreamIdentity): boolean {
  return a.upstream === b.upstream;
}

/** Pure: an identity for people. */
export function describeUpstream(id: UpstreamIdentity | string | null | undefined): string {
  const text = typeof id === 'string' ? id : id?.upstream;
  if (text === undefined || text === null) return 'an upstream it did not record (synced by an earlier release of tesync)';
  return text === SIMULATOR ? "tesync demo's bundled simulator" : text;
}
