/**
 * A reactor's start on an event (`reactor(...).on(event, { input, match?, idempotencyKey? })`):
 * which event starts it, the input it starts with, and which events of that name count. Checked
 * when declared into a frozen {@link TriggerSpec}; the engine indexes the specs by event name when
 * a reactor is registered and runs them when an event is sent (`src/engine/api/event-triggers.ts`,
 * docs/decisions/145).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { eventNameProblem, isEventDeclaration, type AnyEventDeclaration, type EventPayload } from './event.js';

/** The payload a trigger of `E` receives: typed by the declaration's schema, `unknown` for a bare name. */
export type TriggerPayload<E> = E extends AnyEventDeclaration ? EventPayload<E> : unknown;

/** What a trigger's functions learn of the event besides its payload. */
export interface TriggerEvent {
  /** The event's id (the sender's, or the generated one). */
  readonly id: string;
  /** The event's name. */
  readonly name: string;
  /** When it happened, epoch ms (the sender's `ts`, else its receipt time). */
  readonly ts: number;
  /** When the log accepted it, epoch ms on the backend's clock. */
  readonly receivedAt: number;
}

/**
 * Options of `.on(event, options)`: `P` is the event's payload, `In` what the reactor's run
 * accepts. Every function is synchronous and called once per send of a matching event, in the
 * sending process; one that throws fails this trigger only (`EventTriggerError`).
 */
export interface TriggerOptions<P, In> {
  /** The reactor's input, from the event's payload. It is validated against the reactor's input contract. */
  readonly input: (payload: P, event: TriggerEvent) => In;
  /** Whether this event starts the reactor; absent: every event of the name does. */
  readonly match?: (payload: P, event: TriggerEvent) => boolean;
  /**
   * The start's idempotency key (a non-empty string): at most one execution of the reactor per
   * key, whichever event brings it. Absent: `event:<event id>:<reactor name>`, one execution per
   * event and reactor.
   */
  readonly idempotencyKey?: (payload: P, event: TriggerEvent) => string;
}

/** The validated, frozen form of one `.on` declaration. */
export interface TriggerSpec {
  /** The event's name. */
  readonly event: string;
  readonly input: (payload: unknown, event: TriggerEvent) => unknown;
  readonly match: ((payload: unknown, event: TriggerEvent) => boolean) | undefined;
  readonly idempotencyKey: ((payload: unknown, event: TriggerEvent) => string) | undefined;
}

const OPTION_NAMES: ReadonlySet<string> = new Set(['input', 'match', 'idempotencyKey']);

/** The default idempotency key of a start by event: one execution per event id and reactor. */
export function defaultTriggerKey(eventId: string, reactor: string): string {
  return `event:${eventId}:${reactor}`;
}

/**
 * Validates an `.on` declaration of reactor `reactor`. Throws a {@link DefinitionError} naming
 * the reactor when the event is neither a declaration nor an event name, when the options are not
 * an object, hold an unknown option, lack an `input` function, or give a `match` or
 * `idempotencyKey` that is not a function.
 */
export function triggerSpec(reactor: string, target: unknown, options: unknown): TriggerSpec {
  const fail = (message: string): never => {
    throw new DefinitionError(`reactor "${reactor}": ${message}`, reactor);
  };
  const name = isEventDeclaration(target) ? target.name : target;
  const problem = eventNameProblem(name);
  if (problem !== undefined) fail(`.on() takes an event declaration or an event name; the name ${problem}`);
  const event = name as string;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    fail(`.on("${event}") needs options { input, match?, idempotencyKey? }`);
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (!OPTION_NAMES.has(key)) fail(`.on("${event}") has an unknown option "${key}" (input, match, idempotencyKey)`);
  if (typeof o.input !== 'function') fail(`.on("${event}") needs an input function: (payload) => the reactor's input`);
  for (const key of ['match', 'idempotencyKey'] as const)
    if (o[key] !== undefined && typeof o[key] !== 'function') fail(`.on("${event}"): ${key} must be a function`);
  return Object.freeze({
    event,
    input: o.input as TriggerSpec['input'],
    match: o.match as TriggerSpec['match'],
    idempotencyKey: o.idempotencyKey as TriggerSpec['idempotencyKey'],
  });
}
