/**
 * Types of limits from arguments and of several declarations of a kind (docs/decisions/085): a
 * limit function takes the step's validated arguments (a reactor's: its input) and must return
 * a number; a list of semaphores or rate limits is typed entry by entry.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineStep, reactor, type LimitFn, type SemaphoreOptions } from '../../src/index.js';

describe('a limit function', () => {
  test("a step's limit function takes the step's arguments", () => {
    reactor('tiered')
      .input({ user: z.string(), tier: z.enum(['pro', 'free']) })
      .step('work', {
        args: ($) => ({ user: $.input('user'), tier: $.input('tier') }),
        semaphore: {
          key: ({ user }) => `user:${user}`,
          limit: (args) => {
            expectTypeOf(args).toEqualTypeOf<{ user: string; tier: 'pro' | 'free' }>();
            return args.tier === 'pro' ? 3 : 1;
          },
        },
        rateLimit: { key: ({ user }) => user, limit: ({ tier }) => (tier === 'pro' ? 10 : 1), per: '1s' },
        run: () => 1,
      });
  });

  test("a reactor's limit function takes its validated input", () => {
    reactor('tenant')
      .input({ tenant: z.string(), seats: z.number().default(1) })
      .withSemaphore({
        key: ({ tenant }) => tenant,
        limit: (input) => {
          expectTypeOf(input).toEqualTypeOf<{ tenant: string; seats: number }>();
          return input.seats;
        },
      })
      .withRateLimit({ key: ({ tenant }) => tenant, windows: [{ limit: ({ seats }) => seats * 10, per: '1m' }] });
  });

  test("a step definition's limit function takes its contract's output", () => {
    defineStep({
      input: { account: z.string(), plan: z.enum(['a', 'b']) },
      semaphore: { key: ({ account }) => account, limit: ({ plan }) => (plan === 'a' ? 2 : 5) },
      run: ({ account }) => account,
    });
  });

  test('a limit function returning anything but a number does not compile', () => {
    reactor('bad')
      .input({ tier: z.string() })
      // @ts-expect-error -- a limit returns a number
      .withSemaphore({ key: () => 'k', limit: ({ tier }) => tier });
    reactor('bad-rate')
      .input({ tier: z.string() })
      // @ts-expect-error -- a window limit returns a number
      .withRateLimit({ key: () => 'k', limit: () => '3', per: '1s' });
    reactor('bad-arg')
      .input({ tier: z.string() })
      // @ts-expect-error -- the input has no field `plan`
      .withSemaphore({ key: () => 'k', limit: ({ plan }) => (plan === 1 ? 1 : 2) });
    expectTypeOf<LimitFn<{ n: number }>>().toEqualTypeOf<(args: { n: number }) => number>();
    expectTypeOf<SemaphoreOptions<{ n: number }>['limit']>().toEqualTypeOf<number | LimitFn<{ n: number }>>();
  });
});

describe('several of a kind', () => {
  test('a list of semaphores or rate limits, each entry typed on the same arguments', () => {
    reactor('two')
      .input({ user: z.string(), project: z.string() })
      .withSemaphore([
        { key: ({ user }) => `user:${user}`, limit: 1 },
        { key: ({ project }) => `project:${project}`, limit: () => 5 },
      ])
      .step('call', {
        args: ($) => ({ user: $.input('user'), project: $.input('project') }),
        rateLimit: [
          { key: ({ user }) => `user:${user}`, limit: 2, per: '1s' },
          { key: ({ project }) => `project:${project}`, limit: 5, per: '1s' },
          { name: 'psp' },
        ],
        run: () => 1,
      });
    reactor('bad-list')
      .input({ user: z.string() })
      // @ts-expect-error -- every entry's key reads the same input
      .withSemaphore([{ key: ({ nope }) => String(nope), limit: 1 }]);
  });
});
