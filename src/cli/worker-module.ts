/**
 * What the module of `ts-reactor worker --module <path>` may give the worker: its reactors,
 * named rate limits, middleware, a logger, schedule inputs, the key prefix, engine options and a
 * `close()` for what it opened itself —
 * as one typed default export made with {@link defineWorker}, or as named exports of the same
 * names. `readWorkerModule` checks what a module exports and says what is wrong.
 *
 * @module
 */
import type { Logger } from '../dsl/context.js';
import { compileWindows, type RateWindowOptions } from '../dsl/coordination.js';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { EngineOptions } from '../engine/api/types.js';
import type { GaugeSources } from '../otel/metric-spec.js';
import type { BullmqConsumerOptions } from '../queue/bullmq.js';
import type { JobRetentionOptions } from '../queue/job-retention.js';
import type { RuntimeMiddleware } from '../schedules/events.js';
import type { ScheduleInputFn } from '../schedules/types.js';

/** Engine and runtime options a worker module may set (as `createRedisRuntime` takes them). Flags of the command win over them. */
export interface WorkerModuleOptions extends Pick<
  EngineOptions,
  'background' | 'maxConcurrency' | 'checkpointIntervalMs' | 'maxInlineSleepMs' | 'maxTraceEntries' | 'logEvents'
> {
  /** BullMQ queue name (`--queue` wins). Default `ts-reactor`. */
  readonly queueName?: string;
  /** Worker lock and stall detection tunables, as `createRedisRuntime({ stall })`. */
  readonly stall?: Pick<BullmqConsumerOptions, 'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount'>;
  /** How long calls ride out a Redis outage, as `createRedisRuntime({ outageToleranceMs })`. Default 30 s. */
  readonly outageToleranceMs?: number;
  /** Lock hand-off to waiters, as `createRedisRuntime({ lockHandOff })`. Default true. */
  readonly lockHandOff?: boolean;
  /** Size limit of one execution record in bytes, as `createRedisRuntime({ maxRecordBytes })`. */
  readonly maxRecordBytes?: number;
  /** Size limit of one large map's element states in bytes, as `createRedisRuntime({ maxMapStateBytes })`. */
  readonly maxMapStateBytes?: number;
  /**
   * How long records are kept after their last write, as `createRedisRuntime({ recordTtlMs })`.
   * Default 7 days. Give the processes that start executions the same value.
   */
  readonly recordTtlMs?: number;
  /** How many finished BullMQ jobs are kept, and for how long, as `createRedisRuntime({ jobRetention })`. */
  readonly jobRetention?: JobRetentionOptions;
}

/**
 * What a worker module gives `ts-reactor worker`. Every field is optional, but the module must
 * give at least one reactor (here, or as any other export of a reactor definition).
 */
export interface WorkerModule {
  /** The reactors the worker processes (also: every reactor definition the module exports). */
  readonly reactors?: readonly AnyReactorDefinition[];
  /** Named rate limits, shared by every reactor that declares `withRateLimit({ name })`. */
  readonly rateLimits?: Readonly<Record<string, readonly RateWindowOptions[]>>;
  /**
   * Middleware of the worker's engine, e.g. `otel()` from `ts-reactor/otel` (with `onScheduleEvent`,
   * one also sees the schedules' events); or a function of the
   * worker that returns them, for middleware that needs what the worker samples, such as
   * `(worker) => [otelMetrics({ gauges: worker.gauges })]`.
   */
  readonly middleware?: readonly RuntimeMiddleware[] | ((worker: WorkerContext) => readonly RuntimeMiddleware[]);
  /** A pino-compatible logger (`--log-level` replaces it with JSON lines on stdout). */
  readonly logger?: Logger;
  /** Computed schedule inputs by name (a schedule's `inputFrom`). */
  readonly scheduleInputs?: Readonly<Record<string, ScheduleInputFn>>;
  /** The key prefix of the store, coordinator and queue (`--prefix` wins; then this; then `TS_REACTOR_PREFIX`). */
  readonly prefix?: string;
  /** Engine and runtime options. */
  readonly options?: WorkerModuleOptions;
  /**
   * Closes what the module opened itself (its own Redis or database connections, timers): the
   * worker awaits it after its own connections are closed, for at most 10 s, before it exits;
   * so do the operations commands that load the module (`--module`).
   */
  readonly close?: () => unknown;
}

/** What the worker gives a module's `middleware` function. */
export interface WorkerContext {
  /** The worker's gauge sources (queue jobs by state, the oldest waiting job, unfinished executions by state), for `otelMetrics({ gauges })`. */
  readonly gauges: GaugeSources;
  /** The key prefix the worker uses. */
  readonly prefix: string;
  /** The BullMQ queue it takes jobs from. */
  readonly queueName: string;
}

/** The mark {@link defineWorker} puts on its result. */
const WORKER_MODULE = Symbol.for('ts-reactor.worker-module');

/** A worker module made by {@link defineWorker}. */
export type WorkerDefinition = WorkerModule & { readonly [WORKER_MODULE]: true };

/**
 * Declares what `ts-reactor worker --module <this file>` runs, type-checked: export its result as
 * the module's default export.
 *
 * @example
 * ```ts
 * import { defineWorker } from 'ts-reactor/bullmq';
 * import { otel } from 'ts-reactor/otel';
 * export default defineWorker({
 *   reactors: [checkout],
 *   rateLimits: { psp: [{ limit: 100, per: '1s' }] },
 *   middleware: [otel()],
 *   prefix: 'shop',
 * });
 * ```
 */
