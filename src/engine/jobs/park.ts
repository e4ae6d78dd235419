/**
 * Parking an execution (or an element, or a unit) on a busy key in a worker, and waking it:
 * persist `parked` with what it waits for, enqueue its fallback job, register that job on the
 * key's wait list; the key's release promotes the job (docs/decisions/007, 068, 097).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import { ContentionError, RateLimitedError, type PrimitiveName } from '../../errors.js';
import { fastPathsOf } from '../../coordination/fast-paths.js';
import { finish } from '../execution/execute.js';
import { nextJob } from '../execution/next-job.js';
import { backgroundOf, cleared } from '../model/background.js';
import { waitListKey } from '../model/keys.js';
import {
  boundedDelay,
  contendedKey,
  continuedWait,
  declaredTimeout,
  holderOf,
  noteWait,
  renewKeptHolds,
  sameHolder,
  timedOut,
  timeoutError,
} from '../model/contention-wait.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { JobDelivery } from '../../ports/queue.js';
import type { WaitingFor } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';
import type { After, BackgroundDeps } from './deps.js';

/**
 * Contention in a worker parks the execution; anything else refused fails it (nothing ran, nothing
 * to roll back). Each park spends a contention attempt: it follows a refused admission — the
 * first, one woken by a release, or a fallback job's that found the holder changed; a fallback
 * job that finds the same holder spends one in {@link reparkBehindSameHolder} (decision 097).
 * Over `contentionCap` the execution fails with a `ContentionError`.
 * `declared`: the reactor-level declarations (their `contentionTimeout`); a step's wait was noted,
 * with its bound, by the step runner, which also fails the step when that bound has passed.
 * `woken`: the park this job ran from (default: the one on the record); a semaphore's wake that
 * this execution could not use is passed on to that key's next waiter. `yieldedAt`: the step
 * whose work yielded (a step, or a compose step whose child's declarations were refused), the
 * park's `step` when the refusal names none.
 */
export async function refused(
  deps: BackgroundDeps,
  state: RunState,
  error: Error,
  declared?: readonly CoordinationSpec[],
  woken: WaitingFor | undefined = state.background?.waitingFor,
  yieldedAt?: string,
): Promise<After> {
  const passOn = wakeToPassOn(woken, error, state.clock.now());
  const after = await park(deps, state, error, declared, yieldedAt);
  if (passOn === undefined) return after;
  return async () => {
    await after?.();
    await wake(deps, passOn.primitive, passOn.key);
  };
}

/**
 * The semaphore whose release woke this execution, when the execution now parks on another key:
 * it took no slot of it (several semaphores, docs/decisions/085), so the wake goes on to the next
 * waiter of that key instead of being lost until a fallback poll.
 */
function wakeToPassOn(
  woken: WaitingFor | undefined,
  error: Error,
  now: number,
): { readonly primitive: PrimitiveName; readonly key: string } | undefined {
  const contended = contendedKey(error);
  if (woken?.primitive !== 'semaphore' || woken.dueAt === undefined || contended === undefined) return undefined;
  if (now >= woken.dueAt - 5) return undefined; // its fallback job, not a release, ran it
  if (contended.primitive === woken.primitive && contended.key === woken.key) return undefined;
  return { primitive: woken.primitive, key: woken.key };
}

/** A park's fallback delay while the coordinator's release notifications are degraded (docs/decisions/112). */
export const DEGRADED_PARK_FALLBACK_MS = 1_000;

/**
 * The delay of a park's fallback job: `parkFallbackMs`, or at most
 * {@link DEGRADED_PARK_FALLBACK_MS} while the coordinator says its wake-ups are degraded (a
 * release may not reach this process, so its parked executions poll sooner).
 */
export function parkFallback(deps: BackgroundDeps): number {
  const degraded = fastPathsOf(deps.coordination.coordinator).wakeUpsDegraded();
  return degraded ? Math.min(deps.options.parkFallbackMs, DEGRADED_PARK_FALLBACK_MS) : deps.options.parkFallbackMs;
}

