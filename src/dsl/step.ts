/**
 * Reusable step definitions: a step with its own input contract, hooks and retry policy, placed
 * in any number of reactors and extended by derived steps.
 *
 * @module
 */
import type { StepContext } from './context.js';
import { compileContract, type Contract, type ContractInput, type ContractOutput, type Fields } from './contract.js';
import { stepCoordinationSpecs, type CoordinationSpec, type StepCoordinationOptions } from './coordination.js';
import type { RetryOptions } from './retry.js';
import type { StepValue } from './signals.js';
import { stepTimeoutMs, type StepTimeoutOptions } from './step-timeout.js';

/** A step's hooks, untyped (the builders keep the types). */
export interface StepHooks {
  readonly run: (args: never, ctx: StepContext) => unknown;
  readonly compensate?: ((reason: Error, args: never, ctx: StepContext) => unknown) | undefined;
  readonly undo?: ((result: never, args: never, ctx: StepContext) => unknown) | undefined;
}

/** The hooks of a step whose arguments are `A` and whose body returns `R`. */
export interface StepHookOptions<A, R> {
  /** The body. Return a value (success), a signal, or throw (failure). */
  run(args: A, ctx: StepContext): R | Promise<R>;
  /** Runs when this step's body started and the step failed (after its last attempt). */
  compensate?(reason: Error, args: A, ctx: StepContext): unknown;
  /** Runs when the step completed and a later step failed (rollback, newest first). */
  undo?(result: StepValue<R>, args: A, ctx: StepContext): unknown;
}

/** Options of {@link defineStep}. */
export interface DefineStepOptions<F extends Fields, R>
  extends StepHookOptions<ContractOutput<F>, R>, StepCoordinationOptions<ContractOutput<F>>, StepTimeoutOptions {
  /** A default name, used in messages and when the step runs on its own. */
  readonly name?: string;
  /** The input contract: one Standard Schema per argument. */
  readonly input: F;
  /** Arguments whose values are secrets. */
  readonly redact?: readonly (keyof F & string)[];
  /** Retry policy (a reactor may override it where it places the step). */
  readonly retry?: RetryOptions;
}

/** Options of {@link StepDefinition.extend}: added fields and replaced hooks. */
export interface ExtendStepOptions<F extends Fields, F2 extends Fields, R, R2>
  extends StepCoordinationOptions<ContractOutput<F & F2>>, StepTimeoutOptions {
  readonly name?: string;
  readonly input?: F2;
  readonly redact?: readonly (keyof (F & F2) & string)[];
  readonly retry?: RetryOptions;
  run?(args: ContractOutput<F & F2>, ctx: StepContext): R2 | Promise<R2>;
  compensate?(reason: Error, args: ContractOutput<F & F2>, ctx: StepContext): unknown;
  undo?(result: StepValue<[R2] extends [never] ? R : R2>, args: ContractOutput<F & F2>, ctx: StepContext): unknown;
}

/** A reusable step: validated arguments, hooks, retry policy. */
export interface StepDefinition<F extends Fields = Fields, R = unknown> {
  readonly kind: 'step-definition';
  readonly name: string | undefined;
  readonly contract: Contract;
  readonly hooks: StepHooks;
  readonly retry: RetryOptions | undefined;
  /** How long one attempt of the body may run, in ms (validated `timeout`); undefined: no limit. */
  readonly timeoutMs: number | undefined;
  /** Step-scoped coordination declarations (see {@link StepCoordinationOptions}). */
  readonly coordination: readonly CoordinationSpec[];
  /**
   * A derived step: it also inherits the coordination declarations; redeclaring a primitive
   * replaces the inherited one.
   *
   * A derived step: it inherits this step's contract, hooks, retry policy and timeout, adds the
   * given fields and replaces the given hooks (and the timeout, when given).
   */
  extend<F2 extends Fields = {}, R2 = never>(
    options: ExtendStepOptions<F, F2, R, R2>,
  ): StepDefinition<F & F2, [R2] extends [never] ? R : R2>;
  /**
   * Runs this step directly from application code, coordinated: its arguments are validated,
   * its declarations taken around the body and released right after (no retries, no
   * compensation). Without `ctx` it is an execution of its own: it contends with every holder,
   * waits each declaration's `wait`, then fails — it never parks. With the `ctx` a step body
   * received, it joins that execution: keys the execution holds are re-entered, any other key
   * is contended for as usual. See docs/coordination.md, "Invoking a step directly".
   *
   * @example
   * ```ts
   * const out = await charge.invoke({ accountId: 'a-1', amountCents: 500 }, { engine });
   * if (out.status === 'completed') console.log(out.value);
   * ```
   */
  invoke(args: ContractInput<F>, options: InvokeOptions): Promise<StepInvocation<StepValue<R>>>;
  /** Phantom: what a caller passes and what the step produces. */
  readonly '~types'?: {
    readonly input: ContractInput<F>;
    readonly args: ContractOutput<F>;
    readonly output: StepValue<R>;
  };
}

