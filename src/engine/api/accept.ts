/**
 * The prefix `engine.run` and `engine.start` share: register the reactor, validate the input,
 * claim the idempotency key (a repeat answers as a replay), file the `cancelOn` registrations,
 * then run the accepted execution.
 *
 * @module
 */
import { validateContract } from '../../dsl/contract.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { invalidInput } from '../execution/execute.js';
import { inputShapeIssue } from '../model/input-shape.js';
import { checkTags } from '../model/tags.js';
import type { RunResult } from '../model/results.js';
import type { Ids } from '../../ports/clock.js';
import type { EventCancels } from './event-cancels.js';
import type { Accepted, ClaimStatus, IdempotencyClaims } from './idempotency.js';
import type { ReactorRegistry } from './registry.js';
import type { InternalRunOptions, RunOptions } from './types.js';

/** What {@link accept} needs from the engine. */
export interface AcceptDeps {
  readonly registry: ReactorRegistry;
  readonly ids: Ids;
  readonly claims: IdempotencyClaims;
  /** Files the `cancelOn` registrations of each accepted execution before its first record. */
  readonly eventCancels: EventCancels;
}

/**
 * Checks the run's tags (`TagsInvalidError`, thrown), registers `reactor`, gives the run its execution id, validates `input` (an invalid one fails the
 * run at once) and, with an idempotency key, claims it (see {@link IdempotencyClaims.claim}); then
 * runs `body` with the accepted execution. `first` is the status of its first record.
 */
export async function accept(
  deps: AcceptDeps,
  reactor: AnyReactorDefinition,
  input: unknown,
  options: RunOptions & InternalRunOptions,
  first: ClaimStatus,
  body: (accepted: Accepted) => Promise<RunResult>,
): Promise<RunResult> {
  const tags = checkTags(options.tags); // bad tags throw before anything is registered or written
  deps.registry.register(reactor);
  const executionId = deps.ids.executionId();
  // Too deep or cyclic: refused before the contract, which could overflow the stack on it.
  const shape = inputShapeIssue(input);
  if (shape) return invalidInput(reactor, executionId, [shape]);
  const validated = await validateContract(reactor.contract, input ?? {});
  if (!validated.ok) return invalidInput(reactor, executionId, validated.issues);
  const key = options.idempotencyKey;
  const accepted: Accepted = {
    executionId,
    input: validated.value,
    key,
    retryOf: options.retryOf,
    links: options.retryTrace === undefined ? undefined : [options.retryTrace],
    tags,
  };
  // Registered before the body writes the first record: an event accepted from then on finds it (decision 152).
  const registered = async (a: Accepted): Promise<RunResult> => {
    await deps.eventCancels.register(reactor, a.executionId, a.input);
    return body(a);
  };
  if (key === undefined) return registered(accepted);
  return deps.claims.claim(reactor, accepted, key, first, registered);
}
