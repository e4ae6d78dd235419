/**
 * Errors of schedules: a definition that is not valid, an id no schedule has.
 *
 * @module
 */

import { ErrorCode, type FieldIssue } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/**
 * A schedule's definition is not valid (code `schedule_invalid`): `details.field` names the
 * option at fault (`cron.pattern`, `cron.tz`, `every`, …), `details.reason` says why.
 */
export class ScheduleInvalidError extends ReactorError<'schedule_invalid'> {
  constructor(info: { schedule: string; field: string; reason: string; issues?: readonly FieldIssue[] }) {
    super(ErrorCode.ScheduleInvalid, `schedule "${info.schedule}": ${info.field} ${info.reason}`, {
      details: { ...info },
    });
    this.name = 'ScheduleInvalidError';
  }
}
registerRevival('ScheduleInvalidError', ScheduleInvalidError, [ErrorCode.ScheduleInvalid]);

/** No schedule has that id (code `schedule_not_found`). */
export class ScheduleNotFoundError extends ReactorError<'schedule_not_found'> {
  constructor(schedule: string) {
    super(ErrorCode.ScheduleNotFound, `no schedule "${schedule}"`, { details: { schedule } });
    this.name = 'ScheduleNotFoundError';
  }
}
registerRevival('ScheduleNotFoundError', ScheduleNotFoundError, [ErrorCode.ScheduleNotFound]);
