/**
 * Event declarations: an event's name and its payload's fields, one Standard Schema per field, as
 * an input contract has them (`contract.ts`). A declaration is frozen data; `engine.send` validates
 * a payload against it before anything is stored, and its types give the payload sent
 * ({@link EventInput}) and the payload stored ({@link EventPayload}).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { compileContract, type Contract, type ContractInput, type ContractOutput, type Fields } from './contract.js';

/** The longest event name, in UTF-16 code units. */
export const MAX_EVENT_NAME_LENGTH = 200;

/**
 * A declared event: its name and payload contract. `F` is the field map it was declared with;
 * the phantom `~types` (never set at run time) carries the payload types.
 */
export interface EventDeclaration<Name extends string = string, F extends Fields = Fields> {
  readonly kind: 'event';
  readonly name: Name;
  /** The compiled payload contract (`compileContract`). */
  readonly contract: Contract;
  /** Types only: never present at run time. */
  readonly '~types'?: { readonly input: ContractInput<F>; readonly payload: ContractOutput<F> };
}

/** Any event declaration. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the field map is read through the phantom `~types` only
export type AnyEventDeclaration = EventDeclaration<string, any>;

/** The payload a sender passes for event `E`: fields that accept `undefined` are optional. */
export type EventInput<E extends AnyEventDeclaration> = NonNullable<E['~types']>['input'];
/** The payload of event `E` as stored and read: validated, defaults applied. */
export type EventPayload<E extends AnyEventDeclaration> = NonNullable<E['~types']>['payload'];
/** The name of event `E`. */
export type EventName<E extends AnyEventDeclaration> = E['name'];

/**
 * Declares an event: its name and the fields of its payload, one Standard Schema per field
 * (zod, valibot, arktype …). A field whose schema accepts `undefined` may be left out.
 *
 * @throws DefinitionError (`definition_invalid`, `details.reactor` is `event:<name>`) when the name
 *   is empty, longer than {@link MAX_EVENT_NAME_LENGTH}, or holds white space or control
 *   characters, or when a field is not a Standard Schema.
 * @example
 * ```ts
 * const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number() });
 * await engine.send(orderPaid, { orderId: 'o-1', amount: 42 });
 * type Paid = EventPayload<typeof orderPaid>; // { orderId: string; amount: number }
 * ```
 */
export function event<const Name extends string, const F extends Fields>(
  name: Name,
  fields: F,
): EventDeclaration<Name, F> {
  const problem = eventNameProblem(name);
  if (problem !== undefined) throw new DefinitionError(`event name ${problem}`, `event:${String(name)}`);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    throw new DefinitionError(`event "${name}": the payload's fields must be an object of schemas`, `event:${name}`);
  for (const [field, schema] of Object.entries(fields))
    if (typeof (schema as Partial<Fields[string]> | undefined)?.['~standard']?.validate !== 'function')
      throw new DefinitionError(`event "${name}": field "${field}" is not a Standard Schema`, `event:${name}`);
  return Object.freeze({ kind: 'event', name, contract: compileContract(fields) });
}

/** True when `value` is an event declaration built by {@link event}. */
export function isEventDeclaration(value: unknown): value is AnyEventDeclaration {
  const v = value as Partial<AnyEventDeclaration> | null;
  return (
    typeof v === 'object' && v !== null && v.kind === 'event' && typeof v.name === 'string' && v.contract !== undefined
  );
}

/** What is wrong with `name` as an event name (empty, too long, white space or control characters), or undefined. */
export function eventNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'must be a non-empty string';
  if (name.length > MAX_EVENT_NAME_LENGTH) return `must be at most ${MAX_EVENT_NAME_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\s\u0000-\u001f\u007f]/.test(name)) return 'must not hold white space or control characters';
  return undefined;
}
