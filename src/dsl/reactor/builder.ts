/**
 * The reactor builder: an immutable chain that adds each step's result type to a map, so later
 * steps' arguments, paths and key functions are checked by the compiler. Each method checks what
 * it is given, makes one node of the graph (`nodes.ts`) and returns a new builder; `build` and
 * `returns` validate the whole graph (`validation.ts`) and freeze it.
 *
 * @module
 */
import { DefinitionError } from '../../errors.js';
import { sources, type Arg } from '../args.js';
import {
  compileContract,
  type Contract,
  type ContractInput,
  type ContractOptions,
  type ContractOutput,
  type Fields,
} from '../contract.js';
import type { MapResult } from '../map-result.js';
import { fingerprintOf } from '../fingerprint.js';
import { versionOptions } from '../versions.js';
import {
  lockSpec,
  orderedLockSpec,
  periodSpec,
  rateLimitSpec,
  semaphoreSpec,
  severalSpecs,
  stepCoordinationSpecs,
  withSpec,
  withSpecs,
  type CoordinationKind,
  type CoordinationSpec,
  type LockOptions,
  type OneOrMany,
  type OrderedLockOptions,
  type PeriodOptions,
  type RateLimitOptions,
  type SemaphoreOptions,
} from '../coordination.js';
import { interruptSpec, type PayloadOf, type PayloadSchema } from '../interrupt-spec.js';
import { asyncChildRefusal, asyncUndoRefusal, type AsyncReactorOptions } from '../async.js';
import { toRetryPolicy } from '../retry.js';
import type { StepValue } from '../signals.js';
import { isStepDefinition, type AnyStepDefinition, type StepDefinition } from '../step.js';
import { stepTimeoutMs } from '../step-timeout.js';
import { sleepSpec, type SleepOptions, type SleepResult } from '../sleep.js';
import type { AnyEventDeclaration, EventPayload } from '../event.js';
import { waitForEventSpec } from '../wait-for-event.js';
import { deadlineOf, reactorDeadlineMs } from '../deadline.js';
import {
  cancelOnSpec,
  checkCancelOns,
  type CancelOnOptions,
  type CancelOnPayload,
  type CancelOnSpec,
} from '../cancel-on.js';
import { failureFields, onFailureOf } from '../on-failure.js';
import { triggerSpec, type TriggerOptions, type TriggerPayload, type TriggerSpec } from '../trigger.js';
import { toMermaid } from './drawing.js';
import type {
  AnyReactorDefinition,
  GraphNode,
  InputOf,
  MapElement,
  OutputOf,
  ReactorDefinition,
  StepNode,
} from './nodes.js';
import {
  DEFAULT_FAN_OUT_BATCH,
  DEFAULT_MAP_MAX_ELEMENTS,
  type AsyncStepOptions,
  type BackgroundDeclaration,
  type ElementOutput,
  type FreshName,
  type InlineStepOptions,
  type InterruptOptions,
  type MapOptions,
  type NoArgs,
  type PlacementOptions,
  type ReactorOptions,
  type StepArgs,
  type WaitForEventOptions,
  type MatchOnChecked,
  type StepPlacementOptions,
} from './options.js';
import { interruptPaths, sleepPaths } from './paths.js';
import { validateGraph } from './validation.js';
import { dependenciesOf, resolveWiring } from './wiring.js';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

declare module './nodes.js' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats every type parameter
  interface ReactorDefinition<Name extends string, In, I, S, O, G> {
    /**
     * A builder for a derived reactor: it inherits the input contract, the steps and the
     * coordination declarations; redeclaring a primitive overrides the inherited one. Finish it
     * with `.returns()` or `.build()`.
     */
    extend<N2 extends string = Name>(name?: N2): ReactorBuilder<N2, In, I, S, G>;
  }
}

