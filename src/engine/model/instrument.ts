/**
 * Work scopes: the engine brackets each unit of work (a job run of an execution, a step, a
 * compensate or undo, an enqueue) so a middleware can open a span around it, make it the active
 * context of the code inside, and close it exactly once — whatever happens inside. This is the
 * hook `ts-reactor/otel` is built on; it knows nothing of OpenTelemetry.
 *
 * With no middleware implementing {@link Middleware.enter}, a scope costs one call.
 *
 * @module
 */
import type { ErrorJSON } from '../../errors.js';
import type { Logger } from '../../dsl/context.js';
import type { Middleware } from './events.js';
import type { NodeOutcome } from './outcome.js';
import { onSuspension, type SuspensionHandlers } from './suspension.js';
import type { TraceContext } from '../../ports/store.js';
import type { WorkEnd, WorkScope } from './work-scope.js';

export type { WorkEnd, WorkHandle, WorkScope } from './work-scope.js';

/** Brackets work in scopes (built by the engine from its middleware). */
export interface Instrument {
  /**
   * Runs `work` inside `scope`. `work` receives the trace context a middleware started for a
   * new execution (to persist). `describe` turns the value into the scope's end; a throw ends
   * it `failed` and is rethrown.
   */
  traced<T>(
    scope: WorkScope,
    work: (traceContext: TraceContext | undefined) => Promise<T>,
    describe?: (value: T) => WorkEnd,
  ): Promise<T>;
}

/** The instrument of an engine without scope-aware middleware: runs the work, nothing else. */
export const noInstrument: Instrument = Object.freeze({
  traced: <T>(_scope: WorkScope, work: (tc: TraceContext | undefined) => Promise<T>) => work(undefined),
});

const ok = (): WorkEnd => ({ outcome: 'ok' });

/** Builds the instrument of an engine: every middleware with `enter` takes part; a middleware that throws is logged and skipped. */
export function createInstrument(middleware: readonly Middleware[], logger: Logger): Instrument {
  const scoped = middleware.filter((m) => typeof m.enter === 'function');
  if (scoped.length === 0) return noInstrument;
  const guard = <T>(m: Middleware, scope: WorkScope, what: 'enter' | 'end', fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (error) {
      const at = {
        executionId: scope.executionId,
        reactor: scope.reactor,
        ...('step' in scope ? { step: scope.step } : {}),
        scope: scope.kind,
      };
      logger.error(
        { hook: m.name ?? 'middleware', ...at, err: error },
        `middleware "${m.name ?? 'middleware'}" failed in ${what}(${scope.kind}); the run goes on`,
      );
      return undefined;
    }
  };
  return {
    async traced<T>(
      scope: WorkScope,
      work: (tc: TraceContext | undefined) => Promise<T>,
      describe: (value: T) => WorkEnd = ok,
    ): Promise<T> {
      const open = scoped.flatMap((m) => {
        const handle = guard(m, scope, 'enter', () => m.enter!(scope));
        return handle ? [{ m, handle }] : [];
      });
      const traceContext = open.find((o) => o.handle.traceContext !== undefined)?.handle.traceContext;
      const close = (end: WorkEnd): void => {
        for (let i = open.length - 1; i >= 0; i--) guard(open[i]!.m, scope, 'end', () => open[i]!.handle.end(end));
      };
      // The first middleware's scope is the outermost; it ends last.
      const inner = open.reduceRight<() => Promise<T>>(
        (next, { handle }) =>
          () =>
            handle.run(next),
        () => work(traceContext),
      );
      let value: T;
      try {
        value = await inner();
      } catch (error) {
        close({ outcome: 'failed', error: summary(error) });
        throw error;
      }
      close(describe(value));
      return value;
    },
  };
}

/** A suspended step scope's end: paused, parked (on a busy key, an async unit, a fan-out map's elements), or retrying (a retry or a sleep re-enqueued). */
const SUSPENDED_END: SuspensionHandlers<WorkEnd> = {
  pause: () => ({ outcome: 'paused' }),
  failurePause: () => ({ outcome: 'paused' }),
  contention: () => ({ outcome: 'parked' }),
  awaitUnit: () => ({ outcome: 'parked' }),
  fanOut: () => ({ outcome: 'parked' }),
  retry: () => ({ outcome: 'retrying' }),
  sleep: () => ({ outcome: 'retrying' }),
};

/** The end of a step scope, from how the step (or compose, or map) ended. */
export function stepEnd(outcome: NodeOutcome): WorkEnd {
  switch (outcome.kind) {
    case 'success':
      return { outcome: 'succeeded' };
    case 'skipped':
      return { outcome: 'skipped' };
    case 'halt':
      return { outcome: 'halted' };
    case 'yield':
      return onSuspension<WorkEnd>(outcome.suspension, SUSPENDED_END);
    case 'failure':
      return { outcome: 'failed', error: summary(outcome.error) };
  }
}

/**
 * Runs a compose or map node in a `step` scope (a step's own scope is opened by the step
 * runner, around its attempts). A replay (undo, cancel) runs no node: it opens none.
 */
export function tracedNode(
  run: { readonly instrument: Instrument; readonly executionId: string; readonly replayOnly: boolean },
  place: { readonly path: string; readonly reactor: string },
  work: () => Promise<NodeOutcome>,
): Promise<NodeOutcome> {
  if (run.replayOnly) return work();
  return run.instrument.traced(
    { kind: 'step', executionId: run.executionId, reactor: place.reactor, step: place.path, attempt: 1 },
    work,
    stepEnd,
  );
}

function summary(error: unknown): ErrorJSON {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return { name: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { name: 'Error', message: String(error) };
}
