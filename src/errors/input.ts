/**
 * Errors of the options given to the API, thrown before anything is claimed or written: start
 * options, tags, runtime factory options, list filters.
 *
 * @module
 */

import { ErrorCode } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/**
 * A start option of `engine.start` or `engine.startMany` is not valid (code
 * `start_options_invalid`): a `delay` that is not a duration ≥ 0, an `at` that is not a valid
 * date or epoch time, both `delay` and `at`, a `priority` that is not an integer in
 * 1..2,097,151. Thrown before anything is validated, claimed or written.
 */
export class StartOptionsError extends ReactorError<'start_options_invalid'> {
  constructor(info: { option: string; value: string; entry?: number }, problem: string) {
    super(
      ErrorCode.StartOptionsInvalid,
      `${info.entry === undefined ? '' : `startMany entry ${info.entry}: `}start option ${info.option} ${problem}; got ${info.value}`,
      { details: { ...info } },
    );
    this.name = 'StartOptionsError';
  }
}
registerRevival('StartOptionsError', StartOptionsError, [ErrorCode.StartOptionsInvalid]);

/**
 * The `tags` of `engine.run`, `engine.start` or a `startMany` entry break a limit (code
 * `tags_invalid`; docs/limits.md): too many, a key or value too long, empty, or with characters a
 * tag may not hold. Thrown before anything is claimed or written; `details.tag` names the key.
 */
export class TagsInvalidError extends ReactorError<'tags_invalid'> {
  constructor(info: { tag: string; value: string; entry?: number }, problem: string) {
    super(
      ErrorCode.TagsInvalid,
      `${info.entry === undefined ? '' : `startMany entry ${info.entry}: `}${info.tag === 'tags' ? 'tags' : `tag ${JSON.stringify(info.tag)}`} ${problem}; got ${info.value}`,
      { details: { ...info } },
    );
    this.name = 'TagsInvalidError';
  }
}
registerRevival('TagsInvalidError', TagsInvalidError, [ErrorCode.TagsInvalid]);

/**
 * An option of a runtime factory (`createRedisRuntime`, `createEmbeddedEngine`, `createTestEngine`,
 * `createRedisBackend`, `createBullmqQueue`) is not valid, or not one that factory can honour
 * (code `runtime_option_invalid`): a `recordTtlMs` that is neither a positive integer nor
 * `Infinity`, a `recordTtlMs` beside a `store` of your own (set it on that store), a
 * `jobRetention` age or count out of range. Thrown before any connection opens or anything is
 * written; `details.option` names the option, `details.factory` the factory.
 */
export class RuntimeOptionError extends ReactorError<'runtime_option_invalid'> {
  constructor(info: { factory: string; option: string; value: string }, problem: string) {
    super(ErrorCode.RuntimeOptionInvalid, `${info.factory}: ${info.option} ${problem}; got ${info.value}`, {
      details: { ...info },
    });
    this.name = 'RuntimeOptionError';
  }
}
registerRevival('RuntimeOptionError', RuntimeOptionError, [ErrorCode.RuntimeOptionInvalid]);

/**
 * A filter of `engine.list` or `engine.listEvents` is not valid (code `list_filter_invalid`): a limit out of bounds, a
 * cursor this store did not hand out, a time range that is not one, an unknown status, or tags
 * that break the tag limits. `details.field` names the filter field.
 */
export class ListFilterError extends ReactorError<'list_filter_invalid'> {
  constructor(info: { field: string; value: string }, problem: string) {
    super(ErrorCode.ListFilterInvalid, `list filter ${info.field} ${problem}; got ${info.value}`, {
      details: { ...info },
    });
    this.name = 'ListFilterError';
  }
}
registerRevival('ListFilterError', ListFilterError, [ErrorCode.ListFilterInvalid]);
