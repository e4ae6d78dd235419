/**
 * The graph a build produces: the frozen `ReactorDefinition` and its nodes. The engine reads
 * these types through `../definition.ts` and never the builder.
 *
 * A definition's `extend` returns a builder, and the builder's `build` returns a definition; so
 * that this file need not import the builder, `builder.ts` adds `extend` to
 * `ReactorDefinition` (a module augmentation) and the import runs one way only.
 *
 * @module
 */
import type { Arg } from '../args.js';
import type { Contract } from '../contract.js';
import type { CancelOnSpec } from '../cancel-on.js';
import type { CoordinationSpec } from '../coordination.js';
import type { InterruptSpec } from '../interrupt-spec.js';
import type { OnFailure, SkipPolicy } from '../on-failure.js';
import type { RetryPolicy } from '../retry.js';
import type { SleepSpec } from '../sleep.js';
import type { StepHooks } from '../step.js';
import type { TriggerSpec } from '../trigger.js';
import type { ReactorMigration } from '../versions.js';
import type { WaitForEventSpec } from '../wait-for-event.js';

/** What every node has: its name and where its arguments and ordering come from. */
interface NodeBase {
  readonly name: string;
  /** Argument map; `undefined` means the step receives the reactor's whole input. */
  readonly args: Readonly<Record<string, Arg<unknown>>> | undefined;
  /** Explicit ordering dependencies. */
  readonly waitFor: readonly string[];
  /** Every dependency: the steps named by result arguments plus `waitFor`, without duplicates. */
  readonly dependsOn: readonly string[];
}

/** A body run in attempts and what surrounds it: shared by a plain step and an async step. */
interface StepBody {
  readonly hooks: StepHooks;
  /** The input contract its arguments are validated against (step definitions only). */
  readonly contract: Contract | undefined;
  readonly retry: RetryPolicy;
  /** Step-scoped coordination, taken around each attempt's body (empty: none). */
  readonly coordination: readonly CoordinationSpec[];
  /** How long one attempt of the body may run, in ms (the validated `timeout`); absent: no limit. */
  readonly timeoutMs?: number | undefined;
  /** The step's own failure policy (`onFailure`); absent: the reactor's. */
  readonly onFailure?: OnFailure | undefined;
  /** Set when an operator may skip the step after it failed (`skippable`), with the schema its value must satisfy, if any. */
  readonly skip?: SkipPolicy | undefined;
}

/** A plain step (`step`: inline, or a reusable step definition placed in a reactor). */
export interface StepNode extends NodeBase, StepBody {
  readonly kind: 'step';
}

/** An `asyncStep`: the body runs in its own job while the reactor goes on (docs/async.md). */
export interface AsyncStepNode extends NodeBase, StepBody {
  readonly kind: 'async-step';
}

/** An `interrupt` step: the execution pauses here until a resume delivers the payload. */
export interface InterruptNode extends NodeBase {
  readonly kind: 'interrupt';
  readonly interrupt: InterruptSpec;
}

/** A `sleep` step: the execution waits here until its wake time (docs/time.md#sleeps). */
export interface SleepNode extends NodeBase {
  readonly kind: 'sleep';
  readonly sleep: SleepSpec;
}

/** A `waitForEvent` step: the execution parks here until a matching event is sent (docs/events.md). */
export interface WaitForEventNode extends NodeBase {
  readonly kind: 'wait-for-event';
  readonly wait: WaitForEventSpec;
}

/** A nested reactor run inline as one step of the same execution (`compose`). */
export interface ComposeNode extends NodeBase {
  readonly kind: 'compose';
  readonly reactor: AnyReactorDefinition;
}

/** An `asyncReactor`: an independent child execution in the background, linked by `parentId`. */
export interface AsyncReactorNode extends NodeBase {
  readonly kind: 'async-reactor';
  readonly reactor: AnyReactorDefinition;
  /** `cancelChildren: false`: cancelling the dispatcher leaves the child running (docs/decisions/087). */
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

/** Any node of the graph: one of a closed set of kinds, told apart by `kind` (docs/decisions/141). */
export type GraphNode =
  StepNode | AsyncStepNode | InterruptNode | SleepNode | WaitForEventNode | ComposeNode | AsyncReactorNode | MapNode;

/** The kinds of node: `'step'`, `'async-step'`, `'interrupt'`, `'sleep'`, `'wait-for-event'`, `'compose'`, `'async-reactor'`, `'map'`. */
export type NodeKind = GraphNode['kind'];

/** The node of one kind. */
export type NodeOf<K extends NodeKind> = Extract<GraphNode, { readonly kind: K }>;

/** A node whose body runs in attempts: a plain or an async step. */
export type BodyNode = StepNode | AsyncStepNode;

/**
 * One handler per node kind. A table of this type is complete or does not compile, so a new kind
 * added to {@link GraphNode} is refused until every reader of the graph handles it. `C` is what a
 * table shared by every call gets besides the node (so a hot path builds no closures per call).
 */
export type NodeHandlers<R, C = undefined> = { readonly [K in NodeKind]: (node: NodeOf<K>, context: C) => R };

/** Calls the handler of `node`'s kind (with `context`, for a table that takes one). */
export function onNode<R, C = undefined>(node: GraphNode, handlers: NodeHandlers<R, C>, context?: C): R {
  return (handlers[node.kind] as (node: GraphNode, context: C | undefined) => R)(node, context);
}

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
   * The events that cancel an unfinished execution (`cancelOn`), in the order declared; empty:
   * none. Not part of the fingerprint: an execution registers them when it starts.
   */
  readonly cancelOn: readonly CancelOnSpec[];
  /**
   * A stable hash of what decides how a persisted execution continues (step names, kinds,
   * dependencies, coordination, hand-offs: `dsl/fingerprint.ts`); recorded with each execution.
   */
  readonly fingerprint: string;
  /** The author-set version (`reactor(name, { version })`); undefined: none. */
  readonly version: string | undefined;
  /** Earlier definitions whose executions this one continues (`reactor(name, { migrateFrom })`). */
  readonly migrateFrom: readonly ReactorMigration[];
  /**
   * The events that start it (`.on(...)`), at most one per event name, in declaration order
   * (docs/events.md). Absent on a definition built by an older ts-reactor: none.
   */
  readonly triggers?: readonly TriggerSpec[];
  /** Draws the graph as a Mermaid flowchart. */
  toMermaid(): string;
  // `extend` (a builder for a derived reactor) is added by builder.ts.
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
