/**
 * Mutual exclusion between steps of one execution. Coordination holds belong to the execution
 * (so nested work re-enters its own keys), which alone would let two steps of the same
 * execution running side by side — parallel siblings, map elements — both enter a step-level
 * lock. The gate serializes them in this process before they go to the coordinator.
 *
 * @module
 */

/** Per-key FIFO mutex for the steps of one execution. */
export class SiblingGate {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Waits until no other step of this execution holds any of `keys`, then holds them. Keys are
   * taken in sorted order, so two steps asking for the same keys cannot deadlock. Returns the
   * release function.
   */
  async enter(keys: readonly string[]): Promise<() => void> {
    const releases: (() => void)[] = [];
    for (const key of keys.length < 2 ? keys : [...new Set(keys)].sort()) {
      const previous = this.#tails.get(key);
      let release!: () => void;
      const mine = new Promise<void>((resolve) => (release = resolve));
      // A key no sibling holds is held at once; otherwise after the last one in line.
      const tail = previous === undefined ? mine : previous.then(() => mine);
      this.#tails.set(key, tail);
      if (previous !== undefined) await previous;
      releases.push(() => {
        release();
        if (this.#tails.get(key) === tail) this.#tails.delete(key);
      });
    }
    return () => {
      for (const r of releases.reverse()) r();
    };
  }
}
