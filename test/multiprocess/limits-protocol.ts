/**
 * What `limits.test.ts` and its worker processes (`limits-worker-process.ts`) share: the config,
 * the reactors (same names, keys and limit functions on both sides) and the Redis keys where the
 * step bodies record what they saw.
 *
 * - `lim-tier`: a step with two semaphores, per user (`limit: tier === 'pro' ? 3 : 1`) and per
 *   project (3); its body is a guarded section counted per user and per project (INCR on entry,
 *   the maximum kept, DECR on exit). Until the user has been at its limit and some execution has
 *   parked, a body keeps its slots (the gate), so contention does not depend on how fast the
 *   workers pick jobs up on a busy machine.
 * - `lim-rate`: a step with two rate limits, per user 2 and per project 5 in 4 s (windows long
 *   beside how fast a machine usually hands out jobs, so both usually bind); its body records
 *   the server times at which its start was charged to each window (the scores of its start id
 *   in the two sliding logs), so the test can check every window.
 */
import { z } from 'zod';
import { reactor } from '../../src/index.js';

export interface LimitsWorkerConfig {
  readonly url: string;
  readonly prefix: string;
  /** Base name of the keys the bodies write. */
  readonly guard: string;
  readonly concurrency: number;
  readonly background?: { readonly parkFallbackMs?: number; readonly contentionCap?: number };
  /** Start the worker only on a `go` line on stdin. */
  readonly waitForGo?: boolean;
}

/** The keys the step bodies write (all under the scenario's guard name). */
export function limitKeys(guard: string): {
  cur: (key: string) => string;
  max: string;
  charges: string;
  parks: string;
} {
  return {
    cur: (key) => `${guard}:cur:${key}`,
    max: `${guard}:max`,
    charges: `${guard}:charges`,
    parks: `${guard}:parks`,
  };
}

// KEYS: cur of the user, cur of the project, max (hash). ARGV: user key, project key.
export const ENTER = `
for i = 1, 2 do
  local v = redis.call('INCR', KEYS[i])
  if v > tonumber(redis.call('HGET', KEYS[3], ARGV[i]) or '0') then redis.call('HSET', KEYS[3], ARGV[i], v) end
end
`;
// KEYS: cur of the user, cur of the project.
export const EXIT = `
redis.call('DECR', KEYS[1])
redis.call('DECR', KEYS[2])
`;
// KEYS: sliding log of the user window, of the project window, the charges list. ARGV: start id, user, project.
// Appends "user|project|userChargeMs|projectChargeMs" ('' where the start was not in the log).
export const RECORD_CHARGES = `
local u = redis.call('ZSCORE', KEYS[1], ARGV[1]) or ''
local p = redis.call('ZSCORE', KEYS[2], ARGV[1]) or ''
redis.call('RPUSH', KEYS[3], ARGV[2] .. '|' .. ARGV[3] .. '|' .. u .. '|' .. p)
`;

/** The semaphore limit of a tier. */
export const tierLimit = (tier: 'pro' | 'free'): number => (tier === 'pro' ? 3 : 1);
export const PROJECT_SEMAPHORE = 3;
export const USER_RATE = { limit: 2, periodMs: 4_000 } as const;
export const PROJECT_RATE = { limit: 5, periodMs: 4_000 } as const;

/** What a step body does: enter / leave the guarded section, or record its charges. */
export interface LimitBodies {
  tier(user: string, project: string, tier: 'pro' | 'free'): Promise<void>;
  rate(user: string, project: string, executionId: string): Promise<void>;
}

/** The reactors every process registers. */
export function buildLimitReactors(bodies: LimitBodies) {
  const tiered = reactor('lim-tier')
    .input({ user: z.string(), project: z.string(), tier: z.enum(['pro', 'free']) })
    .step('work', {
      args: ($) => ({ user: $.input('user'), project: $.input('project'), tier: $.input('tier') }),
      semaphore: [
        { key: ({ user }) => `lim:user:${user}`, limit: ({ tier }) => tierLimit(tier), ttl: '10s' },
        { key: ({ project }) => `lim:project:${project}`, limit: PROJECT_SEMAPHORE, ttl: '10s' },
      ],
      run: ({ user, project, tier }) => bodies.tier(user, project, tier),
    })
    .build();
  const rated = reactor('lim-rate')
    .input({ user: z.string(), project: z.string() })
    .step('call', {
      args: ($) => ({ user: $.input('user'), project: $.input('project') }),
      rateLimit: [
        { key: ({ user }) => `lim:user:${user}`, limit: USER_RATE.limit, per: USER_RATE.periodMs },
        { key: ({ project }) => `lim:project:${project}`, limit: PROJECT_RATE.limit, per: PROJECT_RATE.periodMs },
      ],
      run: ({ user, project }, ctx) => bodies.rate(user, project, ctx.executionId),
    })
    .build();
  return { tiered, rated };
}
