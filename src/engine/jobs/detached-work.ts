/**
 * Work an engine starts without awaiting it — the wake-ups of parked executions after a release,
 * of an async unit's readers after its end, the recovery sweeps — tracked so that `engine.idle()`
 * can wait for it: a runtime closes its connections only after the last of it (decision 048).
 *
 * @module
 */

/** The detached work of one engine. */
export class DetachedWork {
  readonly #pending = new Set<Promise<void>>();

  /** Tracks `work` until it settles; a failure goes to `onError` (a throwing `onError` is swallowed). */
  detach(work: Promise<void>, onError: (error: unknown) => void): void {
    const tracked: Promise<void> = work
      .catch((error: unknown) => {
        try {
          onError(error);
        } catch {
          // a throwing logger must not turn into an unobserved rejection
        }
      })
      .finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  /** Resolves once no detached work is left, including work detached while it waits. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
