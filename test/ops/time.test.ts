import { expect, test } from 'vitest';
import { parseOperatorTime } from '../../src/ops/time.js';

test('operator times: ms, ISO with a zone, and dates without one read as UTC', () => {
  expect(parseOperatorTime('1764486000000')).toBe(1764486000000);
  expect(parseOperatorTime('2026-11-30T07:00')).toBe(Date.UTC(2026, 10, 30, 7, 0));
  expect(parseOperatorTime('2026-11-30T07:00:05')).toBe(Date.UTC(2026, 10, 30, 7, 0, 5));
  expect(parseOperatorTime('2026-11-30T07:00:00Z')).toBe(Date.UTC(2026, 10, 30, 7, 0));
  expect(parseOperatorTime('2026-11-30T07:00:00+01:00')).toBe(Date.UTC(2026, 10, 30, 6, 0));
  expect(parseOperatorTime('2026-11-30')).toBe(Date.UTC(2026, 10, 30));
  expect(parseOperatorTime('')).toBeUndefined();
  expect(parseOperatorTime(undefined)).toBeUndefined();
  expect(parseOperatorTime('last tuesday')).toBeNaN();
});
