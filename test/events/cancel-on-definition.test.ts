/** `cancelOn` declarations: validated when declared and at build, frozen onto the definition, inherited by `extend`. */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { DefinitionError, event, reactor } from '../../src/index.js';

const orderCancelled = event('order.cancelled', { orderId: z.string(), reason: z.string() });
const base = reactor('fulfil').input({ orderId: z.string(), note: z.string().optional() });
const step = { run: () => 1 };

function refusal(build: () => unknown): DefinitionError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error).toMatchObject({ code: 'definition_invalid', reactor: 'fulfil' });
    return error as DefinitionError;
  }
  throw new Error('expected a DefinitionError');
}

describe('cancelOn declarations', () => {
  test('are frozen onto the definition in declaration order, and inherited by extend', () => {
    const match = (e: { reason: string }) => e.reason !== 'test';
    const built = base
      .cancelOn(orderCancelled, { matchOn: ['orderId'], match })
      .cancelOn('order.voided')
      .step('ship', step)
      .build();
    expect(built.cancelOn).toEqual([
      { event: 'order.cancelled', matchOn: ['orderId'], match, declaration: orderCancelled },
      { event: 'order.voided', matchOn: [] },
    ]);
    expect(Object.isFrozen(built.cancelOn)).toBe(true);
    expect(Object.isFrozen(built.cancelOn[0])).toBe(true);
    expect(
      built
        .extend('fulfil-2')
        .build()
        .cancelOn.map((c) => c.event),
    ).toEqual(['order.cancelled', 'order.voided']);
    expect(reactor('plain').step('a', step).build().cancelOn).toEqual([]);
  });

  test('the fingerprint does not change with cancelOn', () => {
    const plain = base.step('ship', step).build();
    const cancelling = base
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('ship', step)
      .build();
    expect(cancelling.fingerprint).toBe(plain.fingerprint);
  });

  test.each([
    ['an invalid event name', () => base.cancelOn('order cancelled'), /the name must not hold white space/],
    ['the same event twice', () => base.cancelOn('a.b').cancelOn('a.b'), /declares cancelOn\("a.b"\) twice/],
    ['options that are not an object', () => base.cancelOn('a.b', 3 as never), /options must be an object/],
    [
      'a matchOn that is not an array',
      () => base.cancelOn('a.b', { matchOn: 'orderId' as never }),
      /matchOn must be an array/,
    ],
    ['an empty matchOn field', () => base.cancelOn('a.b', { matchOn: [''] as never }), /matchOn holds ""/],
    ['a field named twice', () => base.cancelOn('a.b', { matchOn: ['orderId', 'orderId'] }), /names "orderId" twice/],
    [
      'a field the event payload lacks',
      () => base.cancelOn(orderCancelled, { matchOn: ['note'] as never }),
      /matchOn field "note" is not a field of the event's payload; its fields are: orderId, reason/,
    ],
    [
      'a match that is not a function',
      () => base.cancelOn('a.b', { match: true as never }),
      /match must be a function/,
    ],
    [
      'a matchOn field that is not an input (at build)',
      () =>
        base
          .cancelOn('a.b', { matchOn: ['sku'] as never })
          .step('ship', step)
          .build(),
      /matchOn field "sku" is not a reactor input/,
    ],
    [
      'a matchOn field that is an optional input (at build)',
      () =>
        base
          .cancelOn('a.b', { matchOn: ['note'] })
          .step('ship', step)
          .build(),
      /matchOn field "note" is an optional input/,
    ],
  ])('refuses %s with a DefinitionError', (_what, build, message) => {
    expect(refusal(build).message).toMatch(message);
  });
});