interface BuilderState {
  readonly name: string;
  readonly options: ReactorOptions;
  readonly contract: Contract;
  readonly nodes: readonly GraphNode[];
  readonly coordination: readonly CoordinationSpec[];
  readonly background?: BackgroundDeclaration<Record<string, unknown>> | undefined;
  /** The `.on` declarations so far (absent: none). */
  readonly triggers?: readonly TriggerSpec[] | undefined;
  /** The `cancelOn` declarations, in the order declared. */
  readonly cancelOn: readonly CancelOnSpec[];
}

/** The reactor builder. Every method returns a new builder; none mutates. */
export class ReactorBuilder<Name extends string, In, I, S, G = {}> {
  readonly #state: BuilderState;

  /** @internal use {@link reactor}. */
  constructor(state: BuilderState) {
    this.#state = state;
  }

  /** Declares the reactor's input contract (one Standard Schema per field). */
  input<const F extends Fields>(
    fields: F,
    options: ContractOptions<F> = {},
  ): ReactorBuilder<Name, ContractInput<F>, ContractOutput<F>, S, G> {
    if ((this.#state.triggers ?? []).length > 0)
      this.#fail(
        undefined,
        'declares its input after .on(...); declare .input(...) first, so each trigger is checked against it',
      );
    return new ReactorBuilder({ ...this.#state, contract: compileContract(fields, options.redact ?? []) });
  }

  /**
   * Declares an exclusive lock on the whole run: one execution at a time per key. Re-entrant
   * for the same root execution; renewed while held; each acquisition gets a fencing token.
   */
  withLock(options: LockOptions<I>): ReactorBuilder<Name, In, I, S, G> {
    return this.#coordinate(lockSpec({ reactor: this.#state.name }, options));
  }

  /**
   * Declares a semaphore: at most `limit` runs at a time per key, each slot a lease. `limit` may
   * be a function of the input. A list declares several (different keys), all taken or none.
   */
  withSemaphore(options: OneOrMany<SemaphoreOptions<I>>): ReactorBuilder<Name, In, I, S, G> {
    const where = { reactor: this.#state.name };
    return this.#coordinateAll('semaphore', severalSpecs(where, 'withSemaphore', options, semaphoreSpec));
  }

  /**
   * Declares a rate limit on run starts: exact sliding windows, all charged or none. A window's
   * `limit` may be a function of the input. A list declares several (different keys), all
   * charged or none.
   */
  withRateLimit(options: OneOrMany<RateLimitOptions<I>>): ReactorBuilder<Name, In, I, S, G> {
    const where = { reactor: this.#state.name };
    return this.#coordinateAll('rate_limit', severalSpecs(where, 'withRateLimit', options, rateLimitSpec));
  }

  /** Declares once-per-period: a run whose bucket is already marked halts (reason `period`) and runs no step. */
  withPeriod(options: PeriodOptions<I>): ReactorBuilder<Name, In, I, S, G> {
    return this.#coordinate(periodSpec({ reactor: this.#state.name }, options));
  }

  /** Declares an ordered lock: runs of one key pass one at a time, in the order `run` accepted them. */
  withOrderedLock(options: OrderedLockOptions<I>): ReactorBuilder<Name, In, I, S, G> {
    return this.#coordinate(orderedLockSpec({ reactor: this.#state.name }, options));
  }

  /**
   * Starts the reactor when `event` is sent (`engine.send`): for each sent event of that name
   * whose `match` passes (every one without `match`), one background execution (as `engine.start`)
   * with `input(payload)`, exactly once per event and reactor — also across processes and when
   * the event is sent again (docs/events.md, "Starting a reactor on an event"). `event` is a
   * declaration (the payload is then typed by its schema) or a name (`unknown` payload). `input`
   * must return what the reactor's run accepts. One `.on` per event name; declare it after `.input`.
   *
   * @throws DefinitionError when the event is not a declaration or an event name, an option is
   *   unknown or not a function, `input` is missing, or the reactor declares `.on` of that event twice.
   * @example
   * ```ts
   * const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number() });
   * const fulfil = reactor('fulfil')
   *   .input({ orderId: z.string() })
   *   .on(orderPaid, { input: (e) => ({ orderId: e.orderId }), match: (e) => e.amount > 0 })
   *   .step('ship', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => orderId })
   *   .build();
   * ```
   */
  on<E extends AnyEventDeclaration | string>(
    event: E,
    options: TriggerOptions<TriggerPayload<E>, In>,
  ): ReactorBuilder<Name, In, I, S, G> {
    const spec = triggerSpec(this.#state.name, event, options);
    const triggers = this.#state.triggers ?? [];
    if (triggers.some((t) => t.event === spec.event))
      this.#fail(undefined, `declares .on("${spec.event}") twice; keep one, with a match that covers both cases`);
    return new ReactorBuilder({ ...this.#state, triggers: [...triggers, spec] });
  }

  /**
   * Runs the reactor in a background worker: entirely (`'all'`), or from a hand-off point
   * after / before a named step (declared earlier). At most one declaration per reactor.
   */
  background(declaration: BackgroundDeclaration<S>): ReactorBuilder<Name, In, I, S, G> {
    const d = declaration as BackgroundDeclaration<Record<string, unknown>>;
    if (this.#state.background !== undefined) this.#fail(undefined, 'declares background twice; keep one declaration');
    const valid = d === 'all' || (typeof d === 'object' && d !== null && 'after' in d !== 'before' in d);
    if (!valid) this.#fail(undefined, "background takes 'all', { after: step } or { before: step }");
    if (d !== 'all') {
      const step = 'after' in d ? d.after : d.before;
      if (!this.#state.nodes.some((n) => n.name === step))
        this.#fail(undefined, `background hand-off names unknown step "${String(step)}"; declare the step first`);
    }
    return new ReactorBuilder({ ...this.#state, background: d });
  }

  /**
   * Cancels an unfinished execution of this reactor when a matching event is sent: it is rolled
   * back as `engine.cancel` does (completed steps undone, newest first), wherever it is — running
   * here or in a worker, parked, sleeping, paused or queued (docs/events.md#cancelling-on-an-event).
   * `matchOn` names payload fields that must equal the execution's input fields of the same
   * names (the index an event is looked up by); `match` is a final check on the payload and the
   * input. Several declarations may name different events.
   *
   * @throws DefinitionError (`definition_invalid`) for an invalid event name, an event declared
   *   twice, a `matchOn` field missing from the event's payload or (at `build`) not a required
   *   input field, or a `match` that is not a function.
   * @example
   * ```ts
   * const orderCancelled = event('order.cancelled', { orderId: z.string(), reason: z.string() });
   * reactor('fulfil')
   *   .input({ orderId: z.string() })
   *   .cancelOn(orderCancelled, { matchOn: ['orderId'], match: (e) => e.reason !== 'test' })
   * ```
   */
  cancelOn<const E extends AnyEventDeclaration | string>(
    event: E,
    options?: CancelOnOptions<CancelOnPayload<E>, I>,
  ): ReactorBuilder<Name, In, I, S, G> {
    const spec = cancelOnSpec(this.#state.name, this.#state.cancelOn, event, options);
    return new ReactorBuilder({ ...this.#state, cancelOn: [...this.#state.cancelOn, spec] });
  }

  #coordinate(spec: CoordinationSpec): ReactorBuilder<Name, In, I, S, G> {
    return new ReactorBuilder({ ...this.#state, coordination: withSpec(this.#state.coordination, spec) });
  }

  #coordinateAll(kind: CoordinationKind, specs: readonly CoordinationSpec[]): ReactorBuilder<Name, In, I, S, G> {
    return new ReactorBuilder({ ...this.#state, coordination: withSpecs(this.#state.coordination, kind, specs) });
  }

  /** Adds a reusable step definition, wired to this reactor's inputs and results. */
  step<const N extends string, F extends Fields, R>(
    name: FreshName<N, S>,
    definition: StepDefinition<F, R>,
    options?: StepPlacementOptions<I, S, ContractInput<F>, StepValue<R>>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: StepValue<R> }>, G & { [K in N]: ContractOutput<F> }>;
  /** Adds an inline step. */
  step<const N extends string, R, A = NoArgs>(
    name: FreshName<N, S>,
    options: InlineStepOptions<I, S, A, R>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: StepValue<R> }>, G & { [K in N]: StepArgs<I, A> }>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- implementation signature of the typed overloads above
  step(name: string, first: any, placement?: any): any {
    const node = isStepDefinition(first)
      ? this.#placeDefinition(name, first, placement ?? {})
      : this.#inline(name, first as InlineStepOptions<never, never, never, unknown>);
    return this.#with(node);
  }

  /**
   * Adds a step whose body runs in **its own background job** while the run goes on
   * (`docs/async.md`). Its arguments are resolved and its step-level coordination is taken in
   * the worker that runs it; a step that reads its result waits for it (in-process: at most
   * `background.asyncWaitMs`) or parks its worker. It has `compensate` (run once, in its own
   * job, after its last attempt failed) but no `undo`: the dispatcher's rollback never undoes it.
   */
  asyncStep<const N extends string, F extends Fields, R>(
    name: FreshName<N, S>,
    definition: StepDefinition<F, R>,
    options?: PlacementOptions<I, S, ContractInput<F>>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: StepValue<R> }>, G & { [K in N]: ContractOutput<F> }>;
  /** Adds an inline async step (see above). */
  asyncStep<const N extends string, R, A = NoArgs>(
    name: FreshName<N, S>,
    options: AsyncStepOptions<I, S, A, R>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: StepValue<R> }>, G & { [K in N]: StepArgs<I, A> }>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- implementation signature of the typed overloads above
  asyncStep(name: string, first: any, placement?: any): any {
    if (!isStepDefinition(first) && (first as { undo?: unknown } | undefined)?.undo !== undefined)
      this.#fail(name, asyncUndoRefusal(name));
    const node = isStepDefinition(first)
      ? this.#placeDefinition(name, first, placement ?? {})
      : this.#inline(name, first as InlineStepOptions<never, never, never, unknown>);
    return this.#with({ ...node, kind: 'async-step' });
  }

  /**
   * Dispatches another reactor as an **independent child execution** in the background, linked
   * to this one by `parentId` (`docs/async.md`). Its input is validated here, before anything is
   * queued; a step that reads its result receives the child's real outcome. A failure's rollback
   * leaves it alone; a cancel of this execution (an operator's, a cascade, its deadline) cancels
   * the child first while it is unfinished, unless `cancelChildren: false`.
   */
  asyncReactor<const N extends string, C extends AnyReactorDefinition>(
    name: FreshName<N, S>,
    child: C,
    options: AsyncReactorOptions<PlacementOptions<I, S, InputOf<C>>> = {},
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: OutputOf<C> }>, G> {
    const refusal = asyncChildRefusal(this.#state.name, name, child);
    if (refusal !== undefined) this.#fail(name, refusal);
    const args = resolveWiring(options.args);
    const waitFor = [...(options.waitFor ?? [])] as string[];
    return this.#with({
      kind: 'async-reactor',
      name,
      reactor: child,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      ...(options.cancelChildren === false ? { cancelChildren: false } : {}),
    }) as never;
  }

  /** Runs another reactor inline as one step of this execution (its undo replays the child's undos). */
  compose<const N extends string, C extends AnyReactorDefinition>(
    name: FreshName<N, S>,
    child: C,
    options: PlacementOptions<I, S, InputOf<C>> = {},
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: OutputOf<C> }>, G> {
    const args = resolveWiring(options.args);
    const waitFor = [...(options.waitFor ?? [])] as string[];
    return this.#with({
      kind: 'compose',
      name,
      reactor: child,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
    }) as never;
  }

  /**
   * Runs a step definition or a reactor for each element of a collection: in this process, or —
   * with `fanOut`, in a background worker — one job per element (docs/maps.md).
   */
  map<const N extends string, T, E extends AnyStepDefinition | AnyReactorDefinition>(
    name: FreshName<N, S>,
    options: MapOptions<I, S, T, E>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: MapResult<ElementOutput<E>> }>, G> {
    const source = (options.source as (s: typeof sources) => Arg<unknown>)(sources);
    const waitFor = [...(options.waitFor ?? [])] as string[];
    const element: MapElement = isStepDefinition(options.each)
      ? { kind: 'step', node: this.#placeDefinition(`${name}[]`, options.each, {}) }
      : { kind: 'reactor', reactor: options.each };
    if (element.kind === 'reactor' && sleepPaths(element.reactor).length > 0) {
      this.#fail(
        name,
        `map elements cannot sleep: "${element.reactor.name}" has sleep step(s) ${sleepPaths(element.reactor).join(', ')}; compose it instead, or sleep before the map`,
      );
    }
    if (element.kind === 'reactor' && interruptPaths(element.reactor).length > 0) {
      this.#fail(
        name,
        `map elements cannot pause: "${element.reactor.name}" has interrupt step(s) ${interruptPaths(element.reactor).join(', ')}; compose it instead, or pause before the map`,
      );
    }
    const maxConcurrency = options.maxConcurrency ?? 4;
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1)
      this.#fail(name, `maxConcurrency must be an integer >= 1 (got ${String(maxConcurrency)})`);
    const maxElements = options.maxElements ?? DEFAULT_MAP_MAX_ELEMENTS;
    if (!Number.isSafeInteger(maxElements) || maxElements < 0)
      this.#fail(name, `maxElements must be an integer >= 0 (got ${String(maxElements)})`);
    const fanOut =
      options.fanOut === undefined ? undefined : { batchSize: options.fanOut.batchSize ?? DEFAULT_FAN_OUT_BATCH };
    if (fanOut && (!Number.isInteger(fanOut.batchSize) || fanOut.batchSize < 1))
      this.#fail(name, `fanOut.batchSize must be an integer >= 1 (got ${String(fanOut.batchSize)})`);
    return this.#with({
      kind: 'map',
      name,
      args: undefined,
      source,
      element,
      elementArgs: options.args,
      maxConcurrency,
      maxElements,
      atomic: options.atomic ?? true,
      fanOut,
      waitFor,
      dependsOn: dependenciesOf({ source }, waitFor),
    }) as never;
  }

  /**
   * Adds an interrupt step: the execution pauses here (status `paused`) until
   * `engine.resume(executionId | { correlationId }, payload)` delivers a payload that validates
   * against `payload`; the step's result is the validated payload.
   *
   * @example
   * ```ts
   * .interrupt('approval', { payload: { approved: z.boolean() }, correlationId: (i) => `order:${i.orderId}`, timeout: '2d' })
   * ```
   */
  interrupt<const N extends string, P extends PayloadSchema, A = NoArgs>(
    name: FreshName<N, S>,
    options: InterruptOptions<I, S, A, P>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: PayloadOf<P> }>, G> {
    const o = options as unknown as InterruptOptions<never, never, never, PayloadSchema>;
    const where = { reactor: this.#state.name, step: name };
    const interrupt = interruptSpec(where, o);
    const args = o.args === undefined ? undefined : resolveWiring(o.args);
    const waitFor = [...(o.waitFor ?? [])] as string[];
    return this.#with({
      kind: 'interrupt',
      name: where.step,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      interrupt,
    }) as never;
  }

  /**
   * Adds a step that waits for an event: the execution registers the wait, then parks (status
   * `paused`, holding nothing) until an event of `event`'s name is sent (`engine.send`) whose
   * payload matches — its `matchOn` fields equal the same-named fields of the step's arguments,
   * and `match`, if given, accepts it. Every execution waiting for a matching event is resumed by
   * it; the step's result is the event's payload. With `timeout`, `onTimeout` says what happens
   * when it passes first: `'fail'` (default) rolls the execution back and ends it failed with
   * `EventWaitTimeoutError`; a function of the arguments gives the step's result instead
   * (docs/events.md, "Waiting for an event").
   *
   * @example
   * ```ts
   * const paymentSettled = event('payment.settled', { orderId: z.string(), amount: z.number() });
   * reactor('checkout', { input: { orderId: z.string() } })
   *   .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'], timeout: '2d' })
   *   .step('ship', { args: ($) => ({ amount: $.result('payment', 'amount') }), run: ({ amount }) => amount })
   * ```
   */
  waitForEvent<
    const N extends string,
    E extends AnyEventDeclaration,
    A = NoArgs,
    V = never,
    const M extends readonly (keyof EventPayload<E> & string)[] = readonly [],
  >(
    name: FreshName<N, S>,
    options: WaitForEventOptions<I, S, A, E, V> & { readonly matchOn?: M },
  ): MatchOnChecked<
    M,
    StepArgs<I, A>,
    ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: EventPayload<E> | V }>, G>
  > {
    const o = options as unknown as WaitForEventOptions<never, never, never, AnyEventDeclaration, unknown>;
    const where = { reactor: this.#state.name, step: name };
    const wait = waitForEventSpec(where, o);
    const args = o.args === undefined ? undefined : resolveWiring(o.args);
    const waitFor = [...(o.waitFor ?? [])] as string[];
    return this.#with({
      kind: 'wait-for-event',
      name: where.step,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      wait,
    }) as never;
  }

  /**
   * Adds a sleep step: once its dependencies finished, the execution waits until a wake time
   * computed once when the step starts — `for` a duration, or `until` an instant from the input
   * and earlier results. In a worker the execution parks on a delayed job and holds no worker
   * slot; inline it waits up to the engine's `maxInlineSleepMs`, then hands off to a worker
   * (docs/time.md#sleeps). Its result is a {@link SleepResult}.
   *
   * @example
   * ```ts
   * .sleep('cooling-off', { for: '3d' })
   * .sleep('reminder', { until: ($) => $.result('order', 'createdAt').transform((at) => at + 86_400_000) })
   * ```
   */
  sleep<const N extends string>(
    name: FreshName<N, S>,
    options: SleepOptions<I, S>,
  ): ReactorBuilder<Name, In, I, Simplify<S & { [K in N]: SleepResult }>, G> {
    const where = { reactor: this.#state.name, step: name };
    const { spec, args } = sleepSpec(where, options as unknown as SleepOptions<never, never>);
    const waitFor = [...((options as { waitFor?: readonly string[] } | undefined)?.waitFor ?? [])];
    return this.#with({
      kind: 'sleep',
      name: where.step,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      sleep: spec,
    }) as never;
  }

  /** Finishes the reactor; its run value is the named step's result. */
  returns<N extends keyof S & string>(name: N): ReactorDefinition<Name, In, I, S, S[N], G> {
    return this.#finish(name) as never;
  }

  /** Finishes the reactor; its run value is every step's result by name. */
  build(): ReactorDefinition<Name, In, I, S, S, G> {
    return this.#finish(undefined) as never;
  }

  #inline(name: string, options: InlineStepOptions<never, never, never, unknown>): StepNode {
    if (typeof options?.run !== 'function') this.#fail(name, 'an inline step needs a run function');
    const args = options.args === undefined ? undefined : resolveWiring(options.args);
    const waitFor = [...(options.waitFor ?? [])] as string[];
    const hooks = { run: options.run, compensate: options.compensate, undo: options.undo } as StepNode['hooks'];
    const retry = toRetryPolicy(options.retry, { reactor: this.#state.name, step: name });
    const coordination = stepCoordinationSpecs({ reactor: this.#state.name, step: name }, options);
    const timeoutMs = stepTimeoutMs(options.timeout, { reactor: this.#state.name, step: name });
    return {
      kind: 'step',
      name,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      hooks,
      contract: undefined,
      retry,
      coordination,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...failureFields(options, { reactor: this.#state.name, step: name }),
    };
  }

  #placeDefinition(
    name: string,
    definition: AnyStepDefinition,
    placement: StepPlacementOptions<never, never, never, unknown>,
  ): StepNode {
    const args = resolveWiring(placement.args);
    const waitFor = [...(placement.waitFor ?? [])] as string[];
    const retry = toRetryPolicy(placement.retry ?? definition.retry, { reactor: this.#state.name, step: name });
    return {
      kind: 'step',
      name,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      hooks: definition.hooks,
      contract: definition.contract,
      retry,
      coordination: definition.coordination,
      ...(definition.timeoutMs === undefined ? {} : { timeoutMs: definition.timeoutMs }),
      ...failureFields(placement, { reactor: this.#state.name, step: name }),
    };
  }

  #with(node: GraphNode): ReactorBuilder<Name, In, I, never, never> {
    if (this.#state.nodes.some((n) => n.name === node.name)) {
      this.#fail(node.name, `step "${node.name}" is defined twice; give one of them another name`);
    }
    return new ReactorBuilder({ ...this.#state, nodes: [...this.#state.nodes, node] });
  }

  #finish(returns: string | undefined): AnyReactorDefinition {
    const { name, contract, nodes, options, coordination, background, triggers = [], cancelOn } = this.#state;
    if (background !== undefined && background !== 'all' && coordination.some((c) => c.kind === 'ordered_lock')) {
      this.#fail(
        undefined,
        "an ordered lock with a hand-off after/before a step is not supported; use background('all') so the position is taken when the run is accepted",
      );
    }
    const byName = new Map(nodes.map((n) => [n.name, n]));
    validateGraph({ name, contract, nodes, byName, returns });
    checkCancelOns(name, contract, cancelOn);
    const definition: AnyReactorDefinition = {
      kind: 'reactor',
      name,
      contract,
      nodes: Object.freeze(nodes.map((n) => Object.freeze(n))),
      byName,
      returns,
      maxConcurrency: options.maxConcurrency,
      onFailure: onFailureOf(options.onFailure, { reactor: name }),
      ...deadlineOf(options, name),
      coordination,
      background,
      cancelOn: Object.freeze([...cancelOn]),
      fingerprint: fingerprintOf({ name, nodes, coordination, background }),
      version: options.version,
      migrateFrom: versionOptions(name, options, new Set(byName.keys())),
      triggers: Object.freeze([...triggers]),
      toMermaid: () => toMermaid(definition),
      // `as never`: the compiler cannot relate this builder's parameters to `extend`'s generic ones.
      extend: (derivedName?: string) => new ReactorBuilder({ ...this.#state, name: derivedName ?? name }) as never,
    };
    return Object.freeze(definition);
  }

  #fail(step: string | undefined, message: string): never {
    throw new DefinitionError(`reactor "${this.#state.name}": ${message}`, this.#state.name, step);
  }
}

/**
 * Starts a reactor definition.
 *
 * @example
 * ```ts
 * const checkout = reactor('checkout')
 *   .input({ orderId: z.string(), amount: z.number() })
 *   .step('reserve', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => stock.reserve(orderId) })
 *   .step('charge', {
 *     args: ($) => ({ total: $.result('reserve', 'total') }),
 *     run: ({ total }) => psp.charge(total),
 *     undo: (charge) => psp.refund(charge.id),
 *   })
 *   .returns('charge');
 * ```
 */
export function reactor<const Name extends string>(
  name: Name,
  options: ReactorOptions = {},
): ReactorBuilder<Name, {}, {}, {}> {
  if (typeof name !== 'string' || name.length === 0)
    throw new DefinitionError('a reactor needs a non-empty name', String(name));
  if (
    options.maxConcurrency !== undefined &&
    (!Number.isInteger(options.maxConcurrency) || options.maxConcurrency < 1)
  ) {
    throw new DefinitionError(`reactor "${name}": maxConcurrency must be an integer >= 1`, name);
  }
  reactorDeadlineMs(options.deadline, name); // checked when declared
  return new ReactorBuilder({
    name,
    options,
    contract: compileContract({}),
    nodes: [],
    coordination: [],
    cancelOn: [],
  });
}
