/**
 * The idempotency claim protocol of `engine.run` and `engine.start`: at most one execution per
 * reactor and key. A run with a key claims it in the store before it runs, and the won claim
 * writes the execution's first record with it (decision 056); a repeat of the key answers with
 * the original execution's result as a replay — awaited while that execution's claim is settling
 * in this engine (decision 047), else rebuilt from its record.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { ErrorCode, ReactorError, RecordTooLargeError } from '../../errors.js';
import { fromRecord } from '../execution/execute.js';
import type { RunResult } from '../model/results.js';
import type { Clock } from '../../ports/clock.js';
import { stampFields } from '../run/run-state.js';
import {
  RECORD_VERSION,
  type ExecutionRecord,
  type ExecutionStatus,
  type ExecutionTags,
  type Store,
  type TraceContext,
} from '../../ports/store.js';

/** A run that passed validation and, with a key, won its idempotency claim. */
export interface Accepted {
  readonly executionId: string;
  readonly input: Record<string, unknown>;
  readonly key: string | undefined;
  readonly retryOf: string | undefined;
  /** Span links of the new execution (a retry: the retried execution's trace). */
  readonly links: readonly TraceContext[] | undefined;
  /** The execution's tags, checked (absent: none). */
  readonly tags?: ExecutionTags | undefined;
}

/** The status an execution's first record has: an inline run's `running`, a background start's `pending`. */
export type ClaimStatus = Extract<ExecutionStatus, 'running' | 'pending'>;

/** What {@link IdempotencyClaims} needs from the engine. */
export interface IdempotencyDeps {
  readonly store: Store;
  readonly clock: Clock;
  /** The inline runs of this engine, by execution id: a replay of one still running awaits it. */
  readonly live: ReadonlyMap<string, { readonly done: Promise<RunResult> }>;
}

/** The idempotency claims of one engine, and the replays of repeated keys. */
export class IdempotencyClaims {
  readonly #deps: IdempotencyDeps;
  /**
   * Outcomes of idempotency claims in progress, by the claiming execution's id. An entry is
   * registered *before* its claim is sent, so a concurrent caller whose claim names that
   * execution always finds it, whatever the interleaving of awaits (docs/decisions/047).
   */
  readonly #claiming = new Map<string, Promise<RunResult>>();

  /** `deps`: the store that holds the claims, the clock that stamps the first record, the inline runs. */
  constructor(deps: IdempotencyDeps) {
    this.#deps = deps;
  }

  /**
   * Claims `key` for `accepted` and runs `body` when the claim is won; a lost claim answers with
   * the winner's result as a replay. The won claim writes the execution's first record, with
   * status `first` (decision 056). A first record over the store's size limit is refused before
   * anything is claimed, as without a key: an inline run (`running`) fails with
   * {@link RecordTooLargeError}, a background start (`pending`) rejects with it.
   */
  async claim(
    reactor: AnyReactorDefinition,
    accepted: Accepted,
    key: string,
    first: ClaimStatus,
    body: (accepted: Accepted) => Promise<RunResult>,
  ): Promise<RunResult> {
    const { executionId } = accepted;
    let settle!: (outcome: Promise<RunResult>) => void;
    const outcome = new Promise<RunResult>((resolve) => (settle = resolve));
    outcome.catch(() => undefined); // a replay awaits it; without one, a failed body must not be an unobserved rejection
    this.#claiming.set(executionId, outcome);
    try {
      const record = claimRecord(accepted, reactor, first, this.#deps.clock.now());
      const claim = await this.#deps.store
        .claimIdempotency(reactor.name, key, executionId, record)
        .catch((error: unknown) => {
          settle(Promise.reject(error)); // a replay that learnt this id (a reply lost after the claim) ends the same way
          if (error instanceof RecordTooLargeError) return error; // refused before claiming: an outcome, like a run without a key
          throw error;
        });
      if (claim instanceof RecordTooLargeError) {
        if (first === 'pending') throw claim; // a start rejects with it, as one without a key (docs/limits.md)
        return unstorable(reactor, executionId, claim);
      }
      if (!claim.claimed) return await this.replay(claim.executionId);
      const result = body(accepted);
      settle(result);
      return await result;
    } finally {
      this.#claiming.delete(executionId);
    }
  }

  /**
   * The original execution's result for a repeated key: awaited while its claim is settling here,
   * else rebuilt from its record (the one its claim wrote, or a later one: decision 056).
   */
  async replay(executionId: string): Promise<RunResult> {
    const live = this.#claiming.get(executionId) ?? this.#deps.live.get(executionId)?.done;
    if (live) return { ...(await live), replay: true };
    const record = await this.#deps.store.get(executionId);
    if (!record)
      throw new ReactorError(
        ErrorCode.RecordNotFound,
        `idempotency key points at execution ${executionId}, whose record is gone (expired, deleted, or not written with the claim by this store)`,
        { details: { executionId } },
      );
    return fromRecord(record);
  }
}

/**
 * The record a won idempotency claim writes with the claim (decision 056): what a replay in
 * another engine reads until the execution's own first save replaces it.
 */
function claimRecord(
  accepted: Accepted,
  reactor: AnyReactorDefinition,
  status: ClaimStatus,
  now: number,
): ExecutionRecord {
  const { executionId: id, input, key, retryOf, tags } = accepted;
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: reactor.name,
    ...stampFields(reactor),
    status,
    input,
    steps: {},
    rollbackFailures: [],
    ...(key === undefined ? {} : { idempotencyKey: key }),
    ...(retryOf === undefined ? {} : { retryOf }),
    ...(tags === undefined ? {} : { tags }),
    createdAt: now,
    updatedAt: now,
  };
}

/** The result of a run whose first record is over the store's size limit: refused before its key was claimed (nothing persisted). */
function unstorable(reactor: AnyReactorDefinition, executionId: string, error: RecordTooLargeError): RunResult {
  return {
    status: 'failed',
    executionId,
    reactor: reactor.name,
    error,
    failedStep: undefined,
    validationErrors: [],
    trace: [],
    steps: {},
    rollbackFailures: [],
    replay: false,
  };
}
