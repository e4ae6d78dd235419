/**
 * `ScriptError`: a Redis script of the Redis backend answered with an error. It lives with the
 * adapter that runs the scripts, and registers its revival here, so `errorFromJSON` rebuilds it
 * as its own class in any process that loaded the Redis backend or the package's main entry
 * (which re-exports it).
 *
 * @module
 */
import { ReactorError, registerRevival } from '../../errors/base.js';

/**
 * A backend script answered with an error. `details.script` names it; `details.reason` is the
 * script's error code (e.g. `RX_ARG` for an invalid argument) or `redis` for a server error.
 */
export class ScriptError extends ReactorError<'script_failed'> {
  constructor(script: string, reason: string, message: string, cause?: unknown) {
    super('script_failed', `script ${script} failed (${reason}): ${message}`, { cause, details: { script, reason } });
    this.name = 'ScriptError';
  }
}
registerRevival('ScriptError', ScriptError, ['script_failed']);
