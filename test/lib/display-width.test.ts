import { describe, expect, it } from 'vitest';
import { clusterWidth, displayWidth, padEndToWidth, padStartToWidth, sliceToWidth, truncateToWidth, wrapToWidth } from '../../src/lib/display-width.ts';

describe('display width', () => {
  it('ASCII: one column a character', () => {
    expect(displayWidth('')).toBe(0);
    expect(displayWidth('Aurora')).toBe(6);
    expect(displayWidth('token_slug  x')).toBe(13);
  });

  it('East Asian Wide and Fullwidth: two columns', () => {
    expect(displayWidth('日本語')).toBe(6);
    expect(displayWidth('トークン')).toBe(8);
    expect(displayWidth('한국어')).toBe(6);
    expect(displayWidth('Ａｕｒｏｒａ')).toBe(12); // fullwidth Latin
    expect(displayWidth('ｱｲｳ')).toBe(3); // halfwidth Katakana: one each
    expect(displayWidth('𠮷')).toBe(2); // CJK Extension B, outside the BMP
    expect(displayWidth('金融 DeFi')).toBe(9);
  });

  it('emoji: two columns, whatever the sequence', () => {
    expect(displayWidth('🚀')).toBe(2);
    expect(displayWidth('👍🏽')).toBe(2); // skin tone modifier
    expect(displayWidth('👩‍💻')).toBe(2); // ZWJ sequence
    expect(displayWidth('👨‍👩‍👧‍👦')).toBe(2); // family: four people, three joiners
    expect(displayWidth('🏳️‍🌈')).toBe(2); // variation selector and ZWJ
    expect(displayWidth('🇯🇵')).toBe(2); // flag: two regional indicators
    expect(displayWidth('🇯🇵🇺🇸')).toBe(4);
    expect(displayWidth('❤️')).toBe(2); // text symbol with VS16: emoji presentation
    expect(displayWidth('1️⃣')).toBe(2); // keycap
    expect(displayWidth('Moon 🌙 Coin')).toBe(12);
  });

  it('text-presentation symbols and ambiguous characters: one column', () => {
    expect(displayWidth('❤')).toBe(1);
    expect(displayWidth('©')).toBe(1);
    expect(displayWidth('…')).toBe(1);
    expect(displayWidth('█░≥')).toBe(3);
    expect(displayWidth('x\ufe0f')).toBe(1); // VS16 on a letter asks for nothing
  });

  it('combining marks, joiners and variation selectors: no column', () => {
    expect(displayWidth('e\u0301')).toBe(1); // é decomposed
    expect(displayWidth('é')).toBe(1);
    expect(displayWidth('a\u0300\u0301\u0302')).toBe(1);
    expect(displayWidth('\u200d')).toBe(0);
    expect(displayWidth('\u200b')).toBe(0); // zero width space
    expect(displayWidth('\ufe0f')).toBe(0);
    expect(displayWidth('\u1112\u1161\u11ab')).toBe(2); // 한 as conjoining Jamo
    expect(clusterWidth('\u0301')).toBe(0);
  });

  it('cuts at a character boundary: never half a wide character, never a split emoji', () => {
    expect(sliceToWidth('日本語', 3)).toBe('日');
    expect(sliceToWidth('日本語', 4)).toBe('日本');
    expect(sliceToWidth('a👩‍💻b', 2)).toBe('a');
    expect(sliceToWidth('a👩‍💻b', 3)).toBe('a👩‍💻');
    expect(sliceToWidth('e\u0301x', 1)).toBe('e\u0301');
    expect(sliceToWidth('🇯🇵🇺🇸', 3)).toBe('🇯🇵');
    expect(truncateToWidth('日本語のトークン', 9)).toBe('日本語の…');
    expect(displayWidth(truncateToWidth('日本語のトークン', 9))).toBeLessThanOrEqual(9);
    expect(truncateToWidth('short', 9)).toBe('short');
    expect(truncateToWidth('abcdefghij', 5)).toBe('abcd…');
  });

  it('pads to a width in columns', () => {
    expect(padEndToWidth('日本', 6)).toBe('日本  ');
    expect(padEndToWidth('🚀', 3)).toBe('🚀 ');
    expect(padStartToWidth('한국', 5)).toBe(' 한국');
    expect(padEndToWidth('too long', 3)).toBe('too long');
  });

  it('wraps between words within the columns, a word wider than a line cut, later lines indented', () => {
    const warning = 'tesync: warning: upstream request failed; retrying: GET /v1/tokens/basalt-finance/charts failed with 500 (attempt 1, next try in 372 ms)';
    const lines = wrapToWidth(warning, 40, '  ');
    expect(lines).toEqual([
      'tesync: warning: upstream request',
      '  failed; retrying: GET',
      '  /v1/tokens/basalt-finance/charts',
      '  failed with 500 (attempt 1, next try',
      '  in 372 ms)',
    ]);
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(40);
    expect(wrapToWidth('トークン名 日本語日本語日本語', 10, '  ')).toEqual(['トークン名', '  日本語日', '  本語日本', '  語']);
    expect(wrapToWidth('short', 40)).toEqual(['short']);
    expect(wrapToWidth('', 40)).toEqual(['']);
  });
});
