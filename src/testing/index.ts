/**
 * The test surface: run reactors on the embedded memory backend with a manual clock, mock
 * steps, read the event log. Tests never sleep.
 *
 * @module
 */
import type { AnyReactorDefinition, InputOf, OutputOf, StepsOf } from '../dsl/definition.js';
import type { AnyEventDeclaration, EventInput } from '../dsl/event.js';
import {
  createEngine,
  type Engine,
  type EngineOptions,
  type RunOptions,
  type SendOptions,
  type SendResult,
} from '../engine/engine.js';
import type { ReactorEvent } from '../engine/model/events.js';
import type { RunResult } from '../engine/model/results.js';
import { hasInterruptClaims } from '../ports/interrupt-claims.js';
import { MemoryCoordinator } from '../storage/memory/coordinator.js';
import { MemoryEventLog } from '../storage/memory/event-log.js';
import { MemoryEventWaits } from '../storage/memory/event-waits.js';
import { MemoryStore } from '../storage/memory/store.js';
import { MemoryExecutionStream } from '../storage/memory/execution-stream.js';
import { checkedRecordTtl, refuseTtlBesideStore } from '../storage/record-ttl.js';
import { ManualClock } from './clock.js';
import { mockSteps, type StepMocks } from './mocks.js';
import { createTestPool } from './pool.js';

export { ManualClock, type ManualClockOptions } from './clock.js';
export { mockSteps, type StepMock, type StepMocks } from './mocks.js';

/** Options of {@link createTestEngine}. */
export interface TestEngineOptions extends Partial<Omit<EngineOptions, 'clock'>> {
  /** Default: a {@link ManualClock} that advances virtual time on every sleep. */
  readonly clock?: ManualClock;
  /**
   * How long the memory store keeps a record after its last write, in ms (a positive integer, or
   * `Infinity`); default 24 h. Anything else, or a `recordTtlMs` beside a `store` of your own (set
   * it on that store), is a `RuntimeOptionError`.
   */
  readonly recordTtlMs?: number;
}

/** An engine on the memory backend with a manual clock and an event log. */
export interface TestEngine {
  readonly engine: Engine;
  readonly clock: ManualClock;
  readonly store: MemoryStore | EngineOptions['store'];
  /** The coordinator (a memory coordinator on the same manual clock unless given). */
  readonly coordinator: NonNullable<EngineOptions['coordinator']>;
  /** Every event of every run, in order. */
  readonly events: readonly ReactorEvent[];
  /**
   * Resolves once the in-process pool has no background job ready, delayed or running: async
   * units, child reactors and background runs have all gone as far as they can. With
   * `autoAdvance: false`, delayed jobs (retry backoffs, park fallbacks) wait for `clock.advance`.
   */
  drain(): Promise<void>;
  /** Stops the pool's worker (in-flight jobs finish). */
  close(): Promise<void>;
  run<R extends AnyReactorDefinition>(
    reactor: R,
    input: InputOf<R>,
    options?: RunOptions & { readonly mocks?: StepMocks<R> },
  ): Promise<RunResult<OutputOf<R>, StepsOf<R>>>;
  /**
   * Resumes a paused run (`engine.resume`). Give it the paused result itself to keep the
   * reactor's step types for the matchers.
   *
   * @example
   * ```ts
   * const paused = await t.run(approval, { orderId: 'o-1' });
   * expect(paused).toBePaused('approve');
   * expect(await t.resume(paused, { approved: true })).toHaveCompleted();
   * ```
   */
  resume<O, S>(
    target: RunResult<O, S> | string | { readonly correlationId: string },
    payload: unknown,
    options?: { readonly step?: string },
  ): Promise<RunResult<O, S>>;
  /**
   * Sends an event (`engine.send`), then drains the pool: the executions it started (reactors
   * declaring `.on` of it) and the runs it resumed (`.waitForEvent`) have gone as far as they can
   * on the manual clock. With `autoAdvance: false` it does not wait for delayed jobs (a wait's
   * timeout, a retry backoff): they stay for `clock.advance`. Resolves with the send's result and
   * `runs`, each started execution's result then, in the order of `started`.
   *
   * @example
   * ```ts
   * const t = createTestEngine({ reactors: [fulfil] });
   * const sent = await t.send(orderPaid, { orderId: 'o-1', amount: 42 }, { id: 'pay-1' });
   * expect(sent.runs[0]).toHaveCompleted();
   * expect(sent.runs[0]).toBeStartedByEvent({ name: 'order.paid', id: 'pay-1' });
   * ```
   */
  send<E extends AnyEventDeclaration>(event: E, payload: EventInput<E>, options?: SendOptions): Promise<TestSendResult>;
  /** Sends an event by name (no schema), then drains the pool (see above). */
  send(name: string, payload: unknown, options?: SendOptions): Promise<TestSendResult>;
}

