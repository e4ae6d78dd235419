/**
 * What the builder's methods take: the options of each kind of step (inline, placed, async,
 * interrupt, map), of the reactor itself and of its hand-off to a worker, and the type-level
 * helpers that turn a wrong step name into a readable compile error.
 *
 * @module
 */
import type { Arg, ArgSources, ArgValues } from '../args.js';
import type { StepContext } from '../context.js';
import type { StepCoordinationOptions } from '../coordination.js';
import type { ReactorDeadlineOptions } from '../deadline.js';
import type { InterruptSettings, PayloadSchema } from '../interrupt-spec.js';
import type { AnyEventDeclaration } from '../event.js';
import type { WaitForEventSettings } from '../wait-for-event.js';
import type { FailureOptions, OnFailure } from '../on-failure.js';
import type { RetryOptions } from '../retry.js';
import type { StepValue } from '../signals.js';
import type { AnyStepDefinition } from '../step.js';
import type { StepTimeoutOptions } from '../step-timeout.js';
import type { ReactorMigration } from '../versions.js';
import type { InputOf, OutputOf } from './nodes.js';

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

/** What a map's `args` returns for each element: the input of its step definition or reactor. */
export type ElementInput<E> = E extends AnyStepDefinition ? NonNullable<E['~types']>['input'] : InputOf<E>;
/** What a map's element yields: the result of its step definition or reactor's run value. */
export type ElementOutput<E> = E extends AnyStepDefinition ? NonNullable<E['~types']>['output'] : OutputOf<E>;

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

/**
 * A `.waitForEvent` step: where its arguments come from (what `matchOn` and `match` compare the
 * event with; without `args`, the reactor's input), what it waits for, and its settings. No
 * coordination: a parked execution holds nothing.
 */
export interface WaitForEventOptions<I, S, A, E extends AnyEventDeclaration, V> extends WaitForEventSettings<
  StepArgs<I, A>,
  E,
  V
> {
  /** Where the arguments come from; without it `matchOn` and `match` read the reactor's input. */
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
