/**
 * A gauge read with a deadline: a paused or frozen Redis must not hold a scrape. The gauge whose
 * read gives up is left out of that scrape (`prometheusMetrics` leaves it without samples).
 *
 * @module
 */

/** How long a gauge's read may take by default. */
export const GAUGE_TIMEOUT_MS = 2_000;

/** `read`, or a rejection once `timeoutMs` has passed. */
export function boundedRead<T>(read: Promise<T>, timeoutMs: number = GAUGE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  read.catch(() => undefined); // settled later, after the timeout: observed here
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}
