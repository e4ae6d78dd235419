/**
 * Schedule events are observed through `schedules.subscribe` and a runtime middleware's
 * `onScheduleEvent` (`RuntimeMiddleware`), typed: `schedule.failed` narrows to its tick and error.
 * They are not engine events: `onEvent` takes a `ReactorEvent`, which has no `schedule.*` member.
 */
import { describe, expectTypeOf, test } from 'vitest';
import {
  createEmbeddedEngine,
  type ErrorJSON,
  type ReactorEvent,
  type RuntimeMiddleware,
  type ScheduleEvent,
} from '../../src/index.js';
import { createRedisRuntime } from '../../src/bullmq.js';
import { defineWorker } from '../../src/bullmq.js';

describe('schedule events', () => {
  test('an inline middleware with onScheduleEvent is accepted by the runtimes and typed', () => {
    const observer: RuntimeMiddleware = {
      onEvent: (event) => void expectTypeOf(event).toEqualTypeOf<ReactorEvent>(),
      onScheduleEvent: (event) => {
        expectTypeOf(event).toEqualTypeOf<ScheduleEvent>();
        if (event.type === 'schedule.failed') {
          expectTypeOf(event.error).toEqualTypeOf<ErrorJSON>();
          expectTypeOf(event.tickAt).toEqualTypeOf<number>();
        }
      },
    };
    void createEmbeddedEngine({
      middleware: [observer, { onScheduleEvent: (e) => void expectTypeOf(e.scheduleId).toEqualTypeOf<string>() }],
    });
    void createRedisRuntime({ url: 'redis://127.0.0.1:1', middleware: [{ onScheduleEvent: (e) => void e.type }] });
    void defineWorker({ middleware: [{ onScheduleEvent: (e) => void e.type }] });
  });

  test('engine events have no schedule member', () => {
    expectTypeOf<Extract<ReactorEvent, { type: 'schedule.failed' }>>().toEqualTypeOf<never>();
    expectTypeOf<Extract<ScheduleEvent, { type: 'schedule.failed' }>['type']>().toEqualTypeOf<'schedule.failed'>();
  });
});
