/**
 * Ending a paused execution as failed (a timeout, or the last invalid payload): the completed
 * work is rebuilt from the record and undone newest first, then the run ends `failed`.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import type { CoordinationDeps } from '../execute.js';
import { finish } from '../execute.js';
import { replayInit, type NewState } from '../new-state.js';
import type { ExecutionRecord } from '../../../ports/store.js';
import type { RunResult } from '../../model/results.js';
import type { EventDraft } from '../../run/run-state.js';
import { runFrame, undoAll } from '../../graph/scheduler.js';

/** What failing a paused run needs. */
export interface FailDeps {
  readonly newState: NewState;
  readonly coordination: Pick<CoordinationDeps, 'coordinator'>;
}

/**
 * Rolls a paused execution back and ends it failed at `step` with `error`; `events` are emitted
 * first (why it fails). Call it holding the execution's liveness lock.
 */
export async function failPaused(
  deps: FailDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  failure: { readonly step: string; readonly error: Error; readonly events: readonly EventDraft[] },
): Promise<RunResult> {
  const state = deps.newState(replayInit(reactor, record));
  for (const event of failure.events) state.emit(event);
  const replay = await runFrame(state, {
    def: reactor,
    input: state.input,
    prefix: '',
    signal: new AbortController().signal,
  });
  state.emit({ type: 'run.rolling_back', step: failure.step });
  await state.checkpoint('rolling_back');
  if (replay.status === 'completed') await undoAll(replay.completed, state);
  const ordered = record.background?.ordered;
  const spec = reactor.coordination.find((c) => c.kind === 'ordered_lock');
  if (ordered && deps.coordination.coordinator) {
    // A paused run kept its ordered position (its holds were released as `yielded`): it ends failed now.
    await deps.coordination.coordinator
      .orderedComplete({ ...ordered, failed: true, strict: spec?.kind === 'ordered_lock' && spec.strict })
      .catch(() => undefined);
  }
  state.setStep(failure.step, {
    status: 'failed',
    attempts: 1,
    error: { name: failure.error.name, message: failure.error.message },
  });
  return finish(state, { status: 'failed', step: failure.step, error: failure.error, validation: [] });
}
