import type { PeriodEvery } from '../dsl/coordination.js';

/** A period bucket: its id and how long until it ends. */
export interface Bucket {
  readonly id: string;
  /** ms from `now` to the end of the bucket. */
  readonly remainingMs: number;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * The bucket `nowMs` falls in. Calendar buckets are UTC (`2026-11-30T14:05`, `2026-11-30T14`,
 * `2026-11-30`, ISO week `2026-W49`, `2026-11`, `2026`); fixed buckets count `seconds`-long
 * slices from the epoch (`s3600:492384`).
 */
export function bucketOf(every: PeriodEvery, nowMs: number): Bucket {
  if (typeof every === 'object') {
    const len = every.seconds * 1000;
    const index = Math.floor(nowMs / len);
    return { id: `s${every.seconds}:${index}`, remainingMs: (index + 1) * len - nowMs };
  }
  const d = new Date(nowMs);
  const [y, mo, day, h, mi] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()];
  switch (every) {
    case 'minute':
      return {
        id: `${y}-${pad(mo + 1)}-${pad(day)}T${pad(h)}:${pad(mi)}`,
        remainingMs: Date.UTC(y, mo, day, h, mi + 1) - nowMs,
      };
    case 'hour':
      return { id: `${y}-${pad(mo + 1)}-${pad(day)}T${pad(h)}`, remainingMs: Date.UTC(y, mo, day, h + 1) - nowMs };
    case 'day':
      return { id: `${y}-${pad(mo + 1)}-${pad(day)}`, remainingMs: Date.UTC(y, mo, day + 1) - nowMs };
    case 'week':
      return isoWeek(nowMs);
    case 'month':
      return { id: `${y}-${pad(mo + 1)}`, remainingMs: Date.UTC(y, mo + 1, 1) - nowMs };
    case 'year':
      return { id: `${y}`, remainingMs: Date.UTC(y + 1, 0, 1) - nowMs };
  }
}

function isoWeek(nowMs: number): Bucket {
  const d = new Date(nowMs);
  const dayOfWeek = (d.getUTCDay() + 6) % 7; // Monday = 0
  const monday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - dayOfWeek);
  const thursday = new Date(monday + 3 * 86_400_000);
  const isoYear = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(isoYear, 0, 1)) / (7 * 86_400_000)) + 1;
  return { id: `${isoYear}-W${pad(week)}`, remainingMs: monday + 7 * 86_400_000 - nowMs };
}
