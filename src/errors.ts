/**
 * Every error ts-reactor produces, as data: a stable `code`, a `cause`, structured fields and a
 * JSON round trip (`toJSON()` / {@link errorFromJSON}), because errors cross process boundaries.
 * The classes live by category in `errors/` (see its ARCHITECTURE.md), each registering its
 * revival beside it; a backend's own errors live in its adapter (`ScriptError` in
 * `storage/redis/`, re-exported by the package's main entry).
 *
 * @module
 */

export * from './error-codes.js';
export {
  errorFromJSON,
  errorToJSON,
  messageOf,
  ReactorError,
  RemoteError,
  toError,
  WrappedThrowError,
  type AnyErrorCode,
  type DetailsOf,
  type ErrorJSON,
  type ReactorErrorOptions,
} from './errors/base.js';
export * from './errors/definition.js';
export * from './errors/input.js';
export * from './errors/schedules.js';
export * from './errors/step.js';
export * from './errors/time.js';
export * from './errors/record.js';
export * from './errors/backend.js';
export * from './errors/coordination.js';
export * from './errors/background.js';
export * from './errors/execution.js';
export * from './errors/interrupt.js';
export * from './errors/events.js';
