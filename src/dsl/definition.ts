/**
 * The frozen data a built reactor is made of. The engine reads only these types, never the
 * builders.
 *
 * They are declared in `reactor/nodes.ts` (the graph a build produces) and a step's hooks with
 * step definitions in `step.ts`; this module gathers them, with `onNode`, which calls one
 * handler per node kind from a table the compiler checks is complete. The package's root exports
 * the types through `reactor.ts`, not this module, so `onNode` stays internal.
 *
 * @module
 */
export type { StepHooks } from './step.js';
export type {
  AnyReactorDefinition,
  AsyncReactorNode,
  AsyncStepNode,
  BodyNode,
  ComposeNode,
  GraphNode,
  InputOf,
  InterruptNode,
  WaitForEventNode,
  MapElement,
  MapNode,
  NodeHandlers,
  NodeKind,
  NodeOf,
  OutputOf,
  ReactorDefinition,
  ReactorTypes,
  SleepNode,
  StepArgsOf,
  StepNameOf,
  StepNode,
  StepsOf,
} from './reactor/nodes.js';
export { onNode } from './reactor/nodes.js';