async function park(
  deps: BackgroundDeps,
  state: RunState,
  error: Error,
  declared: readonly CoordinationSpec[] | undefined,
  yieldedAt: string | undefined,
): Promise<After> {
  const contended = contendedKey(error);
  if (!contended) return void (await finish(state, { status: 'failed', step: undefined, error, validation: [] }));
  const { primitive, key, step } = contended;
  const rate = error instanceof RateLimitedError ? error.details : undefined;
  const wait = noteWait(
    state,
    primitive,
    key,
    step,
    declaredTimeout(declared, primitive, { key, args: state.input, reactor: state.reactor, step: undefined }),
  );
  const attempt = backgroundOf(state).contention + 1;
  const now = state.clock.now();
  const overCap = primitive !== 'ordered_lock' && attempt > deps.options.contentionCap;
  // The work that parks from a graph (a step, a composed child) checked the cap and its time bound before it yielded.
  if (overCap || (declared !== undefined && timedOut(wait, now))) {
    const failure = overCap
      ? new ContentionError({
          reactor: state.reactor,
          primitive,
          key,
          waitedMs: 0,
          holder: `still busy after ${attempt - 1} contention attempts (cap ${deps.options.contentionCap})`,
        })
      : timeoutError(error, wait, now);
    const parked = backgroundOf(state).waitingFor;
    state.setBackground(cleared(backgroundOf(state), 'waitingFor'));
    await finish(state, { status: 'failed', step: undefined, error: failure, validation: [] });
    // The registration of the park this job ran from goes too: no release is to wake it any more.
    const list = parked?.primitive === 'lock' || parked?.primitive === 'semaphore' ? parked : undefined;
    if (list !== undefined)
      await deps.waitList?.remove(waitListKey(list.primitive, list.key), list.jobId).catch(() => undefined);
    return undefined;
  }
  const delayMs = boundedDelay(rate ? rate.retryAfterMs : parkFallback(deps), wait, now);
  // Who it parks behind: its fallback job parks again without an admission (one attempt each) while that holder holds.
  const holder = rate
    ? undefined
    : await holderOf(deps.coordination.coordinator!, primitive, key).catch(() => undefined);
  // Where it waits: the contended step; for a composed child's own declarations (they name no step), the compose step that yielded.
  const place = step ?? yieldedAt;
  const at = place === undefined ? {} : { step: place };
  // Enqueue first, then register: a wake that finds the waiter always finds its delayed job.
  const { jobId } = await nextJob(deps, state, {
    status: 'parked',
    reason: 'park',
    delayMs,
    update: (background, { jobs, jobId }) => {
      const waitingFor: WaitingFor = {
        primitive,
        key,
        attempt,
        jobId,
        dueAt: now + delayMs,
        ...at,
        ...(holder === undefined ? {} : { holder }),
      };
      return { ...background, contention: attempt, waitingFor, contended: { ...wait, job: jobs } };
    },
    announce: ({ jobId }) => state.emit({ type: 'run.parked', primitive, key, attempt, jobId, ...at }),
  });
  if (rate) return undefined;
  await deps.waitList?.add(waitListKey(primitive, key), jobId);
  return wakeIfFree(deps, primitive, key);
}

/**
 * The park's fallback job (not woken by a release) of an execution parked on a lock or a
 * semaphore: when the key is held by the holder it parked behind, the execution parks again at
 * once — no admission and no new trace entry (the park's entry counts the repeats), but one
 * contention attempt, as the refusal it stands for would spend; reactor-level holds it keeps
 * across a step's park are renewed (decisions 068, 097). Undefined when it must contend instead:
 * woken, the holder changed or left, the wait's `contentionTimeout` has passed, this attempt
 * would be over `contentionCap` (the admission then fails it, at the reactor or at the step), a
 * kept hold is gone, or the park recorded no holder. `reactor`: the execution's definition (its
 * kept holds); `wanted`: a last check that the execution still waits (an async unit's dispatcher
 * has not rolled back).
 */
