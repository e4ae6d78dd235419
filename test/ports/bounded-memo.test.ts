import { describe, expect, it } from 'vitest';
import { forgetOldest } from '../../src/ports/bounded-memo.js';

describe('forgetOldest', () => {
  it('leaves a memo at or under its limit alone', () => {
    const memo = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    forgetOldest(memo, 2);
    expect([...memo.keys()]).toEqual(['a', 'b']);
  });

  it('past the limit, forgets the oldest entries until nine tenths of the limit are left', () => {
    const memo = new Map<string, number>();
    for (let i = 0; i < 21; i++) memo.set(`k${i}`, i);
    forgetOldest(memo, 20);
    expect(memo.size).toBe(18);
    expect([...memo.keys()]).toEqual(Array.from({ length: 18 }, (_, i) => `k${i + 3}`));
  });

  it('keeps an entry set again after its first insert (it counts as the newest)', () => {
    const memo = new Map<string, number>();
    for (let i = 0; i < 10; i++) memo.set(`k${i}`, i);
    memo.delete('k0');
    memo.set('k0', 0);
    memo.set('k10', 10);
    forgetOldest(memo, 10);
    expect(memo.has('k0')).toBe(true);
    expect(memo.has('k1')).toBe(false);
    expect(memo.size).toBe(9);
  });

  it('works on a Set', () => {
    const memo = new Set(['a', 'b', 'c', 'd']);
    forgetOldest(memo, 3);
    expect([...memo]).toEqual(['c', 'd']);
  });

  it('keeps a memo bounded over many inserts, the newest entries in it', () => {
    const memo = new Map<string, number>();
    let largest = 0;
    for (let i = 0; i < 200_000; i++) {
      memo.set(`k${i}`, i);
      forgetOldest(memo, 10_000);
      largest = Math.max(largest, memo.size);
    }
    expect(largest).toBe(10_000);
    expect(memo.has('k199999')).toBe(true);
    expect(memo.has('k0')).toBe(false);
  });
});
