/**
 * A fan-out element whose step lost step-level contention in a worker parks instead of failing
 * (issue #6 R-8, decision 038): its body never started, so nothing is compensated; its record is
 * `parked` with what it waits for, its next job is registered on the key's wait list (the release
 * wakes it) with the park fallback as a timer, and it stays unsettled in the ledger, so the map is
 * not collected meanwhile. Contention attempts are counted on the element's record apart from
 * failure retries; at `contentionCap` the step fails with its `ContentionError` (see
 * `step-runner.ts`), which fails the element like any other failure.
 *
 * @module
 */
import { ContentionError, RateLimitedError, type PrimitiveName } from '../../../errors.js';
import { upcomingJob } from '../../execution/next-job.js';
import { backgroundOf, cleared } from '../../model/background.js';
import type { JobDelivery } from '../../../ports/queue.js';
import type { ElementLink } from '../../../ports/store.js';
import type { RunState } from '../../run/run-state.js';
import type { After, BackgroundDeps } from '../deps.js';
import { refused } from '../park.js';

/**
 * Parks the element of `state` on the key its step lost (`contention`, a `ContentionError` or a
 * `RateLimitedError`). Emits `map.element_parked` on the element's trace; the park itself
 * (`run.parked`, checkpoint, delayed job, wait-list registration) is the execution's park.
 */
export async function parkElement(
  deps: BackgroundDeps,
  state: RunState,
  link: ElementLink,
  contention: Error,
): Promise<After> {
  const background = cleared(backgroundOf(state), 'retryAt');
  state.setBackground(background);
  const { primitive, key } = contendedKey(contention);
  // The job id and attempt `refused` is about to use (it counts and enqueues in the same way).
  const { jobId } = upcomingJob(state);
  state.emit({
    type: 'map.element_parked',
    step: link.step,
    index: link.index,
    primitive,
    key,
    attempt: background.contention + 1,
    jobId,
  });
  return refused(deps, state, contention);
}

/**
 * Called when a job of an element runs its body: a parked element's waiting state is cleared
 * (`run.woken` when a release promoted its job before the fallback was due).
 */
export function resumeParkedElement(state: RunState, delivery: JobDelivery): void {
  const waiting = state.background?.waitingFor;
  if (!waiting || !state.background) return;
  if (waiting.jobId === delivery.jobId && waiting.dueAt !== undefined && state.clock.now() < waiting.dueAt - 5) {
    state.emit({
      type: 'run.woken',
      primitive: waiting.primitive,
      key: waiting.key,
      jobId: delivery.jobId,
      ...(waiting.step === undefined ? {} : { step: waiting.step }),
    });
  }
  state.setBackground(cleared(state.background, 'waitingFor'));
}

/** The primitive and key a refusal names. */
function contendedKey(error: Error): { readonly primitive: PrimitiveName; readonly key: string } {
  if (error instanceof RateLimitedError) return { primitive: 'rate_limit', key: error.details.key };
  if (error instanceof ContentionError) return { primitive: error.details.primitive, key: error.details.key };
  return { primitive: 'lock', key: '' };
}
