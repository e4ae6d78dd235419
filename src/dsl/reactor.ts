/**
 * The reactor builder: an immutable chain that adds each step's result type to a map, so later
 * steps' arguments, paths and key functions are checked by the compiler.
 *
 * The graph it builds (`ReactorDefinition` and its nodes) is declared here too: a definition
 * refers to the builder (`extend`) and the builder to definitions (`build`, `compose`, `map`),
 * so these mutually recursive types share one file rather than two files importing each other.
 * So do the functions the builder runs over a graph: validation at `build`, `toMermaid` and
 * `interruptPaths`. The engine reads the graph's types through `definition.ts`.
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { sources, type Arg, type ArgSources, type ArgValues } from './args.js';
import type { StepContext } from './context.js';
import {
  compileContract,
  type Contract,
  type ContractInput,
  type ContractOptions,
  type ContractOutput,
  type Fields,
} from './contract.js';
import type { MapResult } from './map-result.js';
import { fingerprintOf } from './fingerprint.js';
import { versionOptions, type ReactorMigration } from './versions.js';
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
  type StepCoordinationOptions,
} from './coordination.js';
import {
  interruptSpec,
  type InterruptSettings,
  type InterruptSpec,
  type PayloadOf,
  type PayloadSchema,
} from './interrupt-spec.js';
import { asyncChildRefusal, asyncUndoRefusal, type AsyncReactorOptions } from './async.js';
import { toRetryPolicy, type RetryOptions, type RetryPolicy } from './retry.js';
import type { StepValue } from './signals.js';
import { isStepDefinition, type AnyStepDefinition, type StepDefinition, type StepHooks } from './step.js';
import { stepTimeoutMs, type StepTimeoutOptions } from './step-timeout.js';
import { sleepSpec, type SleepOptions, type SleepResult, type SleepSpec } from './sleep.js';
import { deadlineOf, reactorDeadlineMs, type ReactorDeadlineOptions } from './deadline.js';
import { failureFields, onFailureOf, type FailureOptions, type OnFailure, type SkipPolicy } from './on-failure.js';

type Simplify<T> = { [K in keyof T]: T[K] } & {};
declare const errorBrand: unique symbol;
/** A readable compile error. */
export type TypeError<M extends string> = M & { readonly [errorBrand]: M };
/** A name that must not be taken yet. */
export type FreshName<N extends string, S> = N extends keyof S ? TypeError<`step "${N}" is already defined`> : N;

/** Marker for a step that declares no `args` (it then receives the reactor's input). */
export interface NoArgs {
  readonly '~noArgs': true;
}
/** What an inline step's hooks receive as arguments. */
export type StepArgs<I, A> = [A] extends [NoArgs] ? I : ArgValues<A>;
/** A partial wiring of named inputs `In`: each an argument of a compatible type. */
export type Wiring<In> = { readonly [K in keyof In]?: Arg<In[K]> };

/**
 * An inline step: its arguments, hooks, retry policy, `timeout` and step-scoped coordination
 * (`lock`, `semaphore`, `rateLimit`, `period`, `orderedLock`, keyed on the step's arguments).
 */
export interface InlineStepOptions<I, S, A, R>
  extends StepCoordinationOptions<StepArgs<I, A>>, StepTimeoutOptions, FailureOptions<StepValue<R>> {
  /** Where the arguments come from; without it the step receives the reactor's input. */
  readonly args?: ($: ArgSources<I, S>) => A;
  /** Steps that must finish first although no argument reads them. */
  readonly waitFor?: readonly (keyof S & string)[];
  readonly retry?: RetryOptions;
  run(args: StepArgs<I, A>, ctx: StepContext): R | Promise<R>;
  compensate?(reason: Error, args: StepArgs<I, A>, ctx: StepContext): unknown;
  undo?(result: StepValue<R>, args: StepArgs<I, A>, ctx: StepContext): unknown;
}

