/**
 * The base of every ts-reactor error and its JSON round trip: `ReactorError` (a stable `code`,
 * typed `details`, a `cause`), `errorToJSON` / `errorFromJSON`, the registry of the classes
 * `errorFromJSON` rebuilds (each class registers itself beside its declaration with
 * {@link registerRevival}), and the two errors the round trip itself needs: `RemoteError` (a
 * foreign error rebuilt from JSON) and `WrappedThrowError` (a non-Error value thrown).
 *
 * @module
 */

import { ErrorCode, type ErrorDetails, type FieldIssue } from '../error-codes.js';

const BRAND = Symbol.for('ts-reactor.error');

/** The JSON shape of a serialized error. */
export interface ErrorJSON {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: ErrorJSON;
  readonly stack?: string;
}

/**
 * The code a `ReactorError` may carry: an {@link ErrorCode}, or — on a {@link RemoteError} (or an
 * error from a newer version) rebuilt from JSON — the code of the foreign error it came from
 * (`ECONNREFUSED` …).
 */
export type AnyErrorCode = ErrorCode | (string & Record<never, never>);

/** The `details` of an error of code `C`: {@link ErrorDetails}`[C]`, or an untyped record when `C` is not one known code. */
export type DetailsOf<C extends AnyErrorCode> = string extends C
  ? Readonly<Record<string, unknown>>
  : C extends ErrorCode
    ? Readonly<ErrorDetails[C]>
    : Readonly<Record<string, unknown>>;

/** The options of a `ReactorError` of code `C`: a `cause`, and `details` (required when the code has required fields). */
export type ReactorErrorOptions<C extends AnyErrorCode> = {
  readonly cause?: unknown;
} & (OptionalDetails<C> extends true
  ? { readonly details?: ErrorDetails[C & ErrorCode] }
  : { readonly details: ErrorDetails[C & ErrorCode] });

type OptionalDetails<C extends AnyErrorCode> = [C & ErrorCode] extends [never]
  ? true
  : Record<never, never> extends ErrorDetails[C & ErrorCode]
    ? true
    : false;

/** A ts-reactor class {@link errorFromJSON} rebuilds: its prototype, its codes, and the fields it derives from `details`. */
interface Revivable {
  readonly prototype: ReactorError;
  readonly codes: readonly ErrorCode[] | 'any';
  readonly fields?: (details: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

const REVIVABLE = new Map<string, Revivable>();

/**
 * Makes {@link errorFromJSON} rebuild an error named `name` whose code is one of `codes` as an
 * instance of `type` (its constructor is not run); `fields` derives the instance fields the class
 * keeps beside `details` (`issues` …). Every ts-reactor error class calls it right after its
 * declaration, so a class is revivable once its module is loaded. `name` is spelled out, not
 * `type.name`: a minifier may rename classes, never these strings. Not part of the public API.
 *
 * @example
 * ```ts
 * registerRevival('CancelledError', CancelledError, ['cancelled']);
 * ```
 */
export function registerRevival(
  name: string,
  type: { readonly prototype: ReactorError },
  codes: Revivable['codes'],
  fields?: Revivable['fields'],
): void {
  REVIVABLE.set(name, { prototype: type.prototype, codes, ...(fields === undefined ? {} : { fields }) });
}

/** The `issues` field of a validation error, from the `details.issues` it carries; a `fields` of {@link registerRevival}. */
export function issuesOf(details: Readonly<Record<string, unknown>>): { issues: readonly FieldIssue[] } {
  return { issues: Array.isArray(details.issues) ? (details.issues as FieldIssue[]) : [] };
}

/**
 * Base class of every ts-reactor error. `code` is stable across versions: an {@link ErrorCode}
 * (constructing one with any other code does not compile). `details` holds the structured
 * fields of that code ({@link ErrorDetails}), typed on an error of a specific class
 * (`ContentionError` …) or one narrowed with `ReactorError.is(error, code)`.
 *
 * @example
 * ```ts
 * if (ReactorError.is(error, 'reactor_unknown')) console.log(error.details.reactor);
 * ```
 */
export class ReactorError<
  C extends AnyErrorCode = AnyErrorCode,
  D extends Readonly<Record<string, unknown>> = DetailsOf<C>,
> extends Error {
  readonly [BRAND] = true;
  readonly code: C;
  readonly details: D;

  /** @param code One of {@link ErrorCode}. */
  constructor(
    code: C & ErrorCode,
    message: string,
    ...[options]: OptionalDetails<C> extends true
      ? [options?: ReactorErrorOptions<C>]
      : [options: ReactorErrorOptions<C>]
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ReactorError';
    this.code = code;
    this.details = Object.freeze({ ...(options?.details ?? {}) }) as D;
  }

  /** True for any ts-reactor error, also across realms and after a JSON round trip. */
  static is(value: unknown): value is ReactorError;
  /** True for a ts-reactor error of `code` (its `details` are then typed by {@link ErrorDetails}). */
  static is<C extends ErrorCode>(value: unknown, code: C): value is ReactorError<C>;
  static is(value: unknown, code?: string): boolean {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[BRAND] === true &&
      (code === undefined || (value as { code?: unknown }).code === code)
    );
  }

  /** Serializable form; see {@link errorFromJSON}. */
  toJSON(): ErrorJSON {
    return errorToJSON(this);
  }
}
registerRevival('ReactorError', ReactorError, 'any');

/** A non-Error value was thrown from user code; the value is kept in `details.value`. */
export class WrappedThrowError extends ReactorError<'wrapped_throw'> {
  constructor(value: unknown) {
    super(ErrorCode.Wrapped, `a non-Error value was thrown: ${safeString(value)}`, {
      details: { value: jsonSafe(value) },
    });
    this.name = 'WrappedThrowError';
  }
}
registerRevival('WrappedThrowError', WrappedThrowError, [ErrorCode.Wrapped]);

/**
 * An error rebuilt from JSON whose original class is not a ts-reactor class. It serializes back
 * to exactly the JSON it was built from, so repeated round trips are stable.
 */
export class RemoteError extends ReactorError<AnyErrorCode, Readonly<ErrorDetails['remote_error']>> {
  /** The JSON this error was rebuilt from. */
  readonly original: ErrorJSON;
  constructor(json: ErrorJSON) {
    // The original's code is kept as is, known or not (`code` is typed to allow any string here).
    super((json.code ?? ErrorCode.Remote) as ErrorCode, json.message, {
      details: { ...(json.details ?? {}), originalName: json.name },
      cause: json.cause === undefined ? undefined : errorFromJSON(json.cause),
    });
    this.name = json.name;
    this.original = json;
    if (json.stack !== undefined) this.stack = json.stack;
  }
}

/** Turns anything thrown into an Error (non-Error values are wrapped). */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new WrappedThrowError(value);
}

