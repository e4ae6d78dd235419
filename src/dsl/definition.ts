/**
 * The frozen data a built reactor is made of. The engine reads only these types, never the
 * builders.
 *
 * @module
 */
import type { Arg } from './args.js';
import type { StepContext } from './context.js';
import type { Contract } from './contract.js';
import type { CoordinationSpec } from './coordination.js';
import type { InterruptSpec } from './interrupt.js';
import type { ReactorBuilder } from './reactor.js';
import type { RetryPolicy } from './retry.js';

/** A step's hooks, untyped (the builders keep the types). */
export interface StepHooks {
  readonly run: (args: never, ctx: StepContext) => unknown;
  readonly compensate?: ((reason: Error, args: never, ctx: StepContext) => unknown) | undefined;
  readonly undo?: ((result: never, args: never, ctx: StepContext) => unknown) | undefined;
}

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
  /** Set on an interrupt step: the execution pauses here until a resume delivers the payload. */
  readonly interrupt?: InterruptSpec | undefined;
  /** `asyncStep`: the body runs in its own job while the reactor goes on. */
  readonly async?: true;
}

/** A nested reactor run inline as one step of the same execution. */
export interface ComposeNode extends NodeBase {
  readonly kind: 'compose';
  readonly reactor: AnyReactorDefinition;
  /** `asyncReactor`: an independent child execution in the background, linked by `parentId`. */
  readonly async?: true;
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
  readonly atomic: boolean;
  /** Worker mode: elements run as their own jobs, at most `batchSize` in flight (undefined: in-process). */
  readonly fanOut?: { readonly batchSize: number } | undefined;
}

/** Any node of the graph. */
export type GraphNode = StepNode | ComposeNode | MapNode;

/** Phantom types carried by a reactor definition (never read at run time). */
export interface ReactorTypes<In, I, S, O> {
  readonly input: In;
  readonly validated: I;
  readonly steps: S;
  readonly output: O;
}

/** A built, validated, frozen reactor. */
export interface ReactorDefinition<Name extends string = string, In = unknown, I = unknown, S = unknown, O = unknown> {
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
  /** Where a run leaves the caller for a worker (`background(...)`); undefined: it runs where it is called. */
  readonly background: 'all' | { readonly after: string } | { readonly before: string } | undefined;
  /** Reactor-level coordination declarations (at most one per kind). */
  readonly coordination: readonly CoordinationSpec[];
  /** Draws the graph as a Mermaid flowchart. */
  toMermaid(): string;
  /**
   * A builder for a derived reactor: it inherits the input contract, the steps and the
   * coordination declarations; redeclaring a primitive overrides the inherited one. Finish it
   * with `.returns()` or `.build()`.
   */
  extend<N2 extends string = Name>(name?: N2): ReactorBuilder<N2, In, I, S>;
  /** Phantom, for type helpers such as {@link InputOf}. */
  readonly '~types'?: ReactorTypes<In, I, S, O>;
}

/**
 * Any reactor definition. Its parameters are `any` on purpose: a reactor's step-result map flows
 * through contravariant positions (argument sources, `extend`), so no single concrete type
 * accepts every reactor in a consumer's compiled declarations.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyReactorDefinition = ReactorDefinition<string, any, any, any, any>;

/** What `run` accepts for a reactor. */
export type InputOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['input'] : never;
/** A reactor's run value. */
export type OutputOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['output'] : never;
/** A reactor's step results by name. */
export type StepsOf<R> = R extends AnyReactorDefinition ? NonNullable<R['~types']>['steps'] : never;
/** A reactor's step names. */
export type StepNameOf<R> = keyof StepsOf<R> & string;