export function defineWorker(module: WorkerModule): WorkerDefinition {
  return Object.freeze({ ...module, [WORKER_MODULE]: true as const });
}

/** Whether `value` was made by {@link defineWorker}. */
export function isWorkerDefinition(value: unknown): value is WorkerDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[WORKER_MODULE] === true;
}

/** The fields of {@link WorkerModule}, in the order they are checked. */
export const WORKER_MODULE_FIELDS = [
  'reactors',
  'rateLimits',
  'middleware',
  'logger',
  'scheduleInputs',
  'prefix',
  'options',
  'close',
] as const;

/** A module export that does not fit the contract: its name and what is wrong. */
export class WorkerModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerModuleError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The worker module `exports` describes: its default export when made by {@link defineWorker},
 * else its named exports of {@link WORKER_MODULE_FIELDS} (a default export of the contract wins
 * field by field over named ones). Reactors are collected apart (`collectReactors`).
 * @throws WorkerModuleError naming the export that does not fit.
 */
export function readWorkerModule(exports: Readonly<Record<string, unknown>>): WorkerModule {
  const defined = isWorkerDefinition(exports['default']) ? exports['default'] : {};
  const pick = (field: (typeof WORKER_MODULE_FIELDS)[number]): unknown =>
    (defined as Record<string, unknown>)[field] ?? (field === 'reactors' ? undefined : exports[field]);
  const rateLimits = pick('rateLimits');
  if (rateLimits !== undefined && (!isObject(rateLimits) || !Object.values(rateLimits).every(Array.isArray)))
    throw new WorkerModuleError(
      'rateLimits must be an object of arrays of windows, e.g. { psp: [{ limit: 10, per: "1s" }] }',
    );
  if (rateLimits !== undefined) checkWindows(rateLimits as Record<string, readonly RateWindowOptions[]>);
  const middleware = pick('middleware');
  if (middleware !== undefined && typeof middleware !== 'function') checkMiddleware(middleware);
  const logger = pick('logger');
  const levels = ['debug', 'info', 'warn', 'error'] as const;
  if (logger !== undefined && (!isObject(logger) || !levels.every((l) => typeof logger[l] === 'function')))
    throw new WorkerModuleError('logger must have debug, info, warn and error methods (a pino-compatible logger)');
  const prefix = pick('prefix');
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '' || /[{}\s]/.test(prefix)))
    throw new WorkerModuleError(
      `prefix must be a non-empty string without braces or whitespace; got ${JSON.stringify(prefix)}`,
    );
  const options = pick('options');
  if (options !== undefined && !isObject(options))
    throw new WorkerModuleError('options must be an object of engine options');
  const inputs = pick('scheduleInputs');
  if (inputs !== undefined && (!isObject(inputs) || !Object.values(inputs).every((f) => typeof f === 'function')))
    throw new WorkerModuleError('scheduleInputs must be an object of functions');
  const close = pick('close');
  if (close !== undefined && typeof close !== 'function')
    throw new WorkerModuleError(
      'close must be a function (it may return a promise) that closes what the module opened',
    );
  const reactors = (defined as WorkerModule).reactors;
  return {
    ...(reactors === undefined ? {} : { reactors }),
    ...(rateLimits === undefined ? {} : { rateLimits: rateLimits as NonNullable<WorkerModule['rateLimits']> }),
    ...(middleware === undefined ? {} : { middleware: middleware as NonNullable<WorkerModule['middleware']> }),
    ...(logger === undefined ? {} : { logger: logger as unknown as Logger }),
    ...(inputs === undefined ? {} : { scheduleInputs: inputs as NonNullable<WorkerModule['scheduleInputs']> }),
    ...(prefix === undefined ? {} : { prefix }),
    ...(options === undefined ? {} : { options: options }),
    ...(close === undefined ? {} : { close: close as () => unknown }),
  };
}

/** Each named limit's windows, checked as the engine will (before the worker opens a connection). */
function checkWindows(rateLimits: Readonly<Record<string, readonly RateWindowOptions[]>>): void {
  for (const [name, windows] of Object.entries(rateLimits)) {
    try {
      compileWindows({ reactor: `(rate limit ${name})` }, windows);
    } catch (error) {
      throw new WorkerModuleError(`rateLimits.${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** `middleware` as the module gave it, or as its function returned it. @throws WorkerModuleError unless an array of objects. */
export function checkMiddleware(middleware: unknown): readonly RuntimeMiddleware[] {
  if (!Array.isArray(middleware) || !middleware.every(isObject))
    throw new WorkerModuleError(
      'middleware must be an array of middleware objects (e.g. [otel()]), or a function that returns one',
    );
  return middleware;
}

/** The module's middleware for a worker: the array, or what its function returns for `worker`. @throws WorkerModuleError */
export function moduleMiddleware(module: WorkerModule, worker: () => WorkerContext): readonly RuntimeMiddleware[] {
  const { middleware } = module;
  if (middleware === undefined) return [];
  if (typeof middleware !== 'function') return middleware;
  try {
    return checkMiddleware(middleware(worker()));
  } catch (error) {
    if (error instanceof WorkerModuleError) throw error;
    throw new WorkerModuleError(`middleware(worker) threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}