/**
 * Options of an inline `asyncStep`: those of an inline step, without `undo` — an async unit is
 * its own work, which its dispatcher's rollback never undoes (use `compensate`).
 */
export type AsyncStepOptions<I, S, A, R> = Omit<InlineStepOptions<I, S, A, R>, 'undo' | keyof FailureOptions<R>> & {
  readonly undo?: never;
};

/** How a step definition is placed in a reactor: its wiring, and what its failure does (`onFailure`, `skippable`). */
export type StepPlacementOptions<I, S, In, R> = PlacementOptions<I, S, In> & FailureOptions<R>;

/**
 * How a step definition or a composed reactor is wired into a reactor. A placed step definition
 * keeps its coordination declarations.
 */
export interface PlacementOptions<I, S, In> {
  /** Wiring of its inputs; an unwired input takes the reactor input of the same name. */
  readonly args?: ($: ArgSources<I, S>) => Wiring<In>;
  readonly waitFor?: readonly (keyof S & string)[];
  /** Overrides the step definition's retry policy here. */
  readonly retry?: RetryOptions;
}

type ElementInput<E> = E extends AnyStepDefinition ? NonNullable<E['~types']>['input'] : InputOf<E>;
type ElementOutput<E> = E extends AnyStepDefinition ? NonNullable<E['~types']>['output'] : OutputOf<E>;

/** Elements of a fan-out map in flight at once when `fanOut.batchSize` is not given. */
export const DEFAULT_FAN_OUT_BATCH = 50;

/** The most elements a map's source may have when `maxElements` is not given (docs/limits.md). */
export const DEFAULT_MAP_MAX_ELEMENTS = 10_000;

/** Options of a map step. */
export interface MapOptions<I, S, T, E> {
  /** The collection. */
  readonly source: ($: ArgSources<I, S>) => Arg<readonly T[]>;
  /** What runs for each element: a step definition or a reactor. */
  readonly each: E;
  /** The element's input, from the item and its index. */
  readonly args: (item: T, index: number) => ElementInput<E>;
  /** Elements running at once. Default 4. */
  readonly maxConcurrency?: number;
  /**
   * The most elements the source may have (default 10,000): a larger source fails the map with
   * `MapTooLargeError` (`map_too_large`) before any element runs. Every element adds to the run's
   * record (in-process) or to its own record and the map's result (fan-out): docs/limits.md.
   */
  readonly maxElements?: number;
  /** Stop starting elements at the first failure and fail the map (default true). */
  readonly atomic?: boolean;
  /**
   * In a background worker, run each element as its own job, at most `batchSize` (default 50)
   * in flight; the execution parks until every element settled (docs/maps.md). Inline runs keep
   * running the elements in this process (docs/decisions/018).
   */
  readonly fanOut?: { readonly batchSize?: number };
  readonly waitFor?: readonly (keyof S & string)[];
}

/**
 * An interrupt step: where its arguments come from (for `correlationId`), what it waits for,
 * and its settings. No coordination: declare it on the reactor.
 */
export interface InterruptOptions<I, S, A, P extends PayloadSchema> extends InterruptSettings<StepArgs<I, A>, P> {
  /** Where the arguments come from; without it `correlationId` receives the reactor's input. */
  readonly args?: ($: ArgSources<I, S>) => A;
  /** Steps that must finish first although no argument reads them. */
  readonly waitFor?: readonly (keyof S & string)[];
}

/** Options of {@link reactor}. */
export interface ReactorOptions extends ReactorDeadlineOptions {
  /** Steps of one run running at once (default: the engine's, 8). */
  readonly maxConcurrency?: number;
  /**
   * What a step that fails for good does to the run: `'rollback'` (default) rolls it back;
   * `'pause'` leaves it `paused` on the failure for an operator (`retryStep`, `skipStep`,
   * `rollback`; docs/background.md). A step's own `onFailure` overrides it.
   */
  readonly onFailure?: OnFailure;
  /** The author's name for this definition (a date, a number), recorded with each execution it starts (docs/deploys.md). */
  readonly version?: string;
  /** Earlier definitions of this reactor whose executions this one continues (docs/deploys.md). */
  readonly migrateFrom?: readonly ReactorMigration[];
}

