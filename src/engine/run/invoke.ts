/**
 * Direct invocation of a step definition from application code, coordinated like a step
 * of a run: arguments validated, declarations taken around the body in the fixed order and
 * released right after. No retries, no compensation, never a park.
 *
 * - Without a context it is an execution of its own (a fresh owner): it contends with every
 *   holder, waits each declaration's `wait`, then fails.
 * - With the `ctx` a step body received, it joins that execution: same owner (keys it holds are
 *   re-entered), same held-key registry and trace; any other key is contended for as usual.
 *
 * docs/decisions/021-direct-invocation.md.
 *
 * @module
 */
import { admit, type Admission } from '../../coordination/admit.js';
import type { WorkOutcome } from '../../coordination/holds.js';
import type { CoordinationScope } from '../../coordination/scope.js';
import type { Logger, StepContext } from '../../dsl/context.js';
import { checkedProgress } from './progress-book.js';
import { validateContract } from '../../dsl/contract.js';
import type { AnyStepDefinition, StepInvocation } from '../../dsl/step.js';
import { ErrorCode, HoldLostError, ReactorError, ValidationError } from '../../errors.js';
import { bindContext, runOfContext } from './contexts.js';
import type { EventHub } from '../model/events.js';
import { childLogger } from '../model/logger.js';
import type { Clock, Ids } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { EventDraft, RunState } from './run-state.js';
import { classify, invoke, type Body, type Classified } from './step-runner.js';

/** What a direct invocation needs from the engine. */
export interface InvokeDeps {
  readonly coordinator: Coordinator | undefined;
  readonly rateLimits: CoordinationScope['rateLimits'];
  readonly onReleased: CoordinationScope['onReleased'];
  readonly clock: Clock;
  readonly ids: Ids;
  readonly hub: EventHub;
  readonly logger: Logger;
}

/** Where the invocation runs: its label, its events, its admission. */
interface Site {
  readonly label: string;
  readonly reactor: string;
  readonly emit: (draft: EventDraft) => void;
  readonly admit: (abort: AbortController) => Promise<Admission>;
  readonly context: (signal: AbortSignal) => StepContext;
}

/** Runs `step` with `args`, alone or (with `ctx`) inside the execution that handed out `ctx`. */
export async function invokeStep(
  deps: InvokeDeps,
  step: AnyStepDefinition,
  args: unknown,
  ctx: StepContext | undefined,
): Promise<StepInvocation<unknown>> {
  const name = step.name ?? 'step';
  const run = ctx === undefined ? undefined : runOfContext(ctx);
  if (ctx !== undefined && run === undefined) {
    return {
      status: 'failed',
      error: new ReactorError(
        'invoke_context_unknown',
        `step "${name}": the ctx passed to invoke() was not handed out by a run of this process; pass the ctx your step body received`,
      ),
    };
  }
  const validated = await validateContract(step.contract, args ?? {});
  if (!validated.ok) {
    const summary = validated.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    return {
      status: 'failed',
      error: new ValidationError(
        ErrorCode.ArgumentsInvalid,
        `step "${name}" (invoked directly): invalid arguments (${summary})`,
        validated.issues,
        { step: name },
      ),
    };
  }
  const site = run && ctx ? joined(deps, run, ctx, step, validated.value) : alone(deps, name, validated.value, step);
  const abort = new AbortController();
  const follow = (): void => abort.abort(ctx?.signal.reason);
  if (ctx?.signal.aborted) follow();
  else ctx?.signal.addEventListener('abort', follow, { once: true });
  try {
    const admission = step.coordination.length === 0 ? undefined : await site.admit(abort);
    if (admission?.kind === 'refused') return { status: 'failed', error: admission.error };
    if (admission?.kind === 'halt') {
      site.emit({ type: 'step.skipped', step: site.label, reason: admission.reason, reactor: site.reactor });
      return { status: 'skipped', reason: admission.reason };
    }
    site.emit({ type: 'step.started', step: site.label, attempt: 1, reactor: site.reactor });
    const out = classify(await invoke(step.hooks.run as Body, validated.value, site.context(abort.signal)));
    await admission?.holds
      .release(outcomeOf(out))
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, step: site.label }, 'releasing step coordination failed; holds expire by TTL'),
      );
    return settle(site, out);
  } finally {
    ctx?.signal.removeEventListener('abort', follow);
  }
}