/** How a direct invocation ({@link StepDefinition.invoke}) ended. Outcomes are returned, never thrown. */
export type StepInvocation<V> =
  | { readonly status: 'completed'; readonly value: V }
  /** A marked period (`period`), a failed strict ordered chain, or the body returned `skip(...)`. */
  | { readonly status: 'skipped'; readonly reason: string; readonly value?: unknown }
  | { readonly status: 'halted'; readonly reason: string; readonly data?: unknown }
  /** Invalid arguments, an uncomputable key, contention after `wait`, or the body failed. */
  | { readonly status: 'failed'; readonly error: Error };

/** Runs step definitions directly; an engine is one (`createEngine`, `createEmbeddedEngine`). */
export interface StepInvoker {
  /** See {@link StepDefinition.invoke}. */
  invokeStep(
    step: AnyStepDefinition,
    args: unknown,
    options?: { readonly ctx?: StepContext | undefined },
  ): Promise<StepInvocation<unknown>>;
}

/** Options of {@link StepDefinition.invoke}. */
export interface InvokeOptions {
  /** The engine whose coordinator (and event stream) the invocation uses. */
  readonly engine: StepInvoker;
  /** The context a step body received: the invocation joins that execution. */
  readonly ctx?: StepContext | undefined;
}

/** Any step definition. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the variance of F and R must not matter here
export type AnyStepDefinition = StepDefinition<any, any>;

/**
 * Defines a reusable step with its own input contract.
 *
 * @example
 * ```ts
 * const charge = defineStep({
 *   input: { accountId: z.string(), amount: z.number().int().positive(), currency: z.string().default('EUR') },
 *   retry: { maxAttempts: 3, backoff: 'exponential', baseDelay: '200ms' },
 *   run: async ({ accountId, amount, currency }) => psp.charge(accountId, amount, currency),
 *   undo: async (charge) => psp.refund(charge.id),
 * });
 * ```
 */
export function defineStep<const F extends Fields, R>(options: DefineStepOptions<F, R>): StepDefinition<F, R> {
  const coordination = stepCoordinationSpecs({ reactor: '', step: options.name }, options);
  return build(
    options.name,
    compileContract(options.input, options.redact ?? []),
    pickHooks(options),
    { retry: options.retry, timeoutMs: stepTimeoutMs(options.timeout, { reactor: '', step: options.name }) },
    coordination,
  );
}

function pickHooks(options: Partial<StepHooks>, base?: StepHooks): StepHooks {
  const run = options.run ?? base?.run;
  if (typeof run !== 'function') throw new TypeError('a step definition needs a run function');
  return Object.freeze({ run, compensate: options.compensate ?? base?.compensate, undo: options.undo ?? base?.undo });
}

/** A definition's retry policy and timeout, as declared. */
interface Limits {
  readonly retry: RetryOptions | undefined;
  readonly timeoutMs: number | undefined;
}

function build<F extends Fields, R>(
  name: string | undefined,
  contract: Contract,
  hooks: StepHooks,
  limits: Limits,
  coordination: readonly CoordinationSpec[],
): StepDefinition<F, R> {
  const { retry, timeoutMs } = limits;
  const definition: StepDefinition<F, R> = {
    kind: 'step-definition',
    name,
    contract,
    hooks,
    retry,
    timeoutMs,
    coordination,
    extend(options) {
      const fields = { ...contract.fields, ...(options.input ?? {}) };
      const redact = options.redact ?? contract.redact;
      const derivedName = options.name ?? name;
      const derived = stepCoordinationSpecs({ reactor: '', step: derivedName }, options, coordination);
      return build(
        derivedName,
        compileContract(fields, redact),
        pickHooks(options as Partial<StepHooks>, hooks),
        {
          retry: options.retry ?? retry,
          timeoutMs: stepTimeoutMs(options.timeout, { reactor: '', step: derivedName }) ?? timeoutMs,
        },
        derived,
      );
    },
    invoke: (args, options) =>
      options.engine.invokeStep(definition, args, { ctx: options.ctx }) as Promise<StepInvocation<StepValue<R>>>,
  };
  return Object.freeze(definition);
}

/** True when `value` is a step definition. */
export function isStepDefinition(value: unknown): value is AnyStepDefinition {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'step-definition';
}