/**
 * Where a run leaves the caller for a background worker: `'all'` (nothing runs in the caller;
 * `engine.run` returns `queued`), `{ after: step }` (the step is the last to run in the caller),
 * or `{ before: step }` (the step is the first to run in a worker).
 */
export type BackgroundDeclaration<S> =
  'all' | { readonly after: keyof S & string } | { readonly before: keyof S & string };

// ── The built definition (read by the engine through definition.ts) ──────────────────────────

interface NodeBase {
  readonly name: string;
  /** Argument map; `undefined` means the step receives the reactor's whole input. */
  readonly args: Readonly<Record<string, Arg<unknown>>> | undefined;
  /** Explicit ordering dependencies. */
  readonly waitFor: readonly string[];
  /** Every dependency: the steps named by result arguments plus `waitFor`, without duplicates. */
  readonly dependsOn: readonly string[];
}

/** A plain step (inline, or a reusable step definition placed in a reactor). */
export interface StepNode extends NodeBase {
  readonly kind: 'step';
  readonly hooks: StepHooks;
  /** The input contract its arguments are validated against (step definitions only). */
  readonly contract: Contract | undefined;
  readonly retry: RetryPolicy;
  /** Step-scoped coordination, taken around each attempt's body (empty: none). */
  readonly coordination: readonly CoordinationSpec[];
  /** How long one attempt of the body may run, in ms (the validated `timeout`); absent: no limit. */
  readonly timeoutMs?: number | undefined;
  /** Set on an interrupt step: the execution pauses here until a resume delivers the payload. */
  readonly interrupt?: InterruptSpec | undefined;
  /** Set on a sleep step: the execution waits here until its wake time (docs/time.md#sleeps). */
  readonly sleep?: SleepSpec | undefined;
  /** `asyncStep`: the body runs in its own job while the reactor goes on. */
  readonly async?: true;
  /** The step's own failure policy (`onFailure`); absent: the reactor's. */
  readonly onFailure?: OnFailure | undefined;
  /** Set when an operator may skip the step after it failed (`skippable`), with the schema its value must satisfy, if any. */
  readonly skip?: SkipPolicy | undefined;
}

/** A nested reactor run inline as one step of the same execution. */
export interface ComposeNode extends NodeBase {
  readonly kind: 'compose';
  readonly reactor: AnyReactorDefinition;
  /** `asyncReactor`: an independent child execution in the background, linked by `parentId`. */
  readonly async?: true;
  /** `asyncReactor` with `cancelChildren: false`: cancelling the dispatcher leaves the child running (docs/decisions/087). */
  readonly cancelChildren?: false;
}

/** What a map runs for each element. */
export type MapElement =
  | { readonly kind: 'step'; readonly node: StepNode }
  | { readonly kind: 'reactor'; readonly reactor: AnyReactorDefinition };

/** A step that runs a step definition or a reactor for each element of a collection. */
export interface MapNode extends NodeBase {
  readonly kind: 'map';
  readonly source: Arg<unknown>;
  readonly element: MapElement;
  readonly elementArgs: (item: never, index: number) => unknown;
  readonly maxConcurrency: number;
  /** The most elements the source may have; a larger one fails the map before any element runs. */
  readonly maxElements: number;
  readonly atomic: boolean;
  /** Worker mode: elements run as their own jobs, at most `batchSize` in flight (undefined: in-process). */
  readonly fanOut?: { readonly batchSize: number } | undefined;
}

/** Any node of the graph. */
export type GraphNode = StepNode | ComposeNode | MapNode;

/** Phantom types carried by a reactor definition (never read at run time). */
export interface ReactorTypes<In, I, S, O, G = {}> {
  readonly input: In;
  readonly validated: I;
  readonly steps: S;
  readonly output: O;
  /** What each plain step's body receives as arguments, by step name (a mock's `args`). */
  readonly args: G;
}

