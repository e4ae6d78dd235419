/**
 * Starts on events: for a sent event (accepted, or a duplicate of one kept), every registered
 * reactor declaring `.on` of its name whose `match` passes starts one background execution with
 * `input(payload)`, as `engine.start` does, under the idempotency key `event:<id>:<reactor>` (or
 * the trigger's own). The key makes the start happen once per event and reactor whichever process
 * sends the event and however often: a duplicate runs the triggers again, finds each start made
 * and only records it, which also heals a process that died between storing the event and
 * starting. Each start is recorded on the event (`EventLog.addEffect`) and told
 * (`event.started`); a trigger that fails is told (`event.trigger_failed`, and a warning on the
 * engine's logger) and passed over, and the others run (docs/decisions/145, 146).
 *
 * @module
 */
import { defaultTriggerKey, type TriggerEvent } from '../../dsl/trigger.js';
import type { Logger } from '../../dsl/context.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { errorToJSON, EventTriggerError, ValidationError, type EventTriggerStage } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { EventLog, StoredEvent } from '../../ports/event-log.js';
import type { EventNotices } from '../model/event-notices.js';
import type { RunResult } from '../model/results.js';
import { readTags } from '../model/tags.js';
import type { Trigger } from './trigger-index.js';
import type { StartOptions } from './types.js';

/** The tag naming the id of the event that started an execution. */
export const EVENT_ID_TAG = 'event';
/** The tag naming the name of the event that started an execution. */
export const EVENT_NAME_TAG = 'event.name';

/** What starting on events needs of the engine. */
export interface TriggerDeps {
  /** The registered triggers of an event name (the registry's index). */
  readonly triggersOf: (name: string) => readonly Trigger[];
  /** A background start (`engine.start` without its handle). */
  readonly start: (reactor: AnyReactorDefinition, input: unknown, options: StartOptions) => Promise<RunResult>;
  readonly notices: EventNotices;
  readonly clock: Clock;
  /** Where a failed trigger is logged (a warning), besides its notice. */
  readonly logger: Logger;
}

/** What the triggers of one sent event did: the executions it started (now or by an earlier send) and the triggers that failed. */
export interface TriggerOutcome {
  readonly started: readonly string[];
  readonly failures: readonly EventTriggerError[];
}

const NOTHING: TriggerOutcome = Object.freeze({ started: Object.freeze([]), failures: Object.freeze([]) });

/** A stage's failure, carried to the one place that reports it. */
class StageFailure {
  readonly stage: EventTriggerStage;
  readonly cause: unknown;
  readonly executionId: string | undefined;
  constructor(stage: EventTriggerStage, cause: unknown, executionId?: string) {
    this.stage = stage;
    this.cause = cause;
    this.executionId = executionId;
  }
}

/**
 * Runs the triggers of `event` one after another, in the order their reactors were registered;
 * never throws (a trigger's failure is reported in the outcome and on a notice).
 */
export async function startTriggered(
  deps: TriggerDeps | undefined,
  log: EventLog,
  event: StoredEvent,
): Promise<TriggerOutcome> {
  const triggers = deps?.triggersOf(event.name) ?? [];
  if (deps === undefined || triggers.length === 0) return NOTHING;
  const started: string[] = [];
  const failures: EventTriggerError[] = [];
  for (const trigger of triggers) {
    const base = { eventId: event.id, name: event.name, reactor: trigger.reactor.name };
    try {
      const outcome = await startOne(deps, log, event, trigger);
      if (outcome === undefined) continue;
      started.push(outcome.executionId);
      deps.notices.emit({ type: 'event.started', ...base, ...outcome, at: deps.clock.now() });
    } catch (caught) {
      const failure = caught instanceof StageFailure ? caught : new StageFailure('start', caught);
      const error = triggerError(event, trigger, failure);
      failures.push(error);
      deps.logger.warn(
        { eventId: event.id, event: event.name, reactor: trigger.reactor.name, stage: failure.stage, error },
        'a sent event could not start a reactor; the event is stored, send it again with its id once fixed',
      );
      deps.notices.emit({ type: 'event.trigger_failed', ...base, error: errorToJSON(error), at: deps.clock.now() });
    }
  }
  return { started, failures };
}

/** One trigger: match, input, key, start, effect; undefined when the event does not match. Throws {@link StageFailure}. */
async function startOne(
  deps: TriggerDeps,
  log: EventLog,
  event: StoredEvent,
  { reactor, spec }: Trigger,
): Promise<{ executionId: string; replay: boolean } | undefined> {
  const meta: TriggerEvent = { id: event.id, name: event.name, ts: event.ts, receivedAt: event.receivedAt };
  if (spec.match !== undefined && !stage('match', () => spec.match!(event.payload, meta))) return undefined;
  const input = stage('input', () => spec.input(event.payload, meta));
  const key = stage('idempotencyKey', () => keyOf(spec.idempotencyKey?.(event.payload, meta), event, reactor));
  const result = await deps.start(reactor, input, { idempotencyKey: key, tags: tagsOf(event) }).catch((error) => {
    throw new StageFailure('start', error);
  });
  // Refused before anything was written: the input failed the reactor's contract.
  if (result.status === 'failed' && !result.replay && result.failedStep === undefined)
    throw new StageFailure('input', result.error);
  await log.addEffect(event.id, 'started', result.executionId).catch((error) => {
    throw new StageFailure('effect', error, result.executionId);
  });
  return { executionId: result.executionId, replay: result.replay };
}

/** `run()`'s value, or a {@link StageFailure} of `name` when it throws. */
function stage<T>(name: EventTriggerStage, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new StageFailure(name, error);
  }
}

/** The trigger's key (a non-empty string), or the default one when it gives none; throws for anything else. */
function keyOf(given: unknown, event: StoredEvent, reactor: AnyReactorDefinition): string {
  if (given === undefined) return defaultTriggerKey(event.id, reactor.name);
  if (typeof given === 'string' && given.length > 0) return given;
  throw new TypeError(`idempotencyKey must return a non-empty string; got ${JSON.stringify(given) ?? typeof given}`);
}

/** The started execution's tags: the event's name and id (the id left out when it breaks the tag rules). */
function tagsOf(event: StoredEvent): Record<string, string> {
  const withId = { [EVENT_NAME_TAG]: event.name, [EVENT_ID_TAG]: event.id };
  return readTags(withId).ok ? withId : { [EVENT_NAME_TAG]: event.name };
}

/** The typed error of a failed trigger. */
function triggerError(event: StoredEvent, trigger: Trigger, failure: StageFailure): EventTriggerError {
  const issues = failure.cause instanceof ValidationError ? failure.cause.issues : undefined;
  return new EventTriggerError(
    {
      eventId: event.id,
      event: event.name,
      reactor: trigger.reactor.name,
      stage: failure.stage,
      ...(failure.executionId === undefined ? {} : { executionId: failure.executionId }),
      ...(issues === undefined ? {} : { issues }),
    },
    failure.cause,
  );
}
