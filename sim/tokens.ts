// The token universe. Slugs, names and coverage depend only on the token's index (not on the
// seed), so tests can name tokens and their quirks directly; values depend on the seed.
import type { AppCoverage } from './dataset-types.ts';

export interface StreamDef {
  key: string;
  label: string;
}

export interface TokenDef {
  index: number;
  slug: string;
  displayName: string;
  symbol: string;
  imageUrl: string | null;
  coverage: AppCoverage;
  freshness: 'fresh' | 'stale';
  /** history streams; the first is the default ('aggregate' when the token has several) */
  streams: StreamDef[];
  chain: string;
  protocolType: string;
}

const STREAM_LABELS: Record<string, string> = {
  aggregate: 'All streams',
  fees: 'Trading fees',
  buybacks: 'Buybacks & burns',
  staking: 'Staking yield',
  lending: 'Lending interest',
  bridge: 'Bridge tolls',
  mev: 'MEV capture',
};
const COMPONENT_STREAMS = ['fees', 'buybacks', 'staking', 'lending', 'bridge', 'mev'];
const CHAINS = ['ethereum', 'solana', 'arbitrum', 'base', 'cosmos', 'hyperliquid'];
const PROTOCOLS = ['dex', 'perp-dex', 'lending', 'liquid-staking', 'bridge', 'launchpad'];

interface FixedToken {
  slug: string;
  displayName: string;
  symbol: string;
  streams: string[];
  coverage?: Partial<AppCoverage>;
  imageUrl?: null;
  freshness?: 'stale';
}

/**
 * The first tokens have names chosen to break naive code (quotes, SQL, emoji, CJK, markup)
 * and coverage gaps chosen so each route's "not covered" answer is exercised:
 * - obrien-q: no snapshot (its snapshot route 404s)
 * - bobby-tables: no charts and no trend
 * - zuerich-yield: no metric history (its history route 404s)
 * - rocket-fuel: no screener row (and therefore not on the gateway)
 * - basalt-finance: a single stream and no 'aggregate' stream
 * - ferrous: imageUrl null, stale
 */
const FIXED: FixedToken[] = [
  { slug: 'aurora', displayName: 'Aurora', symbol: 'AUR', streams: ['aggregate', 'fees', 'buybacks'] },
  { slug: 'basalt-finance', displayName: 'Basalt Finance', symbol: 'BSLT', streams: ['lending'] },
  { slug: 'cobalt-dex', displayName: 'Cobalt DEX', symbol: 'CBLT', streams: ['aggregate', 'fees', 'staking'] },
  { slug: 'obrien-q', displayName: `O'Brien "Q" Token`, symbol: 'OBQ', streams: ['aggregate', 'fees', 'mev'], coverage: { snapshot: false } },
  {
    slug: 'bobby-tables',
    displayName: `Robert'); DROP TABLE tokens;--`,
    symbol: 'BOBBY',
    streams: ['aggregate', 'fees', 'buybacks'],
    coverage: { charts: false, trend: false },
  },
  { slug: 'zuerich-yield', displayName: 'Zürich Yield ✨', symbol: 'ZYLD', streams: ['aggregate', 'staking', 'lending'], coverage: { metricHistory: false } },
  { slug: 'rocket-fuel', displayName: 'Rocket Fuel 🚀', symbol: 'FUEL', streams: ['aggregate', 'fees', 'bridge'], coverage: { screener: false } },
  { slug: 'nihon-swap', displayName: '日本スワップ', symbol: 'NSWP', streams: ['aggregate', 'fees', 'buybacks', 'mev'] },
  { slug: 'emberline', displayName: 'Emberline', symbol: 'EMBR', streams: ['aggregate', 'fees', 'staking'] },
  { slug: 'ferrous', displayName: 'Ferrous <Fe> & Co', symbol: 'FE', streams: ['aggregate', 'lending', 'fees'], imageUrl: null, freshness: 'stale' },
  { slug: 'glacier-lend', displayName: 'Glacier Lend', symbol: 'GLND', streams: ['aggregate', 'lending', 'bridge'] },
  { slug: 'harbor-stake', displayName: 'Harbor Stake', symbol: 'HRBR', streams: ['aggregate', 'staking', 'fees'] },
];

export function tokenDef(index: number): TokenDef {
  const fixed = FIXED[index];
  if (fixed) return fromFixed(index, fixed);
  return generated(index);
}

/** `freshness` overrides every token's verdict (tests of data age: all stale, or all fresh). */
export function tokenUniverse(count: number, freshness?: 'fresh' | 'stale'): TokenDef[] {
  const out: TokenDef[] = [];
  for (let i = 0; i < count; i++) {
    const t = tokenDef(i);
    out.push(freshness ? { ...t, freshness } : t);
  }
  return out;
}

function fromFixed(index: number, f: FixedToken): TokenDef {
  return {
    index,
    slug: f.slug,
    displayName: f.displayName,
    symbol: f.symbol,
    imageUrl: f.imageUrl === null ? null : imageUrl(f.slug),
    coverage: { screener: true, snapshot: true, metricHistory: true, trend: true, charts: true, backtests: index % 2 === 0, ...f.coverage },
    freshness: f.freshness ?? 'fresh',
    streams: f.streams.map(streamDef),
    chain: CHAINS[index % CHAINS.length] ?? 'ethereum',
    protocolType: PROTOCOLS[index % PROTOCOLS.length] ?? 'dex',
  };
}

// Generated tokens follow index patterns (co-prime moduli) so every gap occurs at scale.
function generated(index: number): TokenDef {
  const slug = `token-${String(index).padStart(4, '0')}`;
  const n = 1 + (index % 3);
  const components = [0, 1, 2].slice(0, n).map((k) => COMPONENT_STREAMS[(index + k * 2) % COMPONENT_STREAMS.length] ?? 'fees');
  const streams = n === 1 ? components : ['aggregate', ...components];
  return {
    index,
    slug,
    displayName: `Token ${index}`,
    symbol: `T${index}`,
    imageUrl: index % 29 === 7 ? null : imageUrl(slug),
    coverage: {
      screener: index % 23 !== 6,
      snapshot: index % 13 !== 3,
      metricHistory: index % 17 !== 5,
      trend: index % 7 !== 4,
      charts: index % 11 !== 4,
      backtests: index % 2 === 0,
    },
    freshness: index % 19 === 2 ? 'stale' : 'fresh',
    streams: streams.map(streamDef),
    chain: CHAINS[index % CHAINS.length] ?? 'ethereum',
    protocolType: PROTOCOLS[index % PROTOCOLS.length] ?? 'dex',
  };
}

function streamDef(key: string): StreamDef {
  return { key, label: STREAM_LABELS[key] ?? key };
}

function imageUrl(slug: string): string {
  return `https://img.tokeneconomics.invalid/tokens/${slug}.png`;
}

/** the component streams (without the aggregate), as listed on screener rows and snapshots */
export function componentStreams(t: TokenDef): StreamDef[] {
  return t.streams.filter((s) => s.key !== 'aggregate');
}
