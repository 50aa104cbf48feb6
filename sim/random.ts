// Seeded randomness. Every generated value comes from an Rng keyed by (seed, what, where),
// never from a shared stream, so data can be generated lazily and in any order and still be
// identical between runs and between two simulators with the same seed.

/** FNV-1a over the parts, then a murmur3 finalizer so near-identical keys spread out. */
export function hash32(...parts: (string | number)[]): number {
  const s = parts.join('\u0001');
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: tiny, fast and good enough for test data. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** uniform in [0, 1) */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  range(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** roughly normal (Irwin-Hall of 3), mean 0, sd about 1 */
  normal(): number {
    return (this.next() + this.next() + this.next() - 1.5) * 2;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const a = out[i] as T;
      out[i] = out[j] as T;
      out[j] = a;
    }
    return out;
  }
}

export function rngFor(seed: number, ...parts: (string | number)[]): Rng {
  return new Rng(hash32(seed, ...parts));
}

/** A deterministic choice among variants, e.g. for 'mixed' forms. */
export function choose<T>(variants: readonly T[], seed: number, ...parts: (string | number)[]): T {
  const v = variants[hash32(seed, 'choose', ...parts) % variants.length];
  if (v === undefined) throw new Error('choose from an empty list');
  return v;
}
