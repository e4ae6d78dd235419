/**
 * `Schedules`: create, update, list and remove schedules, and start each tick's execution.
 *
 * @module
 */
import type { Logger } from '../dsl/context.js';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Engine } from '../engine/api/types.js';
import type { Clock } from '../ports/clock.js';
import { validateContract } from '../dsl/contract.js';
import {
  ErrorCode,
  ReactorError,
  ScheduleInvalidError,
  ScheduleNotFoundError,
  ValidationError,
  errorToJSON,
  type FieldIssue,
} from '../errors.js';
import type { ScheduleBackend } from '../ports/schedules.js';
import { ScheduleEvents, type ScheduleEvent, type ScheduleListener, type ScheduleObserver } from './events.js';
import { planTicks } from './plan.js';
import { nextTick, nextTicks } from './spec.js';
import type { ScheduleDefinition, ScheduleFailure, ScheduleInfo, ScheduleInputFn, ScheduleOptions } from './types.js';
import { validateSchedule, type Known } from './validate.js';

/** What {@link Schedules} runs on. */
export interface SchedulesDeps {
  readonly backend: ScheduleBackend;
  /** Starts each tick's execution (`engine.start`); without it this process manages schedules but starts nothing. */
  readonly engine?: Pick<Engine, 'start'>;
  readonly clock: Clock;
  /** The reactors a schedule may name (a schedule naming another is refused); undefined: names are not checked. */
  readonly reactors?: readonly AnyReactorDefinition[];
  /** Computed inputs by name; undefined: `inputFrom` names are not checked. */
  readonly inputs?: Readonly<Record<string, ScheduleInputFn>>;
  /** The largest fixed input, in bytes of JSON: the store's record limit. Default 512 KiB. */
  readonly maxInputBytes?: number | undefined;
  readonly logger?: Logger;
  /** Observers of every schedule event of this process (the metrics middleware, counting ticks and failures). */
  readonly observers?: readonly ScheduleObserver[];
}

/** The idempotency key of a tick's execution: `schedule:<id>:<tick ISO 8601>`. */
export function tickKey(scheduleId: string, tick: number): string {
  return `schedule:${scheduleId}:${new Date(tick).toISOString()}`;
}

/** The schedules of one runtime (`engine.schedules` of the embedded engine, `runtime.schedules` on Redis). */
export class Schedules {
  readonly #deps: SchedulesDeps;
  readonly #reactors = new Map<string, AnyReactorDefinition>();
  readonly #events = new ScheduleEvents();
  readonly #inflight = new Set<Promise<unknown>>();

  /** `deps`: the backend, the engine that starts executions, the clock, the known reactors and inputs. */
  constructor(deps: SchedulesDeps) {
    this.#deps = deps;
    for (const reactor of deps.reactors ?? []) this.#reactors.set(reactor.name, reactor);
  }

