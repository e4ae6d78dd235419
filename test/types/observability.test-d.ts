import { describe, expectTypeOf, test } from 'vitest';
import type { Tracer } from '@opentelemetry/api';
import type {
  EngineOptions,
  ExecutionRecord,
  Logger,
  Middleware,
  TraceContext,
  WorkEnd,
  WorkHandle,
  WorkScope,
} from '../../src/index.js';
import { eventLogger, EVENT_LOG_LEVELS } from '../../src/index.js';
import { otel, type OtelOptions } from '../../src/otel/index.js';

describe('observability types', () => {
  test('otel() is a middleware an engine takes; its options are typed', () => {
    expectTypeOf(otel()).toExtend<Middleware>();
    expectTypeOf(otel()).toExtend<NonNullable<EngineOptions['middleware']>[number]>();
    expectTypeOf(otel().openSpans).toEqualTypeOf<number>();
    expectTypeOf<OtelOptions['tracer']>().toEqualTypeOf<Tracer | undefined>();
    // @ts-expect-error recordInput is a boolean
    otel({ recordInput: 'yes' });
  });

  test('work scopes narrow on kind; a handle ends with a WorkEnd', () => {
    const enter = (scope: WorkScope): WorkHandle | undefined => {
      if (scope.kind === 'step') expectTypeOf(scope.step).toEqualTypeOf<string>();
      if (scope.kind === 'run') expectTypeOf(scope.mode).toEqualTypeOf<'inline' | 'worker' | 'operation'>();
      if (scope.kind === 'enqueue') expectTypeOf(scope.reason).toEqualTypeOf<'start' | 'retry' | 'park'>();
      // @ts-expect-error a run scope has no step
      if (scope.kind === 'run') void scope.step;
      return undefined;
    };
    expectTypeOf(enter).toExtend<NonNullable<Middleware['enter']>>();
    expectTypeOf<WorkHandle['end']>().parameter(0).toEqualTypeOf<WorkEnd>();
    expectTypeOf<ExecutionRecord['traceContext']>().toEqualTypeOf<TraceContext | undefined>();
  });

  test('event logger levels are keyed by event type', () => {
    expectTypeOf(EVENT_LOG_LEVELS['run.failed']).toEqualTypeOf<keyof Logger>();
    eventLogger({} as Logger, { levels: { 'step.started': false, 'run.completed': 'warn' } });
    // @ts-expect-error unknown event type
    eventLogger({} as Logger, { levels: { 'step.exploded': 'warn' } });
    // @ts-expect-error unknown level
    eventLogger({} as Logger, { levels: { 'step.started': 'loud' } });
    expectTypeOf<EngineOptions['logEvents']>().toEqualTypeOf<boolean | undefined>();
  });
});
