/**
 * How many finished execution jobs BullMQ keeps, and for how long (docs/decisions/117): its
 * `removeOnComplete` / `removeOnFail` policies, set on every job the Redis runtime adds. A kept
 * job is a hash without a TTL, so the count is what bounds their memory; the age drops older ones
 * as later jobs finish. Nothing of ts-reactor reads a finished job (the records are the history);
 * while a job is kept, adding its id again is a no-op, which spares a redelivered job's
 * successors a second, harmless delivery.
 *
 * @module
 */
import { RuntimeOptionError } from '../errors.js';
import { shown } from '../storage/record-ttl.js';

/** How long, and how many, finished jobs of one outcome are kept. */
export interface KeepJobs {
  /** A finished job older than this (ms, rounded up to whole seconds) is removed when a later job of the queue finishes. */
  readonly ageMs: number;
  /** At most this many are kept; 0 removes each job as it finishes. */
  readonly count: number;
}

/** What BullMQ keeps of finished execution jobs: completed ones, and failed ones (infrastructure failures, for inspection). */
export interface JobRetention {
  readonly completed: KeepJobs;
  readonly failed: KeepJobs;
}

/** The `jobRetention` option: either outcome, either field; the others keep their defaults ({@link DEFAULT_JOB_RETENTION}). */
export interface JobRetentionOptions {
  readonly completed?: Partial<KeepJobs>;
  readonly failed?: Partial<KeepJobs>;
}

/** Default retention: completed jobs for an hour, at most 1,000; failed ones for 7 days, at most 1,000. */
export const DEFAULT_JOB_RETENTION: JobRetention = Object.freeze({
  completed: Object.freeze({ ageMs: 60 * 60 * 1000, count: 1_000 }),
  failed: Object.freeze({ ageMs: 7 * 24 * 60 * 60 * 1000, count: 1_000 }),
});

/**
 * The retention `options` ask for, over the defaults.
 * @throws RuntimeOptionError naming `factory` and the field: an age that is not a positive integer
 *   of ms, a count that is not an integer ≥ 0, an outcome or the whole option that is not an object.
 */
export function jobRetentionOf(factory: string, options: JobRetentionOptions | undefined): JobRetention {
  if (options === undefined) return DEFAULT_JOB_RETENTION;
  const refuse = (option: string, value: unknown, problem: string): never => {
    throw new RuntimeOptionError({ factory, option, value: shown(value) }, problem);
  };
  if (typeof options !== 'object' || options === null)
    return refuse('jobRetention', options, 'must be an object: { completed?: { ageMs?, count? }, failed?: { … } }');
  const outcome = (name: keyof JobRetention): KeepJobs => {
    const given: unknown = options[name];
    const fallback = DEFAULT_JOB_RETENTION[name];
    if (given === undefined) return fallback;
    if (typeof given !== 'object' || given === null)
      return refuse(`jobRetention.${name}`, given, 'must be an object: { ageMs?, count? }');
    const { ageMs = fallback.ageMs, count = fallback.count } = given as Partial<KeepJobs>;
    if (typeof ageMs !== 'number' || !Number.isSafeInteger(ageMs) || ageMs < 1)
      refuse(`jobRetention.${name}.ageMs`, ageMs, 'must be a positive integer of milliseconds');
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0)
      refuse(`jobRetention.${name}.count`, count, 'must be an integer ≥ 0 (0 removes each job as it finishes)');
    return Object.freeze({ ageMs, count });
  };
  return Object.freeze({ completed: outcome('completed'), failed: outcome('failed') });
}

/** BullMQ's `removeOnComplete` / `removeOnFail` of one outcome: its age in whole seconds, and its count. */
export function bullmqKeepJobs(keep: KeepJobs): { readonly age: number; readonly count: number } {
  return { age: Math.ceil(keep.ageMs / 1000), count: keep.count };
}