  /**
   * Creates or replaces the schedule `options.id`. Refused with `ScheduleInvalidError`
   * (`schedule_invalid`: bad cron, time zone, interval under 1 s or over 365 days, input (not a
   * JSON object, nested over 100 levels, over the record limit), window; a fixed `input`
   * that does not satisfy the reactor's input contract when the reactor is known, its
   * `details.issues` naming the fields) or `reactor_unknown`; nothing is stored then. A replaced
   * schedule whose timing is unchanged keeps its next tick.
   */
  async upsert(options: ScheduleOptions): Promise<ScheduleInfo> {
    if (typeof options?.reactor === 'object' && options.reactor !== null)
      this.#reactors.set(options.reactor.name, options.reactor);
    const now = this.#deps.clock.now();
    const definition = validateSchedule(options, this.#known(), now);
    await this.#checkFixedInput(definition);
    const first = nextTick(definition, now);
    if (first === undefined)
      throw new ScheduleInvalidError({ schedule: definition.id, field: 'endAt', reason: 'leaves no tick after now' });
    await this.#deps.backend.put(definition, first);
    return this.#info(definition, 5);
  }

  /** The schedule `id` with its next `runs` ticks (default 5), or undefined. */
  async get(id: string, options: { readonly runs?: number } = {}): Promise<ScheduleInfo | undefined> {
    const definition = await this.#deps.backend.get(id);
    return definition && this.#info(definition, options.runs ?? 5, await this.#failures());
  }

  /** The next `n` tick times of schedule `id`. @throws ScheduleNotFoundError */
  async nextRuns(id: string, n = 5): Promise<readonly Date[]> {
    const info = await this.get(id, { runs: n });
    if (!info) throw new ScheduleNotFoundError(id);
    return info.nextRuns;
  }

  /** Every schedule, by id, each with its next `runs` ticks (default 5). */
  async list(options: { readonly runs?: number } = {}): Promise<ScheduleInfo[]> {
    const [all, failures] = await Promise.all([this.#deps.backend.list(), this.#failures()]);
    return all.sort((a, b) => a.id.localeCompare(b.id)).map((d) => this.#info(d, options.runs ?? 5, failures));
  }

  /** Removes schedule `id` and its pending tick; false when there was none. Executions already started are not touched. */
  remove(id: string): Promise<boolean> {
    return this.#deps.backend.remove(id);
  }

  /** Subscribes to `schedule.ticked`, `schedule.missed` and `schedule.failed`; returns the unsubscribe function. */
  subscribe(listener: ScheduleListener): () => void {
    return this.#events.subscribe(listener);
  }

  /** Starts taking ticks in this process (a worker does); the returned function stops it. */
  consume(): () => Promise<void> {
    const stop = this.#deps.backend.consume((definition, tick) => this.handleTick(definition, tick));
    return async () => (await stop(), await this.idle());
  }

  /** Resolves once the ticks being handled in this process have started their executions. */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.all(this.#inflight);
  }

  /**
   * Handles the delivery of `tick` (the oldest not yet handled) of `definition` now: starts the
   * ticks {@link planTicks} says, each with idempotency key {@link tickKey}, so a tick delivered
   * twice (two workers, a redelivery) starts one execution. Failures are events, never thrown;
   * it resolves with the failure of the last tick it started, if that one failed.
   */
  handleTick(definition: ScheduleDefinition, tick: number): Promise<ScheduleFailure | undefined> {
    const work = this.#handle(definition, tick).finally(() => this.#inflight.delete(work));
    this.#inflight.add(work);
    return work;
  }

  async #handle(definition: ScheduleDefinition, tick: number): Promise<ScheduleFailure | undefined> {
    const now = this.#deps.clock.now();
    const plan = planTicks(definition, definition.missed, tick, now);
    const base = { scheduleId: definition.id, reactor: definition.reactor };
    if (plan.missed > 0)
      this.#emit({
        ...base,
        type: 'schedule.missed',
        count: plan.missed,
        from: plan.missedFrom!,
        to: plan.missedTo!,
        policy: definition.missed,
        at: now,
      });
    let last: ScheduleFailure | undefined;
    for (const at of plan.fire) last = await this.#start(definition, at, at === plan.caughtUp);
    return last;
  }

  async #start(definition: ScheduleDefinition, tick: number, caughtUp: boolean): Promise<ScheduleFailure | undefined> {
    const base = { scheduleId: definition.id, reactor: definition.reactor };
    try {
      const engine = this.#deps.engine;
      if (!engine) throw new ReactorError(ErrorCode.QueueMissing, 'this process cannot start executions');
      const reactor = this.#reactors.get(definition.reactor);
      if (!reactor)
        throw new ReactorError(ErrorCode.ReactorUnknown, `unknown reactor "${definition.reactor}"`, {
          details: { reactor: definition.reactor },
        });
      const input = await this.#input(definition, tick);
      // Checked here too: a computed input, or a fixed one saved before its reactor changed.
      const issues = await contractIssues(reactor, input);
      if (issues) throw inputRefusal(definition, issues);
      const result = await engine.start(reactor, input, { idempotencyKey: tickKey(definition.id, tick) });
      // A start refused before anything was written (its input) has no execution to name.
      if (result.status === 'failed' && !result.replay && result.failedStep === undefined) throw result.error;
      const { executionId, replay } = result;
      this.#emit({
        ...base,
        type: 'schedule.ticked',
        tickAt: tick,
        executionId,
        replay,
        caughtUp,
        at: this.#deps.clock.now(),
      });
      return undefined;
    } catch (error) {
      const json = errorToJSON(error);
      const at = this.#deps.clock.now();
      this.#emit({ ...base, type: 'schedule.failed', tickAt: tick, error: json, at });
      return { tickAt: tick, at, ...(json.code === undefined ? {} : { code: json.code }), message: json.message };
    }
  }

  async #failures(): Promise<ReadonlyMap<string, ScheduleFailure>> {
    return (await this.#deps.backend.failures?.().catch(() => undefined)) ?? new Map();
  }

  /** A fixed input of a known reactor must satisfy its contract (a computed one is checked at each tick). */
  async #checkFixedInput(definition: ScheduleDefinition): Promise<void> {
    const reactor = this.#reactors.get(definition.reactor);
    if (reactor === undefined || definition.inputFrom !== undefined) return;
    const issues = await contractIssues(reactor, definition.input ?? {});
    if (issues)
      throw new ScheduleInvalidError({
        schedule: definition.id,
        field: 'input',
        reason: `does not satisfy the input of reactor "${reactor.name}": ${issuesText(issues)}`,
        issues,
      });
  }

  async #input(definition: ScheduleDefinition, tick: number): Promise<Record<string, unknown>> {
    if (definition.inputFrom === undefined) return structuredClone(definition.input ?? {});
    const fn = this.#deps.inputs?.[definition.inputFrom];
    if (!fn)
      throw new ScheduleInvalidError({
        schedule: definition.id,
        field: 'inputFrom',
        reason: `names no input registered in this worker: "${definition.inputFrom}"`,
      });
    return fn(new Date(tick), { id: definition.id, reactor: definition.reactor });
  }

  #emit(event: ScheduleEvent): void {
    this.#events.emit(event);
    for (const observer of this.#deps.observers ?? []) {
      try {
        observer.onScheduleEvent(event);
      } catch {
        // an observer's failure is its own
      }
    }
    const logger = this.#deps.logger;
    if (!logger) return;
    if (event.type === 'schedule.ticked') logger.info({ ...event }, `schedule ${event.scheduleId} ticked`);
    else if (event.type === 'schedule.missed')
      logger.warn({ ...event }, `schedule ${event.scheduleId}: ${event.count} tick(s) missed (${event.policy})`);
    else logger.error({ ...event }, `schedule ${event.scheduleId}: tick failed: ${event.error.message}`);
  }

  #known(): Known {
    return {
      maxInputBytes: this.#deps.maxInputBytes,
      reactors:
        this.#deps.reactors === undefined && this.#reactors.size === 0 ? undefined : new Set(this.#reactors.keys()),
      inputs: this.#deps.inputs === undefined ? undefined : new Set(Object.keys(this.#deps.inputs)),
    };
  }

  #info(definition: ScheduleDefinition, runs: number, failures?: ReadonlyMap<string, ScheduleFailure>): ScheduleInfo {
    const ticks = nextTicks(definition, this.#deps.clock.now(), Math.max(0, Math.min(runs, 100)));
    const lastFailure = failures?.get(definition.id);
    return { ...definition, nextRuns: ticks.map((t) => new Date(t)), ...(lastFailure ? { lastFailure } : {}) };
  }
}

/** The issues of `input` against the reactor's input contract; undefined when it satisfies it. */
async function contractIssues(
  reactor: AnyReactorDefinition,
  input: unknown,
): Promise<readonly FieldIssue[] | undefined> {
  const outcome = await validateContract(reactor.contract, input);
  return outcome.ok ? undefined : outcome.issues;
}

/** The error of a tick whose input does not satisfy its reactor's contract (`input_invalid`). */
function inputRefusal(definition: ScheduleDefinition, issues: readonly FieldIssue[]): ValidationError {
  return new ValidationError(
    ErrorCode.InputInvalid,
    `schedule "${definition.id}": the tick's input does not satisfy the input of reactor "${definition.reactor}": ${issuesText(issues)}`,
    issues,
    { reactor: definition.reactor },
  );
}

function issuesText(issues: readonly FieldIssue[]): string {
  return issues.map((i) => `${i.path === '' ? '(input)' : i.path}: ${i.message}`).join('; ');
}