/** A built, validated, frozen reactor. */
export interface ReactorDefinition<
  Name extends string = string,
  In = unknown,
  I = unknown,
  S = unknown,
  O = unknown,
  G = {},
> {
  readonly kind: 'reactor';
  readonly name: Name;
  readonly contract: Contract;
  /** The nodes in declaration order. */
  readonly nodes: readonly GraphNode[];
  readonly byName: ReadonlyMap<string, GraphNode>;
  /** The step whose result is the run's value; without it the value is every step's result. */
  readonly returns: string | undefined;
  /** Per-reactor cap on concurrently running steps (the engine's default applies otherwise). */
  readonly maxConcurrency: number | undefined;
  /** What a step that fails for good does by default: roll the run back, or pause it for an operator. */
  readonly onFailure: OnFailure;
  /** How long an execution may take from its creation, in ms (`reactor(name, { deadline })`); absent: no deadline. */
  readonly deadlineMs?: number;
  /** Where a run leaves the caller for a worker (`background(...)`); undefined: it runs where it is called. */
  readonly background: 'all' | { readonly after: string } | { readonly before: string } | undefined;
  /** Reactor-level coordination declarations (at most one per kind). */
  readonly coordination: readonly CoordinationSpec[];
  /**
   * A stable hash of what decides how a persisted execution continues (step names, kinds,
   * dependencies, coordination, hand-offs: `dsl/fingerprint.ts`); recorded with each execution.
   */
  readonly fingerprint: string;
  /** The author-set version (`reactor(name, { version })`); undefined: none. */
  readonly version: string | undefined;
  /** Earlier definitions whose executions this one continues (`reactor(name, { migrateFrom })`). */
  readonly migrateFrom: readonly ReactorMigration[];
  /** Draws the graph as a Mermaid flowchart. */
  toMermaid(): string;
  /**
   * A builder for a derived reactor: it inherits the input contract, the steps and the
   * coordination declarations; redeclaring a primitive overrides the inherited one. Finish it
   * with `.returns()` or `.build()`.
   */
  extend<N2 extends string = Name>(name?: N2): ReactorBuilder<N2, In, I, S, G>;
  /** Phantom, for type helpers such as {@link InputOf}. */
  readonly '~types'?: ReactorTypes<In, I, S, O, G>;
}

/**
 * Any reactor definition. Its parameters are `any` on purpose: a reactor's step-result map flows
 * through contravariant positions (argument sources, `extend`), so no single concrete type
 * accepts every reactor in a consumer's compiled declarations.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyReactorDefinition = ReactorDefinition<string, any, any, any, any, any>;

/** What `run` accepts for a reactor. */
export type InputOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['input'] : never;
/** A reactor's run value. */
export type OutputOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['output'] : never;
/** A reactor's step results by name. */
export type StepsOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['steps'] : never;
/** A reactor's step names. */
export type StepNameOf<R> = keyof StepsOf<R> & string;
/** What each plain step (`step`, `asyncStep`) of a reactor receives as arguments, by step name. */
export type StepArgsOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['args'] : never;

// ── The builder ──────────────────────────────────────────────────────────────────────────────

