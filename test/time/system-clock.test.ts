/**
 * The system clock's `sleep` longer than one `setTimeout` holds (2^31 − 1 ms, about 24.8 days):
 * a longer timer fires at once in Node, so the clock chains shorter ones (decision 114). A start
 * delayed by months on the embedded pool waits for its time.
 */
import { expect, test } from 'vitest';
import { systemClock } from '../../src/ports/clock.js';

test('a sleep of 3e9 ms (about 35 days) is still pending after a 100 ms timer, and ends when aborted', async () => {
  const abort = new AbortController();
  let ended = false;
  const sleeping = systemClock.sleep(3e9, abort.signal).then(() => (ended = true));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(ended).toBe(false);
  abort.abort();
  await sleeping;
  expect(ended).toBe(true);
});
