// The names an HTTP server of tesync's answers to: a `Host` header read as `host[:port]`, and
// the operator's list of more names (TE_STATUS_HOSTS) read with the same grammar. Pure.
// Deny by default: a form is read only when it is positively one of a DNS name, a dotted IPv4
// address or a bracketed IPv6 address, with at most a decimal port; anything else (userinfo,
// percent signs, spaces, underscores, a trailing dot, octal or short IPv4 forms, a zone id,
// two headers) is not a name and is refused by the caller.
import { isIPv6 } from 'node:net';

export interface HostName {
  kind: 'name' | 'ipv4' | 'ipv6';
  /** Lower case; an IPv6 address in its canonical compressed form, without brackets. */
  host: string;
  /** Absent when none was written. */
  port?: number;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const OCTET = /^(?:0|[1-9]\d{0,2})$/;
const PORT = /^[1-9]\d{0,4}$/;

/** Pure: `host[:port]` read, or undefined when it is not positively one. */
export function readHostName(raw: string): HostName | undefined {
  let host: string;
  let portText: string | undefined;
  if (raw.startsWith('[')) {
    const close = raw.indexOf(']');
    if (close < 0) return undefined;
    host = raw.slice(1, close);
    const rest = raw.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    portText = rest === '' ? undefined : rest.slice(1);
    if (!/^[0-9a-fA-F:.]+$/.test(host) || !isIPv6(host)) return undefined;
  } else {
    const colon = raw.indexOf(':');
    host = colon < 0 ? raw : raw.slice(0, colon);
    portText = colon < 0 ? undefined : raw.slice(colon + 1);
  }
  let port: number | undefined;
  if (portText !== undefined) {
    if (!PORT.test(portText) || Number(portText) > 65535) return undefined;
    port = Number(portText);
  }
  const withPort = <T extends HostName>(h: T): T => (port === undefined ? h : { ...h, port });
  if (raw.startsWith('[')) return withPort({ kind: 'ipv6', host: canonicalIPv6(host) });
  const lower = host.toLowerCase();
  const parts = lower.split('.');
  // Four decimal parts are an IPv4 address, or nothing: `127.1` and `0x7f.0.0.1` are not read.
  if (parts.length === 4 && parts.every((p) => /^\d+$/.test(p))) {
    return parts.every((p) => OCTET.test(p) && Number(p) <= 255) ? withPort({ kind: 'ipv4', host: lower }) : undefined;
  }
  if (lower.length > 253 || !parts.every((p) => LABEL.test(p))) return undefined;
  // A name whose last label is all digits reads as an address to a WHATWG URL parser.
  if (/^\d+$/.test(parts[parts.length - 1]!)) return undefined;
  return withPort({ kind: 'name', host: lower });
}

function canonicalIPv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** Pure: the loopback names and addresses: `localhost`, 127.0.0.0/8, ::1 (whatever the port). */
export function isLoopbackName(h: HostName): boolean {
  if (h.kind === 'name') return h.host === 'localhost';
  if (h.kind === 'ipv4') return h.host.startsWith('127.');
  return h.host === '::1';
}

/** Pure: whether `h` is one of `list` (an entry without a port stands for every port; a Host without one is port 80). */
export function hostListed(h: HostName, list: readonly HostName[]): boolean {
  return list.some((e) => e.kind === h.kind && e.host === h.host && (e.port === undefined || e.port === (h.port ?? 80)));
}

/** Pure: the comma-separated list of TE_STATUS_HOSTS read, or the first entry that is not a host. */
export function readHostList(raw: string): { hosts: HostName[] } | { wrong: string } {
  const hosts: HostName[] = [];
  for (const entry of raw.split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    const h = readHostName(entry);
    if (!h) return { wrong: entry };
    hosts.push(h);
  }
  return { hosts };
}

/** `localhost`, `127.0.0.1:9464`, `[::1]` */
export function showHostName(h: HostName): string {
  const host = h.kind === 'ipv6' ? `[${h.host}]` : h.host;
  return h.port === undefined ? host : `${host}:${h.port}`;
}
