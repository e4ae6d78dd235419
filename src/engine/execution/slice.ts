/**
 * One slice of an execution's lifecycle, written once: admit the reactor-level declarations,
 * run the graph, release the holds, settle the outcome (finished, or suspended). The drivers
 * supply what differs — the inline driver (`inlineDriver` in `execute.ts`: `engine.run`, an
 * inline resume), the worker driver (`jobs/advance.ts`: a worker's job) — through a {@link SliceDriver}
 * (docs/decisions/111).
 *
 * @module
 */
import type { Admission } from '../../coordination/admit.js';
import type { WorkOutcome } from '../../coordination/holds.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { Frame, GraphOutcome } from '../graph/frame.js';
import { runFrame } from '../graph/scheduler.js';
import { onSuspension, type SuspensionHandlers } from '../model/suspension.js';
import type { RunState } from '../run/run-state.js';

/** A terminal outcome: a graph's that did not suspend, or an admission's halt. */
export type FinalOutcome =
  | Exclude<GraphOutcome, { status: 'yielded' }>
  | { readonly status: 'halted'; readonly step: undefined; readonly reason: string; readonly data: unknown };

/** What one driver of a slice supplies; `R` is what the slice returns (a result inline, work left for later in a worker). */
export interface SliceDriver<R> {
  /** Takes the reactor-level declarations (called only when the reactor has some). */
  readonly admit: (specs: readonly CoordinationSpec[]) => Promise<Admission>;
  /** The admission was refused: fail, park, or hand the slice elsewhere. */
  readonly refused: (error: Error) => Promise<R>;
  /** After the admission (`admitted`: declarations were taken), before the first checkpoint of the slice. */
  readonly admitted?: (admitted: boolean) => void;
  /** Just before the slice's first `running` checkpoint (its durable-mode start marks). */
  readonly starting?: () => void;
  /** The root frame the graph runs as. */
  readonly frame: Frame;
  /** How the holds are released for this outcome (default: as the outcome's status, `failed` when the graph threw before one). */
  readonly releaseAs?: (outcome: GraphOutcome | undefined) => WorkOutcome;
  /** After the release, before the outcome settles: may throw to settle nothing (a stopped worker job). */
  readonly released?: () => void;
  /** The handler of each kind of suspension (`step`: the step the graph suspended at). */
  readonly suspended: (step: string) => SuspensionHandlers<Promise<R>>;
  /** A finished outcome (or a halting admission): its terminal record. */
  readonly finished: (outcome: FinalOutcome) => Promise<R>;
}

/** Admit → run the graph → release → settle, for one slice of `state`'s execution. */
export async function runSlice<R>(state: RunState, reactor: AnyReactorDefinition, driver: SliceDriver<R>): Promise<R> {
  let holds;
  if (reactor.coordination.length > 0) {
    const admission = await driver.admit(reactor.coordination);
    if (admission.kind === 'refused') return driver.refused(admission.error);
    if (admission.kind === 'halt')
      return driver.finished({ status: 'halted', step: undefined, reason: admission.reason, data: admission.data });
    holds = admission.holds;
  }
  driver.admitted?.(holds !== undefined);
  let outcome: GraphOutcome | undefined;
  try {
    driver.starting?.();
    await state.progress('running');
    outcome = await runFrame(state, driver.frame);
  } catch (error) {
    outcome = { status: 'failed', step: undefined, error: error as Error, validation: [] };
  } finally {
    await holds
      ?.release(driver.releaseAs ? driver.releaseAs(outcome) : (outcome?.status ?? 'failed'))
      .catch((error: unknown) =>
        state.logger.warn({ err: error }, 'releasing coordination failed; holds expire by TTL'),
      );
  }
  driver.released?.();
  if (outcome.status === 'yielded') return onSuspension(outcome.suspension, driver.suspended(outcome.step));
  return driver.finished(outcome);
}
