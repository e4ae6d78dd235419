/**
 * Work over every element of a large fan-out map, a chunk at a time: at most `size` calls in
 * flight, so 100,000 element records are neither requested nor held at once.
 *
 * @module
 */

/** How many element records a fan-out map writes or reads at once. */
export const ELEMENT_CHUNK = 1_000;

/**
 * Calls `each(index)` for every index `0 .. length-1`, `size` at a time (a chunk waits for the
 * one before it), and hands each chunk's answers, in index order, to `take` before the next
 * chunk starts. Linear in `length`; holds one chunk's answers at a time.
 */
export async function inChunks<R>(
  length: number,
  each: (index: number) => Promise<R>,
  take: (answers: readonly R[], from: number) => void = () => undefined,
  size: number = ELEMENT_CHUNK,
): Promise<void> {
  for (let from = 0; from < length; from += size) {
    const to = Math.min(length, from + size);
    const answers = await Promise.all(Array.from({ length: to - from }, (_, i) => each(from + i)));
    take(answers, from);
  }
}
