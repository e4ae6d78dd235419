/**
 * A `.waitForEvent` step's declaration: the event it waits for (a declaration from `event()`),
 * which payload fields must equal the step's arguments (`matchOn`, the index key), the final
 * predicate (`match`), and what its `timeout` does (`onTimeout`), validated into a frozen
 * {@link WaitForEventSpec}. The engine runs it (`src/engine/graph/event-wait.ts`); docs/events.md,
 * "Waiting for an event".
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import type { Contract } from './contract.js';
import { parseDuration, type Duration } from './duration.js';
import { isEventDeclaration, type AnyEventDeclaration, type EventPayload } from './event.js';

/**
 * What a `.waitForEvent` step does when its `timeout` passes before a matching event arrived:
 * `'fail'` (default) rolls the execution back and ends it failed with `EventWaitTimeoutError`
 * (`event_wait_timed_out`), as an interrupt's timeout does; a function of the step's arguments
 * completes the step with its value instead, and the execution goes on.
 */
export type OnEventTimeout<Args, V> = 'fail' | ((args: Args) => V);

/** The settings of a `.waitForEvent` step besides where its arguments come from (see `ReactorBuilder.waitForEvent`). */
export interface WaitForEventSettings<Args, E extends AnyEventDeclaration, V> {
  /** The event to wait for: a declaration from `event(name, fields)`. The step's result is its payload. */
  readonly event: E;
  /**
   * Payload fields whose values must equal the same-named fields of the step's arguments: the key
   * waits are indexed by, so a sent event reads only the waits with its values. Compared as JSON
   * (`'1'` is not `1`); use scalar fields.
   */
  readonly matchOn?: readonly (keyof EventPayload<E> & keyof NoInfer<Args> & string)[];
  /** A final check of a candidate event against the step's arguments (after `matchOn`); it must be pure and fast. */
  readonly match?: (event: EventPayload<E>, args: NoInfer<Args>) => boolean;
  /** How long to wait, from the moment the wait is registered. Default: no timeout. Acts through a job: needs a queue. */
  readonly timeout?: Duration;
  /** What a timeout does (see {@link OnEventTimeout}). Default `'fail'`. */
  readonly onTimeout?: OnEventTimeout<NoInfer<Args>, V>;
}

/** The validated, frozen form of a `.waitForEvent` declaration. */
export interface WaitForEventSpec {
  /** The event's name. */
  readonly event: string;
  /** Its payload contract (what a sent event was validated against). */
  readonly contract: Contract;
  /** The payload fields matched against the step's arguments, in the order declared (empty: none). */
  readonly matchOn: readonly string[];
  readonly match: ((event: never, args: never) => boolean) | undefined;
  readonly timeoutMs: number | undefined;
  readonly onTimeout: { readonly kind: 'fail' } | { readonly kind: 'value'; readonly value: (args: never) => unknown };
}

const COORDINATION = ['lock', 'semaphore', 'rateLimit', 'period', 'orderedLock'] as const;

interface Where {
  readonly reactor: string;
  readonly step: string;
}

function fail(where: Where, message: string): never {
  throw new DefinitionError(
    `reactor "${where.reactor}", waitForEvent "${where.step}": ${message}`,
    where.reactor,
    where.step,
  );
}

/**
 * Validates a `.waitForEvent` declaration: an event declaration, `matchOn` a list of distinct
 * field names of its payload, `match` a function, `timeout` a positive duration, `onTimeout`
 * `'fail'` or a function; no coordination (a parked execution holds nothing).
 *
 * @throws DefinitionError naming the reactor and the step, for anything else.
 */
export function waitForEventSpec(
  where: Where,
  settings: WaitForEventSettings<never, AnyEventDeclaration, unknown>,
): WaitForEventSpec {
  const o = (settings ?? {}) as Partial<WaitForEventSettings<never, AnyEventDeclaration, unknown>> &
    Record<string, unknown>;
  const declared = COORDINATION.filter((k) => o[k] !== undefined);
  if (declared.length > 0)
    fail(
      where,
      `declares ${declared.join(', ')}, but a waiting step cannot coordinate (a parked execution holds nothing); declare it on the reactor instead`,
    );
  if (!isEventDeclaration(o.event)) fail(where, "event must be an event declaration: event('name', { …fields })");
  const fields = Object.keys(o.event.contract.fields);
  const matchOn = (o.matchOn ?? []) as readonly unknown[];
  if (!Array.isArray(matchOn)) fail(where, 'matchOn must be an array of payload field names');
  for (const field of matchOn)
    if (typeof field !== 'string' || !fields.includes(field))
      fail(
        where,
        `matchOn names ${JSON.stringify(field)}, which is not a field of event "${o.event.name}" (${fields.join(', ')})`,
      );
  if (new Set(matchOn).size !== matchOn.length) fail(where, 'matchOn names a field twice');
  if (o.match !== undefined && typeof o.match !== 'function') fail(where, 'match must be a function (event, args)');
  const timeoutMs = o.timeout === undefined ? undefined : parseDuration(o.timeout);
  if (o.timeout !== undefined && (timeoutMs === undefined || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)))
    fail(where, `timeout is not a positive duration (got ${JSON.stringify(o.timeout)})`);
  const onTimeout = o.onTimeout ?? 'fail';
  if (onTimeout !== 'fail' && typeof onTimeout !== 'function')
    fail(where, `onTimeout must be 'fail' or a function of the step's arguments (got ${JSON.stringify(onTimeout)})`);
  if (o.onTimeout !== undefined && o.timeout === undefined) fail(where, 'onTimeout needs a timeout');
  return Object.freeze({
    event: o.event.name,
    contract: o.event.contract,
    matchOn: Object.freeze([...(matchOn as string[])]),
    match: o.match,
    timeoutMs: timeoutMs === undefined ? undefined : Math.ceil(timeoutMs),
    onTimeout:
      onTimeout === 'fail'
        ? Object.freeze({ kind: 'fail' as const })
        : Object.freeze({ kind: 'value' as const, value: onTimeout }),
  });
}
