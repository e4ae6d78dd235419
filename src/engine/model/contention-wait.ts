/**
 * Waiting on a busy key in a worker (docs/decisions/068, 097): the contention wait an execution
 * is in (since when, and until when its declaration's `contentionTimeout` lets it wait), who it
 * waits behind, and the error it fails with when the time bound passes. A parked execution's
 * fallback job that finds the same holder parks again without an admission (spending one
 * contention attempt, as any refusal); the functions here say who holds, and whether that is
 * still the holder the park recorded.
 *
 * @module
 */
import { computeKey } from '../../coordination/scope.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import { ContentionError, RateLimitedError, ReactorError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { BackgroundState, ContentionWait, WaitHolder } from '../../ports/store.js';

type Contended = ContentionWait['primitive'];

/** The primitive, key and step a contention refusal names; undefined for any other error. */
export function contendedKey(
  error: Error,
): { readonly primitive: Contended; readonly key: string; readonly step: string | undefined } | undefined {
  if (error instanceof RateLimitedError)
    return { primitive: 'rate_limit', key: error.details.key, step: error.details.step };
  if (error instanceof ContentionError)
    return { primitive: error.details.primitive, key: error.details.key, step: error.details.step };
  return undefined;
}

/**
 * The `contentionTimeout` (ms) the declaration of `primitive` among `specs` sets, if any. With
 * several of that primitive (several semaphores or rate limits), `on` picks the one whose key,
 * computed from `on.args`, is the contended key.
 */
export function declaredTimeout(
  specs: readonly CoordinationSpec[] | undefined,
  primitive: Contended,
  on?: { readonly key: string; readonly args: unknown; readonly reactor: string; readonly step: string | undefined },
): number | undefined {
  const candidates = specs?.filter((s) => s.kind === primitive) ?? [];
  const spec =
    candidates.length > 1 && on !== undefined
      ? (candidates.find((s) => keyOf(s, on) === on.key) ?? candidates[0])
      : candidates[0];
  return spec !== undefined && 'contentionTimeoutMs' in spec ? spec.contentionTimeoutMs : undefined;
}

function keyOf(
  spec: CoordinationSpec,
  on: { readonly args: unknown; readonly reactor: string; readonly step: string | undefined },
): string | undefined {
  try {
    return computeKey(spec, on.args, on);
  } catch {
    return undefined;
  }
}

/** The wait `background` is in on `key`, when the job running continues it (it is the job the wait's last park enqueued). */
export function continuedWait(
  background: BackgroundState | undefined,
  primitive: Contended,
  key: string,
  step: string | undefined,
): ContentionWait | undefined {
  const prior = background?.contended;
  if (prior === undefined || prior.job !== background!.jobs) return undefined;
  return prior.primitive === primitive && prior.key === key && prior.step === step ? prior : undefined;
}

/**
 * Records on `run` the wait for `key` it is about to park in: the one it continues, or a new one
 * from now. `declaredMs` (the declaration's `contentionTimeout`) sets the wait's time bound,
 * counted from its start; without it a continued wait keeps the bound it had.
 */
export function noteWait(
  run: {
    readonly background: BackgroundState | undefined;
    setBackground(background: BackgroundState): void;
    readonly clock: Clock;
  },
  primitive: Contended,
  key: string,
  step: string | undefined,
  declaredMs: number | undefined,
): ContentionWait {
  const background = run.background ?? { jobs: 1, contention: 0 };
  const prior = continuedWait(background, primitive, key, step);
  const since = prior?.since ?? run.clock.now();
  const timeoutAt = declaredMs === undefined ? prior?.timeoutAt : since + declaredMs;
  const wait: ContentionWait = {
    primitive,
    key,
    ...(step === undefined ? {} : { step }),
    since,
    ...(timeoutAt === undefined ? {} : { timeoutAt }),
    job: background.jobs,
  };
  run.setBackground({ ...background, contended: wait });
  return wait;
}

/** True once the wait has lasted its declaration's `contentionTimeout`. */
export function timedOut(wait: ContentionWait | undefined, now: number): boolean {
  return wait?.timeoutAt !== undefined && now >= wait.timeoutAt;
}