interface BuilderState {
  readonly name: string;
  readonly options: ReactorOptions;
  readonly contract: Contract;
  readonly nodes: readonly GraphNode[];
  readonly coordination: readonly CoordinationSpec[];
  readonly background?: BackgroundDeclaration<Record<string, unknown>> | undefined;
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
    return this.#with({ ...node, async: true });
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
      kind: 'compose',
      name,
      reactor: child,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      async: true,
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
    const run = (): never => {
      throw new Error(`interrupt "${where.step}" has no body`);
    };
    const retry = toRetryPolicy(undefined, where);
    return this.#with({
      kind: 'step',
      name: where.step,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      hooks: { run },
      contract: undefined,
      retry,
      coordination: [],
      interrupt,
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
    const run = (): never => {
      throw new Error(`sleep "${where.step}" has no body`);
    };
    return this.#with({
      kind: 'step',
      name: where.step,
      args,
      waitFor,
      dependsOn: dependenciesOf(args, waitFor),
      hooks: { run },
      contract: undefined,
      retry: toRetryPolicy(undefined, where),
      coordination: [],
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
    const { name, contract, nodes, options, coordination, background } = this.#state;
    if (background !== undefined && background !== 'all' && coordination.some((c) => c.kind === 'ordered_lock')) {
      this.#fail(
        undefined,
        "an ordered lock with a hand-off after/before a step is not supported; use background('all') so the position is taken when the run is accepted",
      );
    }
    const byName = new Map(nodes.map((n) => [n.name, n]));
    validateGraph({ name, contract, nodes, byName, returns });
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
      fingerprint: fingerprintOf({ name, nodes, coordination, background }),
      version: options.version,
      migrateFrom: versionOptions(name, options, new Set(byName.keys())),
      toMermaid: () => toMermaid(definition),
      extend: (derivedName?: string) => new ReactorBuilder({ ...this.#state, name: derivedName ?? name }),
    };
    return Object.freeze(definition);
  }

  #fail(step: string | undefined, message: string): never {
    throw new DefinitionError(`reactor "${this.#state.name}": ${message}`, this.#state.name, step);
  }
}

function resolveWiring(fn: ((s: never) => unknown) | undefined): Readonly<Record<string, Arg<unknown>>> {
  if (fn === undefined) return {};
  return Object.freeze({ ...(fn as (s: typeof sources) => Record<string, Arg<unknown>>)(sources) });
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
  return new ReactorBuilder({ name, options, contract: compileContract({}), nodes: [], coordination: [] });
}

// ── Over a graph: validation, drawing, interrupts ────────────────────────────────────────────

/** The steps an argument map and a `waitFor` list depend on, without duplicates. */
function dependenciesOf(
  args: Readonly<Record<string, Arg<unknown>>> | undefined,
  waitFor: readonly string[],
): readonly string[] {
  const deps = new Set<string>();
  for (const arg of Object.values(args ?? {})) if (arg.source.kind === 'result') deps.add(arg.source.step);
  for (const name of waitFor) deps.add(name);
  return Object.freeze([...deps]);
}

interface GraphToCheck {
  readonly name: string;
  readonly contract: Contract;
  readonly nodes: readonly GraphNode[];
  readonly byName: ReadonlyMap<string, GraphNode>;
  readonly returns: string | undefined;
}

/**
 * Definition validation, run once when a reactor is built: unknown references, cycles, unwired
 * required inputs, a bad `returns`. Throws a {@link DefinitionError} for the first problem
 * found; every error names the reactor, the step and the fix.
 */
function validateGraph(graph: GraphToCheck): void {
  const fail = (step: string | undefined, message: string): never => {
    throw new DefinitionError(
      `reactor "${graph.name}"${step === undefined ? '' : `, step "${step}"`}: ${message}`,
      graph.name,
      step,
    );
  };
  for (const node of graph.nodes) {
    for (const dep of node.dependsOn) {
      if (dep === node.name) fail(node.name, `depends on itself; remove "${dep}" from its arguments or waitFor`);
      if (!graph.byName.has(dep))
        fail(node.name, `depends on unknown step "${dep}"; declare a step named "${dep}" or fix the reference`);
    }
    const args = node.kind === 'map' ? { source: node.source } : (node.args ?? {});
    for (const [argName, arg] of Object.entries(args)) {
      if (arg.source.kind === 'input' && !(arg.source.name in graph.contract.fields)) {
        fail(
          node.name,
          `argument "${argName}" reads reactor input "${arg.source.name}", which the reactor does not declare; add it to .input({...})`,
        );
      }
    }
    checkWiring(graph, node, fail);
  }
  const cycle = findCycle(graph);
  if (cycle) fail(cycle[0], `dependency cycle ${cycle.join(' -> ')}; break it by removing one of these dependencies`);
  if (graph.returns !== undefined && !graph.byName.has(graph.returns)) {
    fail(undefined, `returns unknown step "${graph.returns}"; name a declared step`);
  }
}