function outcomeOf(out: Classified): WorkOutcome {
  return out.kind === 'success' ? 'completed' : out.kind === 'failure' ? 'failed' : 'halted';
}

function settle(site: Site, out: Classified): StepInvocation<unknown> {
  const where = { step: site.label, reactor: site.reactor };
  switch (out.kind) {
    case 'success':
      site.emit({ type: 'step.succeeded', attempt: 1, ...where });
      return { status: 'completed', value: out.value };
    case 'skipped':
      site.emit({ type: 'step.skipped', reason: out.reason, ...where });
      return { status: 'skipped', reason: out.reason, value: out.value };
    case 'halt':
      site.emit({ type: 'step.halted', reason: out.reason, ...where });
      return { status: 'halted', reason: out.reason, ...(out.data === undefined ? {} : { data: out.data }) };
    case 'failure':
      site.emit({
        type: 'step.failed',
        attempt: 1,
        error: { name: out.error.name, message: out.error.message },
        started: true,
        ...where,
      });
      return { status: 'failed', error: out.error };
  }
}

/** Inside the execution of `ctx`: its owner, registry, tokens and trace. */
function joined(
  deps: InvokeDeps,
  run: RunState,
  ctx: StepContext,
  step: AnyStepDefinition,
  args: Record<string, unknown>,
): Site {
  const name = step.name ?? 'step';
  const label = `${ctx.step}>${name}`;
  const startId = `${run.executionId}:${label}:${deps.ids.executionId()}`;
  return {
    label,
    reactor: ctx.reactor,
    emit: (draft) => run.emit(draft),
    admit: (abort) =>
      run.admit(step.coordination, args, { reactor: ctx.reactor, step: label, abort, ownWaits: true, startId }),
    context: (signal) => bindContext({ ...ctx, step: label, signal, logger: run.stepLogger(label) }, run),
  };
}

/** An execution of its own: a fresh owner that contends with every holder. */
function alone(deps: InvokeDeps, name: string, args: Record<string, unknown>, step: AnyStepDefinition): Site {
  const executionId = deps.ids.executionId();
  const reactor = `(invoked) ${name}`;
  const heldKeys = new Set<string>();
  const fencingTokens = new Map<string, string>();
  const emit = (draft: EventDraft): void =>
    deps.hub.emit({ reactor, ...draft, executionId, rootExecutionId: executionId, at: deps.clock.now() });
  const logger = childLogger(deps.logger, { executionId, step: name });
  return {
    label: name,
    reactor,
    emit,
    admit: (abort) => {
      if (!deps.coordinator)
        return Promise.resolve({
          kind: 'refused',
          error: new ReactorError(
            'coordinator_missing',
            `step "${name}" declares coordination but the engine has no coordinator; pass createEngine({ coordinator })`,
          ),
        });
      return admit(step.coordination, args, {
        coordinator: deps.coordinator,
        clock: deps.clock,
        reactor,
        step: name,
        holder: { owner: executionId, executionId, reactor, step: name },
        startId: executionId,
        rateLimits: deps.rateLimits,
        heldKeys,
        fencingTokens,
        onReleased: deps.onReleased,
        emit: (event) => emit({ ...event, step: name } as unknown as EventDraft),
        onLost: (primitive, key) => abort.abort(new HoldLostError({ reactor, step: name, primitive, key })),
      });
    },
    context: (signal) => ({
      executionId,
      rootExecutionId: executionId,
      reactor,
      step: name,
      attempt: 1,
      signal,
      logger,
      heldKeys,
      progress: (data: unknown) =>
        emit({ type: 'step.progress', step: name, attempt: 1, data: checkedProgress(name, 1, data) }),
      fencingToken: (key) =>
        key === undefined
          ? fencingTokens.size === 1
            ? [...fencingTokens.values()][0]
            : undefined
          : fencingTokens.get(key),
    }),
  };
}