/** Serializes any error (ts-reactor or not) to {@link ErrorJSON}. */
export function errorToJSON(error: unknown, depth = 0): ErrorJSON {
  if (error instanceof RemoteError) return error.original;
  const err = toError(error);
  const json: { -readonly [K in keyof ErrorJSON]: ErrorJSON[K] } = { name: err.name, message: err.message };
  if (ReactorError.is(err)) {
    json.code = err.code;
    if (Object.keys(err.details).length > 0) json.details = jsonSafe(err.details) as Record<string, unknown>;
  } else if (typeof (err as unknown as { code?: unknown }).code === 'string') {
    json.code = (err as unknown as { code: string }).code;
  }
  if (err.stack !== undefined) json.stack = err.stack;
  if (err.cause !== undefined && depth < 8) json.cause = errorToJSON(err.cause, depth + 1);
  return json;
}

/**
 * Rebuilds an error from {@link errorToJSON}'s output. `code`, `message`, `details`, `stack` and
 * `cause` survive. A ts-reactor error comes back as its own class (`instanceof ContentionError`
 * holds after a trip through a record or another process) when its `name` and `code` match that
 * class, registered by {@link registerRevival} beside it (the package's main entry loads every
 * class); anything else becomes a {@link RemoteError} with the original name.
 *
 * @example
 * ```ts
 * const back = errorFromJSON(JSON.parse(JSON.stringify(error)));
 * if (back instanceof ContentionError) console.log(back.details.key);
 * ```
 */
export function errorFromJSON(json: ErrorJSON): ReactorError {
  const kind = REVIVABLE.get(json.name);
  if (
    kind === undefined ||
    json.code === undefined ||
    !(kind.codes === 'any' || (kind.codes as readonly string[]).includes(json.code))
  )
    return new RemoteError(json);
  return revive(kind, json);
}

/** Builds an instance of `kind` without running its constructor (each takes different arguments). */
function revive(kind: Revivable, json: ErrorJSON): ReactorError {
  const error = Object.create(kind.prototype) as ReactorError;
  const details = Object.freeze({ ...(json.details ?? {}) });
  const hidden = (value: unknown): PropertyDescriptor => ({
    value,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  Object.defineProperty(error, 'message', hidden(json.message));
  Object.assign(error, { [BRAND]: true, code: json.code, details, name: json.name, ...kind.fields?.(details) });
  if (json.cause !== undefined) Object.defineProperty(error, 'cause', hidden(errorFromJSON(json.cause)));
  if (json.stack !== undefined) Object.defineProperty(error, 'stack', hidden(json.stack));
  else Error.captureStackTrace(error, errorFromJSON);
  return error;
}

/** The message of anything thrown. */
export function messageOf(value: unknown): string {
  return value instanceof Error ? value.message : safeString(value);
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}