/** What {@link TestEngine.send} resolves with: the send's result and the started executions' results after draining. */
export interface TestSendResult extends SendResult {
  /** The result of each execution in `started` once the pool drained (same order). */
  readonly runs: readonly RunResult[];
}

/**
 * Creates an engine for tests.
 *
 * @example
 * ```ts
 * const t = createTestEngine();
 * const result = await t.run(checkout, { orderId: 'o-1' }, { mocks: { charge: { value: { id: 'c-1' } } } });
 * expect(result).toHaveCompleted();
 * ```
 */
export function createTestEngine(options: TestEngineOptions = {}): TestEngine {
  const { recordTtlMs: askedTtl, ...engineOptions } = options;
  const recordTtlMs = checkedRecordTtl('createTestEngine', askedTtl);
  refuseTtlBesideStore('createTestEngine', recordTtlMs, options.store);
  const clock = options.clock ?? new ManualClock();
  const store = options.store ?? new MemoryStore(recordTtlMs === undefined ? {} : { recordTtlMs });
  const coordinator = options.coordinator ?? new MemoryCoordinator({ clock });
  const events: ReactorEvent[] = [];
  // Async units and background runs go to an in-process pool on the same manual clock (unless a queue is given).
  const pool = options.queue ? undefined : createTestPool(clock);
  const queued = pool
    ? { queue: pool.queue, waitList: pool.waitList, backgroundSettled: (until: number) => pool.queue.settled(until) }
    : {};
  // The store serves as the interrupt claims when it implements them (MemoryStore and RedisStore do).
  const interruptClaims = options.interruptClaims ?? (hasInterruptClaims(store) ? store : undefined);
  // Sent events are kept on the manual clock, for as long as the records.
  const eventLog =
    options.events ??
    new MemoryEventLog({ clock, ttlMs: store instanceof MemoryStore ? store.recordTtlMs : undefined });
  const eventWaits = options.eventWaits ?? new MemoryEventWaits({ clock });
  const executionStream = options.executionStream ?? new MemoryExecutionStream();
  const engine = createEngine({
    ...engineOptions,
    store,
    clock,
    coordinator,
    interruptClaims,
    events: eventLog,
    eventWaits,
    executionStream,
    ...queued,
  });
  engine.subscribe((e) => events.push(e));
  pool?.start(engine);
  return {
    engine,
    clock,
    store,
    coordinator,
    events,
    resume: (target, payload, resumeOptions) =>
      engine.resume(
        typeof target === 'object' && 'executionId' in target ? target.executionId : target,
        payload,
        resumeOptions,
      ) as Promise<RunResult<never, never>>,
    drain: async () => pool?.drain(),
    close: async () => pool?.close(),
    send: async (target: AnyEventDeclaration | string, payload: unknown, sendOptions?: SendOptions) => {
      const sent = await engine.send(target as string, payload, sendOptions);
      // A clock that does not advance on its own leaves delayed jobs (a wait's timeout) for `clock.advance`.
      await (clock.autoAdvance ? pool?.drain() : pool?.queue.settled());
      const runs = await Promise.all(sent.started.map((id) => engine.result(id)));
      return { ...sent, runs: runs.filter((r): r is RunResult => r !== undefined) };
    },
    run: (reactor, input, runOptions = {}) => {
      const { mocks, ...rest } = runOptions;
      return engine.run(mocks ? mockSteps(reactor, mocks) : reactor, input, rest);
    },
  };
}

/**
 * Runs one reactor once on a fresh test engine, then drains its background pool: async units
 * have finished, and a run that went to the background is returned with its final result.
 *
 * @example
 * ```ts
 * const result = await testReactor(checkout, { orderId: 'o-1' }, { mocks: { charge: () => ({ id: 'c-1' }) } });
 * expect(result).toHaveUndone(['reserve']);
 * ```
 */
export function testReactor<R extends AnyReactorDefinition>(
  reactor: R,
  input: InputOf<R>,
  options: TestEngineOptions & RunOptions & { readonly mocks?: StepMocks<R> } = {},
): Promise<RunResult<OutputOf<R>, StepsOf<R>>> {
  const { idempotencyKey, mocks, ...engineOptions } = options;
  const runOptions = {
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(mocks === undefined ? {} : { mocks }),
  };
  return runDrained(createTestEngine(engineOptions), reactor, input, runOptions);
}

/** Runs, drains the pool, and returns the final result of a run that went to the background. */
async function runDrained<R extends AnyReactorDefinition>(
  t: TestEngine,
  reactor: R,
  input: InputOf<R>,
  runOptions: Parameters<TestEngine['run']>[2],
): Promise<RunResult<OutputOf<R>, StepsOf<R>>> {
  const result = await t.run(reactor, input, runOptions);
  await t.drain();
  if (result.status !== 'queued' && result.status !== 'parked') return result;
  return (await t.engine.result(result.executionId, reactor)) ?? result;
}
