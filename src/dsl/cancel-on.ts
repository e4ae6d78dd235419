/**
 * A reactor's `cancelOn` declarations: an event (a declaration or a name) whose arrival cancels
 * the reactor's unfinished executions it matches, rolling them back as `engine.cancel` does
 * (docs/events.md#cancelling-on-an-event). `matchOn` names fields the event's payload and the
 * execution's input share: an event reaches only the executions whose input has the same values
 * there (an index lookup, never a scan), and `match` is a final check on the payload and the
 * input. Validated when declared and again at `build` against the input contract; frozen into a
 * {@link CancelOnSpec} the engine reads (`src/engine/api/event-cancels.ts`).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import type { Contract } from './contract.js';
import { eventNameProblem, isEventDeclaration, type AnyEventDeclaration, type EventPayload } from './event.js';

/** The payload type of a `cancelOn` target: the declaration's payload, or any JSON object for a bare name. */
export type CancelOnPayload<E> = E extends AnyEventDeclaration ? EventPayload<E> : Readonly<Record<string, unknown>>;

/**
 * The fields `matchOn` may name: a field of both the event's payload `P` and the reactor's
 * validated input `I`, of types one of which is assignable to the other (a bare event name:
 * any input field).
 */
export type MatchableField<P, I> = {
  [K in keyof P & keyof I & string]: [P[K]] extends [I[K]] ? K : [I[K]] extends [P[K]] ? K : never;
}[keyof P & keyof I & string];

/** Options of `cancelOn`: how an event is matched to an execution. Without either, every unfinished execution of the reactor matches. */
export interface CancelOnOptions<P, I> {
  /**
   * Fields of the payload that must equal the execution's input fields of the same names: the
   * index an event is looked up by. Each must be a required field of the reactor's input.
   */
  readonly matchOn?: readonly MatchableField<P, I>[];
  /**
   * The final check, on the event's payload and the execution's validated input: true cancels.
   * Pure and synchronous; a predicate that throws counts as false.
   */
  readonly match?: (event: P, input: I) => boolean;
}

/** One `cancelOn` declaration, validated and frozen. */
export interface CancelOnSpec {
  /** The event's name. */
  readonly event: string;
  /** The shared fields an event is matched on, in the order declared (empty: every execution of the reactor). */
  readonly matchOn: readonly string[];
  /** The final check; absent: every execution the index finds matches. */
  readonly match?: ((event: unknown, input: unknown) => boolean) | undefined;
  /** The event's declaration, when `cancelOn` was given one: its payload fields are checked at build. */
  readonly declaration?: AnyEventDeclaration | undefined;
}

function fail(reactor: string, message: string): never {
  throw new DefinitionError(`reactor "${reactor}": ${message}`, reactor);
}

/**
 * Validates one `cancelOn` declaration of `reactor`, given the ones declared before it: the event
 * (a declaration or a valid event name, not already declared), `matchOn` (distinct field names,
 * fields of the declaration's payload when there is one) and `match` (a function).
 *
 * @throws DefinitionError (`definition_invalid`) naming the reactor and the fix.
 */
export function cancelOnSpec(
  reactor: string,
  earlier: readonly CancelOnSpec[],
  target: unknown,
  options: unknown,
): CancelOnSpec {
  const declaration = isEventDeclaration(target) ? target : undefined;
  const name = declaration?.name ?? target;
  const problem = eventNameProblem(name);
  if (problem !== undefined) fail(reactor, `cancelOn needs an event declaration or an event name; the name ${problem}`);
  const event = name as string;
  if (earlier.some((spec) => spec.event === event))
    fail(reactor, `declares cancelOn("${event}") twice; keep one declaration (match can test several conditions)`);
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))
    fail(reactor, `cancelOn("${event}"): options must be an object ({ matchOn?, match? })`);
  const { matchOn = [], match } = (options ?? {}) as { matchOn?: unknown; match?: unknown };
  if (!Array.isArray(matchOn)) fail(reactor, `cancelOn("${event}"): matchOn must be an array of field names`);
  for (const field of matchOn as unknown[]) {
    if (typeof field !== 'string' || field.length === 0)
      fail(reactor, `cancelOn("${event}"): matchOn holds ${JSON.stringify(field)}; name a field`);
  }
  const fields = matchOn as string[];
  const duplicate = fields.find((field, i) => fields.indexOf(field) !== i);
  if (duplicate !== undefined) fail(reactor, `cancelOn("${event}"): matchOn names "${duplicate}" twice`);
  if (declaration !== undefined) {
    const unknown = fields.find((field) => !(field in declaration.contract.fields));
    if (unknown !== undefined)
      fail(
        reactor,
        `cancelOn("${event}"): matchOn field "${unknown}" is not a field of the event's payload; its fields are: ${Object.keys(declaration.contract.fields).join(', ') || '(none)'}`,
      );
  }
  if (match !== undefined && typeof match !== 'function')
    fail(reactor, `cancelOn("${event}"): match must be a function (event, input) => boolean`);
  return Object.freeze({
    event,
    matchOn: Object.freeze([...fields]),
    ...(match === undefined ? {} : { match: match as CancelOnSpec['match'] }),
    ...(declaration === undefined ? {} : { declaration }),
  });
}

/**
 * Checks every `cancelOn` declaration against the reactor's input contract at `build`: each
 * `matchOn` field must be a required input field (an execution without a value there could never
 * be found).
 *
 * @throws DefinitionError (`definition_invalid`) naming the reactor, the event and the field.
 */
export function checkCancelOns(reactor: string, contract: Contract, specs: readonly CancelOnSpec[]): void {
  for (const spec of specs) {
    for (const field of spec.matchOn) {
      if (!(field in contract.fields))
        fail(
          reactor,
          `cancelOn("${spec.event}"): matchOn field "${field}" is not a reactor input; add it to .input({...}) or leave it out of matchOn`,
        );
      if (!contract.required.includes(field))
        fail(
          reactor,
          `cancelOn("${spec.event}"): matchOn field "${field}" is an optional input; an execution without it could never match, so make it required or test it in match`,
        );
    }
  }
}