/** A park's fallback delay, shortened so the job runs when the wait's time bound passes. */
export function boundedDelay(delayMs: number, wait: ContentionWait | undefined, now: number): number {
  return wait?.timeoutAt === undefined ? delayMs : Math.max(1, Math.min(delayMs, wait.timeoutAt - now));
}

/** The error of a wait whose `contentionTimeout` passed: names the key, the time waited and the bound. */
export function timeoutError(refusal: Error, wait: ContentionWait, now: number): ContentionError {
  const details = refusal instanceof ReactorError ? refusal.details : {};
  const by =
    typeof details.holder === 'string'
      ? details.holder
      : wait.primitive === 'rate_limit'
        ? `its window (${String(details.limit)} per ${String(details.periodMs)} ms)`
        : 'another execution';
  const bound = (wait.timeoutAt ?? now) - wait.since;
  return new ContentionError({
    reactor: typeof details.reactor === 'string' ? details.reactor : '',
    step: wait.step,
    primitive: wait.primitive,
    key: wait.key,
    waitedMs: Math.max(0, now - wait.since),
    holder: `${by}; contentionTimeout ${bound} ms passed`,
  });
}

/**
 * The error of work refused once more after it spent `spent` contention attempts, the engine's
 * `contentionCap` (docs/decisions/097): names the key, the holder the refusal named, and the cap.
 */
export function capError(refusal: Error, spent: number, cap: number): ContentionError {
  const details = refusal instanceof ReactorError ? refusal.details : {};
  const contended = contendedKey(refusal);
  const by = typeof details.holder === 'string' ? `${details.holder}; ` : '';
  return new ContentionError({
    reactor: typeof details.reactor === 'string' ? details.reactor : '',
    step: contended?.step,
    primitive: contended?.primitive ?? 'lock',
    key: contended?.key ?? '',
    waitedMs: typeof details.waitedMs === 'number' ? details.waitedMs : 0,
    holder: `${by}still busy after ${spent} contention attempts (cap ${cap})`,
  });
}

/**
 * Who holds `key` now, as a park records it: a lock's owner and fencing token, the owners of a
 * full semaphore's slots. Undefined when the key is free (or a slot is), and for the primitives
 * that have no holder to wait behind (rate limits, ordered locks).
 */
export async function holderOf(
  coordinator: Coordinator,
  primitive: Contended,
  key: string,
): Promise<WaitHolder | undefined> {
  if (primitive === 'lock') {
    const state = await coordinator.lockState(key);
    return state === undefined ? undefined : { owners: [state.holder.owner], token: state.token };
  }
  if (primitive !== 'semaphore') return undefined;
  const state = await coordinator.semaphoreState(key);
  if (state.limit <= 0 || state.holders.length < state.limit) return undefined;
  return { owners: state.holders.map((h) => h.holder.owner).sort() };
}

/** True when `now` is the holder `parked` recorded: same owners, same fencing token. */
export function sameHolder(parked: WaitHolder, now: WaitHolder | undefined): boolean {
  if (now === undefined || now.token !== parked.token || now.owners.length !== parked.owners.length) return false;
  return parked.owners.every((owner, i) => owner === now.owners[i]);
}

/**
 * Renews, without taking anything, the reactor-level locks, semaphore slots and ordered turn an
 * execution keeps across a step's park (`parkedHolds`), as the re-adoption at its next admission
 * would. False when one of them is gone (that admission then competes again).
 */
export async function renewKeptHolds(
  coordinator: Coordinator,
  specs: readonly CoordinationSpec[],
  input: unknown,
  reactor: string,
  background: BackgroundState,
): Promise<boolean> {
  const owner = background.parkedHolds?.owner;
  if (owner === undefined) return true;
  try {
    for (const spec of specs) {
      if (
        spec.kind === 'lock' &&
        !(await coordinator.lockExtend(computeKey(spec, input, { reactor, step: undefined }), owner, spec.ttlMs))
      )
        return false;
      if (
        spec.kind === 'semaphore' &&
        !(await coordinator.semaphoreExtend(computeKey(spec, input, { reactor, step: undefined }), owner, spec.ttlMs))
      )
        return false;
      if (
        spec.kind === 'ordered_lock' &&
        background.ordered !== undefined &&
        !(await coordinator.orderedHeartbeat(background.ordered))
      )
        return false;
    }
    return true;
  } catch {
    return false;
  }
}