function checkWiring(graph: GraphToCheck, node: GraphNode, fail: (step: string, message: string) => never): void {
  const contract = node.kind === 'step' ? node.contract : node.kind === 'compose' ? node.reactor.contract : undefined;
  if (!contract) return;
  for (const field of contract.required) {
    if (node.args && field in node.args) continue;
    if (field in graph.contract.fields) continue;
    fail(
      node.name,
      `required input "${field}" is not wired; add args: ($) => ({ ${field}: ... }) or a reactor input named "${field}"`,
    );
  }
  for (const argName of Object.keys(node.args ?? {})) {
    if (!(argName in contract.fields))
      fail(
        node.name,
        `argument "${argName}" is not an input of this step; its inputs are: ${Object.keys(contract.fields).join(', ') || '(none)'}`,
      );
  }
}

function findCycle(graph: GraphToCheck): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'visiting') return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of graph.byName.get(name)?.dependsOn ?? []) {
      const found = visit(dep);
      if (found) return found;
    }
    stack.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const node of graph.nodes) {
    const found = visit(node.name);
    if (found) return found.reverse();
  }
  return undefined;
}

const SHAPES: Record<GraphNode['kind'], (id: string, label: string) => string> = {
  step: (id, label) => `${id}["${label}"]`,
  compose: (id, label) => `${id}[["${label} (compose)"]]`,
  map: (id, label) => `${id}{{"${label} (map)"}}`,
};

/**
 * Draws a reactor's graph as a Mermaid flowchart: one node per step, an edge per dependency
 * (dotted for `waitFor`), and the `returns` step marked.
 */
export function toMermaid(definition: AnyReactorDefinition): string {
  const id = (name: string): string => `s_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const lines = ['flowchart TD'];
  for (const node of definition.nodes) {
    const label = node.name === definition.returns ? `${node.name} ⟶ returns` : node.name;
    lines.push(`  ${SHAPES[node.kind](id(node.name), label.replace(/"/g, "'"))}`);
  }
  for (const node of definition.nodes) {
    for (const dep of node.dependsOn) {
      const arrow = node.waitFor.includes(dep) && !readsResult(node, dep) ? '-.->' : '-->';
      lines.push(`  ${id(dep)} ${arrow} ${id(node.name)}`);
    }
  }
  return lines.join('\n');
}

function readsResult(node: GraphNode, step: string): boolean {
  const args = node.kind === 'map' ? { source: node.source } : (node.args ?? {});
  return Object.values(args).some((a) => a.source.kind === 'result' && a.source.step === step);
}

/** Every sleep path of a reactor, composed children included (for the map refusal). */
export function sleepPaths(reactor: AnyReactorDefinition, prefix = '', depth = 0): string[] {
  if (depth > 32) return [];
  return reactor.nodes.flatMap((node) => {
    if (node.kind === 'step') return node.sleep ? [`${prefix}${node.name}`] : [];
    if (node.kind === 'compose') return node.async ? [] : sleepPaths(node.reactor, `${prefix}${node.name}.`, depth + 1);
    return [];
  });
}

/** Every interrupt path of a reactor, composed children included (for messages and map refusal). */
export function interruptPaths(reactor: AnyReactorDefinition, prefix = '', depth = 0): string[] {
  if (depth > 32) return [];
  return reactor.nodes.flatMap((node) => {
    if (node.kind === 'step') return node.interrupt ? [`${prefix}${node.name}`] : [];
    if (node.kind === 'compose') return interruptPaths(node.reactor, `${prefix}${node.name}.`, depth + 1);
    return node.element.kind === 'reactor'
      ? interruptPaths(node.element.reactor, `${prefix}${node.name}[].`, depth + 1)
      : [];
  });
}
