/**
 * Errors of a reactor's definition and of the values it is given: a definition that is not valid,
 * inputs or arguments that fail their contract, an argument that cannot be resolved.
 *
 * @module
 */

import { ErrorCode, type ErrorDetails, type FieldIssue } from '../error-codes.js';
import { issuesOf, messageOf, ReactorError, registerRevival } from './base.js';

/** A reactor or step definition is not valid; thrown when it is built. */
export class DefinitionError extends ReactorError<'definition_invalid'> {
  readonly reactor: string;
  readonly step: string | undefined;
  constructor(message: string, reactor: string, step?: string) {
    super(ErrorCode.Definition, message, { details: { reactor, ...(step === undefined ? {} : { step }) } });
    this.name = 'DefinitionError';
    this.reactor = reactor;
    this.step = step;
  }
}
registerRevival('DefinitionError', DefinitionError, [ErrorCode.Definition], (d) => ({
  reactor: d.reactor,
  step: d.step,
}));

/** Reactor inputs or step arguments failed their contract. Never retried. */
export class ValidationError extends ReactorError<
  'input_invalid' | 'arguments_invalid',
  Readonly<ErrorDetails['arguments_invalid']>
> {
  readonly issues: readonly FieldIssue[];
  constructor(
    code: typeof ErrorCode.InputInvalid | typeof ErrorCode.ArgumentsInvalid,
    message: string,
    issues: readonly FieldIssue[],
    details: Omit<ErrorDetails['arguments_invalid'], 'issues'> = {},
  ) {
    super(code, message, { details: { ...details, issues } });
    this.name = 'ValidationError';
    this.issues = issues;
  }
}
registerRevival('ValidationError', ValidationError, [ErrorCode.InputInvalid, ErrorCode.ArgumentsInvalid], issuesOf);

/** An argument source, path or transform threw. The step never started; never retried. */
export class ArgumentResolutionError extends ReactorError<'argument_resolution_failed'> {
  constructor(step: string, argument: string, cause: unknown) {
    super(
      ErrorCode.ArgumentResolution,
      `step "${step}": argument "${argument}" could not be resolved: ${messageOf(cause)}`,
      {
        cause,
        details: { step, argument },
      },
    );
    this.name = 'ArgumentResolutionError';
  }
}
registerRevival('ArgumentResolutionError', ArgumentResolutionError, [ErrorCode.ArgumentResolution]);