export async function reparkBehindSameHolder(
  deps: BackgroundDeps,
  state: RunState,
  delivery: JobDelivery,
  reactor?: AnyReactorDefinition,
  wanted?: () => Promise<boolean>,
): Promise<After> {
  const background = state.background;
  const waiting = background?.waitingFor;
  const coordinator = deps.coordination.coordinator;
  if (
    !background ||
    !waiting?.holder ||
    !coordinator ||
    waiting.jobId !== delivery.jobId ||
    waiting.dueAt === undefined
  )
    return undefined;
  const primitive = waiting.primitive;
  if (primitive !== 'lock' && primitive !== 'semaphore') return undefined;
  const now = state.clock.now();
  if (now < waiting.dueAt - 5) return undefined; // woken by a release: it contends
  // The wait as it was noted (a composed child's names no step, though its park shows the compose step).
  const wait = continuedWait(background, primitive, waiting.key, background.contended?.step);
  if (timedOut(wait, now)) return undefined; // the admission reports the time bound
  const attempt = background.contention + 1;
  if (attempt > deps.options.contentionCap) return undefined; // the admission is refused once more and reports the cap
  const holder = await holderOf(coordinator, primitive, waiting.key).catch(() => undefined);
  if (!sameHolder(waiting.holder, holder)) return undefined;
  if (
    background.parkedHolds !== undefined &&
    (reactor === undefined ||
      !(await renewKeptHolds(coordinator, reactor.coordination, state.input, reactor.name, background)))
  )
    return undefined;
  if (wanted !== undefined && !(await wanted())) return undefined;
  const delayMs = boundedDelay(parkFallback(deps), wait, now);
  const { jobId } = await nextJob(deps, state, {
    status: 'parked',
    reason: 'park',
    delayMs,
    queued: false,
    update: (next, { jobs, jobId }) => ({
      ...next,
      contention: attempt,
      waitingFor: { ...waiting, attempt, jobId, dueAt: now + delayMs },
      ...(wait === undefined ? {} : { contended: { ...wait, job: jobs } }),
    }),
    announce: ({ jobId }) => announceRepark(state, { ...waiting, primitive }, attempt, jobId),
  });
  const list = waitListKey(primitive, waiting.key);
  await deps.waitList?.add(list, jobId);
  await deps.waitList?.remove(list, waiting.jobId); // this job's own registration: a release that shifts it wakes nobody
  return wakeIfFree(deps, primitive, waiting.key);
}

/**
 * The id of the job that comes back for `delivery` when it found the execution's lease still held
 * by the job before it (a slow park checkpoint, say): `<executionId>:busy:<jobId>:<delivery>`.
 */
export function busyJobId(executionId: string, delivery: JobDelivery): string {
  return `${executionId}:busy:${delivery.jobId}:${delivery.delivery}`;
}

/**
 * The job a delivery stands for: a job enqueued again as a {@link busyJobId} (perhaps more than
 * once) is still that job — a park's job promoted by a release, or come due as its fallback — for
 * {@link reparkBehindSameHolder} and `run.woken`.
 */
export function requeuedJobOf(executionId: string, delivery: JobDelivery): JobDelivery {
  const busy = `${executionId}:busy:`;
  let jobId = delivery.jobId;
  while (jobId.startsWith(busy) && jobId.lastIndexOf(':') > busy.length)
    jobId = jobId.slice(busy.length, jobId.lastIndexOf(':'));
  return jobId === delivery.jobId ? delivery : { ...delivery, jobId };
}

/** A re-park's `run.parked`, folded into the park's trace entry: its `repeats` counts the re-parks. */
function announceRepark(
  state: RunState,
  waiting: WaitingFor & { readonly primitive: 'lock' | 'semaphore' },
  attempt: number,
  jobId: string,
): void {
  const { primitive, key, step } = waiting;
  const parkOfThisWait = (e: ReactorEvent): e is Extract<ReactorEvent, { type: 'run.parked' }> =>
    e.type === 'run.parked' && e.primitive === primitive && e.key === key && e.step === step;
  const entry = state.trace.findLast(parkOfThisWait);
  state.emitRepeat(
    {
      type: 'run.parked',
      primitive,
      key,
      attempt,
      jobId,
      ...(step === undefined ? {} : { step }),
      repeats: (entry?.repeats ?? 0) + 1,
    },
    parkOfThisWait,
  );
}

/** After a park: the key may have been released between the try and the registration; checked once off the execution. */
function wakeIfFree(deps: BackgroundDeps, primitive: PrimitiveName, key: string): () => Promise<void> {
  return async () => {
    if (await isFree(deps, primitive, key)) await wake(deps, primitive, key);
  };
}

async function isFree(deps: BackgroundDeps, primitive: PrimitiveName, key: string): Promise<boolean> {
  const c = deps.coordination.coordinator!;
  if (primitive === 'lock') return (await c.lockState(key)) === undefined;
  if (primitive === 'ordered_lock') return (await c.orderedState(key)).inFlight === undefined;
  return false; // a semaphore's free slots are not known here: the fallback job covers that race
}

/** Wakes the first execution parked on a key (every one, for an ordered lock: only the next in order can enter). */
export async function wake(
  deps: Pick<BackgroundDeps, 'waitList' | 'queue'>,
  primitive: PrimitiveName,
  key: string,
): Promise<void> {
  if (!deps.waitList) return;
  for (;;) {
    const jobId = await deps.waitList.shift(waitListKey(primitive, key));
    if (jobId === undefined) return;
    const promoted = await deps.queue.promote(jobId);
    if (promoted && primitive !== 'ordered_lock') return;
  }
}
