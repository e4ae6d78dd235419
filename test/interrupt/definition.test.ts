/** Interrupt declarations are validated when the reactor is built (R-16 and the settings). */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { DefinitionError, reactor } from '../../src/index.js';

const base = reactor('r').input({ id: z.string() });
const refused = (fn: () => unknown, text: string): void => {
  expect(fn).toThrow(DefinitionError);
  expect(fn).toThrow(text);
};

describe('interrupt definitions', () => {
  test('R-16: any coordination primitive on an interrupt step is refused, naming reactor, step and the reactor-level remedy', () => {
    const error = (() => {
      try {
        base.interrupt('approve', {
          payload: { ok: z.boolean() },
          ...({ lock: { key: () => 'k' }, rateLimit: { key: () => 'k', limit: 1, per: '1s' } } as object),
        });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error).toMatchObject({ code: 'definition_invalid', details: { reactor: 'r', step: 'approve' } });
    expect((error as Error).message).toBe(
      'reactor "r", interrupt "approve": declares lock, rateLimit, but an interrupt step cannot coordinate (a paused execution holds nothing); declare it on the reactor instead (withLock, withSemaphore, withRateLimit, withPeriod, withOrderedLock)',
    );
  });

  test('bad settings are refused: payload, correlationId, timeout, strategy, maxAttempts, resume', () => {
    refused(() => base.interrupt('a', {} as never), 'needs a payload');
    refused(
      () => base.interrupt('a', { payload: { ok: 'not a schema' } as never }),
      'payload must be a Standard Schema or a field map',
    );
    refused(
      () => base.interrupt('a', { payload: { ok: z.boolean() }, correlationId: 'x' as never }),
      'correlationId must be a function',
    );
    refused(
      () => base.interrupt('a', { payload: { ok: z.boolean() }, timeout: 'soon' as never }),
      'timeout is not a positive duration',
    );
    refused(
      () => base.interrupt('a', { payload: { ok: z.boolean() }, timeoutStrategy: 'eager' as never }),
      "timeoutStrategy must be 'lazy' or 'active'",
    );
    refused(
      () => base.interrupt('a', { payload: { ok: z.boolean() }, maxAttempts: 0 }),
      'maxAttempts must be an integer >= 1 or Infinity',
    );
    refused(
      () => base.interrupt('a', { payload: { ok: z.boolean() }, resume: 'later' as never }),
      "resume must be 'inline' or 'background'",
    );
  });

  test('a map element that could pause is refused (compose it instead)', () => {
    const child = reactor('child')
      .interrupt('approve', { payload: { ok: z.boolean() } })
      .build();
    refused(
      () => base.map('each', { source: ($) => $.value([1, 2]), each: child, args: () => ({}) }),
      'map elements cannot pause: "child" has interrupt step(s) approve',
    );
  });

  test('an interrupt is a node of the graph like any step (toMermaid, dependencies)', () => {
    const r = base
      .step('a', { run: () => 1 })
      .interrupt('approve', { waitFor: ['a'], payload: { ok: z.boolean() } })
      .build();
    expect(r.toMermaid()).toContain('s_a -.-> s_approve');
    expect(r.byName.get('approve')).toMatchObject({ kind: 'interrupt', dependsOn: ['a'] });
  });
});
