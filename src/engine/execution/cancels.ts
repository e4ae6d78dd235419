/**
 * Cancels announced by other processes, acted on at once. `engine.cancel` of an execution that
 * runs elsewhere writes the cancel marker (the source of truth, read by a worker when it takes a
 * job and at every liveness tick) and, when the coordinator can, announces it. Every engine that
 * runs work listens (one subscription per engine, taken with its first run) and aborts the runs
 * it has of that execution: an inline run of `engine.run`, or a worker's job. The run stops at
 * its next step boundary and rolls back, as for a cancel in its own process (decision 053). Once
 * it listens, it re-reads the cancel markers of what it runs: an announcement made before its
 * subscription was in place passed it by (decision 058). The marker carries the cancel's reason
 * (its note): the run ends with the reason its canceller gave (decision 106).
 *
 * @module
 */
import { CancelledError } from '../../errors.js';
import { cancelRequestKey } from '../model/keys.js';
import { fastPathsOf } from '../../coordination/fast-paths.js';
import type { Coordinator } from '../../ports/coordinator.js';

/** The reason of a cancel request whose marker carries none (a coordinator without notes). */
export const REQUESTED_CANCEL_REASON = 'cancel requested by an operator';

/** The bucket of an execution's cancel marker (its key: `cancelRequestKey`). */
export const CANCEL_BUCKET = 'requested';

/**
 * The reason a cancel request carries (the note of its marker, decision 106), or
 * {@link REQUESTED_CANCEL_REASON} when it carries none or cannot be read now.
 */
export async function requestedCancelReason(coordinator: Coordinator, executionId: string): Promise<string> {
  const note = await coordinator.periodNote?.(cancelRequestKey(executionId), CANCEL_BUCKET).catch(() => undefined);
  return note ?? REQUESTED_CANCEL_REASON;
}

/** The runs of this engine a cancel announcement can reach, by execution id. */
export class CancelTargets {
  readonly #running = new Map<string, Set<AbortController>>();
  readonly #coordinator: Coordinator | undefined;
  readonly #inline: InlineRuns;
  #listening = false;

  /** `inline` finds the controllers of the inline runs of this engine (`engine.run`, an inline resume). */
  constructor(coordinator: Coordinator | undefined, inline: InlineRuns) {
    this.#coordinator = coordinator;
    this.#inline = inline;
  }

  /** Makes `controller` abortable by a cancel announced for `executionId`, until the returned function is called. */
  track(executionId: string, controller: AbortController): () => void {
    this.listen();
    let set = this.#running.get(executionId);
    if (set === undefined) this.#running.set(executionId, (set = new Set()));
    set.add(controller);
    return () => {
      set.delete(controller);
      if (set.size === 0 && this.#running.get(executionId) === set) this.#running.delete(executionId);
    };
  }

  /** Starts listening to announcements (once; an engine calls it with its first run). */
  listen(): void {
    const coordinator = this.#coordinator;
    const cancels = fastPathsOf(coordinator).cancels;
    if (this.#listening || coordinator === undefined || cancels === undefined) return;
    this.#listening = true;
    cancels.onCancelAnnounced(
      (executionId) => void requestedCancelReason(coordinator, executionId).then((r) => this.#cancel(executionId, r)),
      () => void this.#recheck().catch(() => undefined), // a marker unreadable now is read at the run's next liveness check
    );
  }

  #cancel(executionId: string, reason: string): void {
    const inline = this.#inline.get(executionId);
    for (const controller of [...(this.#running.get(executionId) ?? []), ...(inline ? [inline] : [])]) {
      if (!controller.signal.aborted) controller.abort(new CancelledError(executionId, reason));
    }
  }

  /** Announcements made before this engine listened passed it by: reads the cancel markers of what it runs now. */
  async #recheck(): Promise<void> {
    const coordinator = this.#coordinator!;
    const ids = new Set([...this.#running.keys(), ...this.#inline.ids()]);
    await Promise.all(
      [...ids].map(async (executionId) => {
        if (await coordinator.periodIsMarked(cancelRequestKey(executionId), CANCEL_BUCKET))
          this.#cancel(executionId, await requestedCancelReason(coordinator, executionId));
      }),
    );
  }
}

/** The inline runs of an engine, by execution id. */
export interface InlineRuns {
  get(executionId: string): AbortController | undefined;
  ids(): Iterable<string>;
}
