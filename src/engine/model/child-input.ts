/**
 * A child reactor's input as the step that runs it (compose, a map of reactors, an
 * `asyncReactor`) hands it over: validated against the child's contract, defaults applied.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import { ErrorCode, ValidationError } from '../../errors.js';

/** Validates a child reactor's input (contract defaults applied); throws a {@link ValidationError} naming the step. */
export async function childInput(
  child: AnyReactorDefinition,
  raw: Record<string, unknown>,
  path: string,
): Promise<Record<string, unknown>> {
  const outcome = await validateContract(child.contract, raw);
  if (outcome.ok) return outcome.value;
  const summary = outcome.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  throw new ValidationError(
    ErrorCode.ArgumentsInvalid,
    `step "${path}": invalid input for reactor "${child.name}" (${summary})`,
    outcome.issues,
    { step: path, reactor: child.name },
  );
}
