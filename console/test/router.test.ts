import { describe, expect, it } from 'vitest';
import { buildHash, parseHash } from '../src/router';

describe('hash routes', () => {
  it('parses segments and query values', () => {
    expect(parseHash('#/buckets/mybucket?prefix=a/b/')).toEqual({ segments: ['buckets', 'mybucket'], query: { prefix: 'a/b/' } });
    expect(parseHash('')).toEqual({ segments: [], query: {} });
    expect(parseHash('#/')).toEqual({ segments: [], query: {} });
    expect(parseHash('#/access?tab=policies&policy=')).toEqual({ segments: ['access'], query: { tab: 'policies', policy: '' } });
  });

  it('keeps plus signs, percent signs, Unicode and markup intact through a round trip', () => {
    for (const value of ['a+b c/', '100%/x', 'été/日本/', '<img src=x onerror=alert(1)>', 'q?x=1&y#z']) {
      const hash = buildHash(['buckets', 'b+1'], { prefix: value, key: value });
      const parsed = parseHash(hash);
      expect(parsed.segments).toEqual(['buckets', 'b+1']);
      expect(parsed.query).toEqual({ prefix: value, key: value });
    }
  });

  it('carries namespace levels joined by the unit separator in one segment', () => {
    const hash = buildHash(['warehouses', 'wh', 'tables', 'a\u001fb.c', 't']);
    expect(hash).toBe('#/warehouses/wh/tables/a%1Fb.c/t');
    expect(parseHash(hash).segments[3].split('\u001f')).toEqual(['a', 'b.c']);
  });

  it('leaves out empty query values', () => {
    expect(buildHash(['buckets', 'b'], { prefix: '', key: undefined })).toBe('#/buckets/b');
  });
});
