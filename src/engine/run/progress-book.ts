/**
 * The progress of one execution's steps (`ctx.progress(data)`): each report checked (JSON, at most
 * {@link MAX_PROGRESS_BYTES}), and the newest of each step kept for the record
 * (`ExecutionRecord.progress`, at most {@link MAX_PROGRESS_STEPS} steps, the least recently
 * reported dropped first), so a watcher that comes late still finds it (docs/progress.md).
 *
 * @module
 */
import { ProgressInvalidError } from '../../errors.js';
import type { StepProgress } from '../../ports/store.js';

/** The largest progress report, in bytes of its JSON. */
export const MAX_PROGRESS_BYTES = 16 * 1024;

/** Most steps whose newest report a record keeps (a large map's elements each report under their own path). */
export const MAX_PROGRESS_STEPS = 100;

/** The newest progress report of each step of one execution. */
export class ProgressBook {
  readonly #latest = new Map<string, StepProgress>();

  /** `resumed`: the reports of the record the run resumes. */
  constructor(resumed: Readonly<Record<string, StepProgress>> | undefined) {
    for (const [step, progress] of Object.entries(resumed ?? {})) this.#latest.set(step, progress);
  }

  /**
   * Checks a report and keeps it as `step`'s newest; returns the data as JSON gives it back (what
   * watchers and the record get).
   *
   * @throws ProgressInvalidError when `data` has no JSON form or its JSON is over {@link MAX_PROGRESS_BYTES}.
   */
  report(step: string, attempt: number, data: unknown, at: number): unknown {
    const value = checkedProgress(step, attempt, data);
    this.#latest.delete(step);
    this.#latest.set(step, { attempt, data: value, at });
    if (this.#latest.size > MAX_PROGRESS_STEPS) this.#latest.delete(this.#latest.keys().next().value!);
    return value;
  }

  /** The newest report of each step, for the record; undefined when there is none. */
  record(): Readonly<Record<string, StepProgress>> | undefined {
    return this.#latest.size === 0 ? undefined : Object.fromEntries(this.#latest);
  }
}

/**
 * `data` as JSON gives it back, once checked.
 *
 * @throws ProgressInvalidError when `data` has no JSON form or its JSON is over {@link MAX_PROGRESS_BYTES}.
 */
export function checkedProgress(step: string, attempt: number, data: unknown): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch {
    json = undefined;
  }
  if (json === undefined) throw new ProgressInvalidError({ step, attempt, reason: 'not_json' });
  // A UTF-8 character is at most 3 bytes per UTF-16 unit: short JSON needs no count.
  const bytes = json.length <= MAX_PROGRESS_BYTES / 3 ? json.length : Buffer.byteLength(json);
  if (bytes > MAX_PROGRESS_BYTES)
    throw new ProgressInvalidError({ step, attempt, reason: 'too_large', bytes, limit: MAX_PROGRESS_BYTES });
  return JSON.parse(json) as unknown;
}
