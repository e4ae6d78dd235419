/**
 * The frozen data a built reactor is made of. The engine reads only these types, never the
 * builders.
 *
 * They are declared in `reactor/nodes.ts` (the graph a build produces) and a step's hooks with
 * step definitions in `step.ts`; this module gathers them.
 *
 * @module
 */
export type { StepHooks } from './step.js';
export type {
  AnyReactorDefinition,
  ComposeNode,
  GraphNode,
  InputOf,
  MapElement,
  MapNode,
  OutputOf,
  ReactorDefinition,
  ReactorTypes,
  StepArgsOf,
  StepNameOf,
  StepNode,
  StepsOf,
} from './reactor.js';
