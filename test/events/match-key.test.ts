/**
 * `matchKeyOf`: the canonical match key a wait registers under and a sent event looks up — the
 * `matchOn` fields' values in declared order, as JSON; `''` without fields.
 */
import { expect, test } from 'vitest';
import { matchKeyOf } from '../../src/ports/event-waits.js';

test('the values of the fields, in the declared order, as JSON', () => {
  expect(matchKeyOf(['orderId'], { orderId: 'o-1', amount: 5 })).toBe('["o-1"]');
  expect(matchKeyOf(['a', 'b'], { b: 2, a: 1 })).toBe('[1,2]');
  expect(matchKeyOf(['b', 'a'], { b: 2, a: 1 })).toBe('[2,1]');
});

test('no fields: the empty key, whatever the source', () => {
  expect(matchKeyOf([], { orderId: 'o-1' })).toBe('');
  expect(matchKeyOf([], undefined)).toBe('');
});

test('values compare as JSON: a string is not a number; a missing field is null', () => {
  expect(matchKeyOf(['id'], { id: '1' })).not.toBe(matchKeyOf(['id'], { id: 1 }));
  expect(matchKeyOf(['id'], {})).toBe('[null]');
  expect(matchKeyOf(['id'], { id: null })).toBe('[null]');
  expect(matchKeyOf(['id'], 'not an object')).toBe('[null]');
});
