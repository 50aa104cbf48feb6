// Which timeframes of a gateway chart are mirrored: configured ones it lists, and the longest
// it lists in place of one it does not.
import { describe, expect, it } from 'vitest';
import { longestListed, mirroredTimeframes, chooseTimeframes } from '../../../src/resources/gateway/timeframes.ts';
import { GATEWAY_PERIODS, GATEWAY_TIMEFRAMES } from '../../../src/lib/variables.ts';

const choose = (listed: string[] | null, configured: string[]) => chooseTimeframes(listed, configured, GATEWAY_TIMEFRAMES);

describe('longestListed', () => {
  it('orders 7d < 30d < 90d < 180d < 365d = 1y < all, whatever the catalog order', () => {
    expect(longestListed(['90d', '7d', '180d', '30d'], GATEWAY_TIMEFRAMES)).toBe('180d');
    expect(longestListed(['all', '7d'], GATEWAY_TIMEFRAMES)).toBe('all');
    expect(longestListed(['1y', '30d'], GATEWAY_TIMEFRAMES)).toBe('1y');
  });

  it('takes 365d over 1y (as long), in either catalog order', () => {
    expect(longestListed(['1y', '365d'], GATEWAY_TIMEFRAMES)).toBe('365d');
    expect(longestListed(['365d', '1y', '90d'], GATEWAY_TIMEFRAMES)).toBe('365d');
  });

  it('ignores timeframes tesync cannot ask for; none left is null', () => {
    expect(longestListed(['ytd', '30d', '5y'], GATEWAY_TIMEFRAMES)).toBe('30d');
    expect(longestListed(['ytd'], GATEWAY_TIMEFRAMES)).toBeNull();
    expect(longestListed([], GATEWAY_TIMEFRAMES)).toBeNull();
    expect(longestListed(['all', '365d'], GATEWAY_PERIODS)).toBe('365d');
  });
});

describe('chooseTimeframes', () => {
  it('asks a listed configured timeframe as is, with no substitution', () => {
    expect(choose(['30d', '90d', 'all'], ['all'])).toEqual({ fetches: [{ timeframe: 'all', requested: ['all'], substitutedFor: [] }], substitutions: {} });
  });

  it('mirrors the longest listed timeframe in place of an unlisted one, and records it', () => {
    expect(choose(['30d', '90d', '365d'], ['all'])).toEqual({
      fetches: [{ timeframe: '365d', requested: ['all'], substitutedFor: ['all'] }],
      substitutions: { all: '365d' },
    });
  });

  it('fetches once what several configured timeframes come down to', () => {
    const p = choose(['30d', '90d'], ['all', '1y', '90d', '30d']);
    expect(p.fetches).toEqual([
      { timeframe: '90d', requested: ['all', '1y', '90d'], substitutedFor: ['all', '1y'] },
      { timeframe: '30d', requested: ['30d'], substitutedFor: [] },
    ]);
    expect(p.substitutions).toEqual({ all: '90d', '1y': '90d' });
    expect(mirroredTimeframes(p)).toEqual(['90d', '30d']);
  });

  it('asks every configured timeframe when the catalog does not say', () => {
    expect(mirroredTimeframes(choose(null, ['all', '30d']))).toEqual(['all', '30d']);
    expect(choose(null, ['all']).substitutions).toEqual({});
  });

  it('records a chart that lists nothing tesync can ask for, instead of leaving it silently empty', () => {
    expect(choose([], ['all'])).toEqual({ fetches: [], substitutions: { all: null } });
    expect(choose(['ytd'], ['all', '30d'])).toEqual({ fetches: [], substitutions: { all: null, '30d': null } });
  });

  it('substitutes an equally long timeframe: 1y configured, 365d listed', () => {
    expect(choose(['30d', '365d'], ['1y']).substitutions).toEqual({ '1y': '365d' });
  });
});
