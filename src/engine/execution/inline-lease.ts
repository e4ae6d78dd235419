/**
 * The liveness lease of an inline run (docs/decisions/066): `engine.run` on an engine whose
 * store and coordinator other processes share holds the execution's liveness lease while it works,
 * renewed like a worker job's, so a recovery sweep in a worker can tell a live inline run from
 * one whose process stopped. Its records are marked `inline` (with the lease's owner) while it
 * works on them, and written fenced by the lease like a worker's: once the lease is lost the run
 * stops and writes nothing more.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import { monotonicNow } from '../../coordination/deadline.js';
import { JobLiveness } from '../run/job-liveness.js';
import { livenessKey } from '../model/keys.js';
import type { Clock } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { ExecutionRecord, InlineRun } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';

/** What an inline run's lease needs from the engine. */
export interface InlineLeaseDeps {
  readonly coordinator: Coordinator;
  readonly leases: JobLeases;
  readonly clock: Clock;
  readonly ttlMs: number;
  /** This engine's id (part of the lease owner). */
  readonly engineId: string;
  readonly logger: Logger;
}

/** The records an inline run writes while it works: marked, so no sweep takes it for a worker's (`pending`: handed off, a worker's now). */
function marked(record: ExecutionRecord, mark: InlineRun): ExecutionRecord {
  return record.status === 'running' || record.status === 'rolling_back' ? { ...record, inline: mark } : record;
}

/** An inline run without a lease (no coordinator, or one in this process only): marked, never swept. */
export const UNLEASED: InlineRun = Object.freeze({});

/** The lease of one inline run, from before its first record write to its end. */
export class InlineLease {
  readonly #deps: InlineLeaseDeps;
  readonly #liveness: JobLiveness;
  readonly #key: string;
  readonly #mark: InlineRun;
  #released = false;

  private constructor(deps: InlineLeaseDeps, liveness: JobLiveness, key: string, owner: string) {
    this.#deps = deps;
    this.#liveness = liveness;
    this.#key = key;
    this.#mark = Object.freeze({ lease: owner });
  }

  /**
   * Takes the lease of a new execution (nobody else can hold it: the id is new). Undefined when
   * the coordinator refuses or cannot answer: the run goes on unleased (and is never swept).
   */
  static async take(deps: InlineLeaseDeps, executionId: string): Promise<InlineLease | undefined> {
    const key = livenessKey(executionId);
    const owner = `inline:${deps.engineId}:${executionId}`;
    const sentAt = monotonicNow(deps.clock);
    try {
      // Nobody reads this lease's fencing token: no fence key is kept, so nothing of it outlives the record (P8).
      const taken = await deps.coordinator.lockAcquire({
        key,
        holder: { owner, executionId },
        ttlMs: deps.ttlMs,
        unfenced: true,
      });
      if (!taken.acquired) return undefined;
    } catch (error) {
      deps.logger.warn(
        { err: error, executionId },
        'inline run: could not take its liveness lease; it runs without one (a recovery sweep will not recover it)',
      );
      await deps.coordinator.lockRelease(key, owner).catch(() => undefined); // the reply may have been lost after the lease was taken
      return undefined;
    }
    const liveness = new JobLiveness(
      { clock: deps.clock, coordinator: deps.coordinator, leases: deps.leases },
      { executionId, key, owner, ttlMs: deps.ttlMs, sentAt },
    );
    return new InlineLease(deps, liveness, key, owner);
  }

  /** Aborted when the lease is lost (then the run stops): the run's root controller. */
  get root(): AbortController {
    return this.#liveness.root;
  }

  /**
   * Makes `state` write under the lease: fenced checkpoints, marked records, and a last write —
   * the terminal one, a hand-off's `pending` or a pause — that also releases it, before the
   * hand-off's job is enqueued or a resume can come: nobody waits for this lease to lapse.
   */
  bind(state: RunState): void {
    const binding = this.#liveness.binding;
    state.bindJob({
      ...binding,
      save: (record) =>
        record.status === 'pending' || record.status === 'paused'
          ? this.#leave(record)
          : binding.save(marked(record, this.#mark)),
      terminalSave: (record) => this.#leave(record),
    });
  }

  /** The run's last write: saved and the lease released in one call; no renewal after it. */
  async #leave(record: ExecutionRecord): Promise<void> {
    await this.#liveness.saveAndRelease(record);
    this.#released = true;
    this.#liveness.end();
  }

  /** Stops renewing and releases the lease (unless the terminal write did). */
  async end(): Promise<void> {
    this.#liveness.end();
    if (!this.#released) await this.#deps.coordinator.lockRelease(this.#key, this.#mark.lease!).catch(() => undefined);
  }
}

/** Marks the records of an inline run that holds no lease (they are never swept). */
export function markUnleased(state: RunState, save: (record: ExecutionRecord) => Promise<void>): void {
  state.bindJob({
    save: (record) => save(marked(record, UNLEASED)),
    stop: () => undefined,
    stopped: () => undefined,
    attach: () => undefined,
  });
}
