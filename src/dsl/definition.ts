/**
 * The frozen data a built reactor is made of. The engine reads only these types, never the
 * builders.
 *
 * They are declared with the builder in `reactor.ts` (a definition's `extend` returns a builder,
 * a builder's `build` returns a definition: one file holds both, so no import cycle) and a step's
 * hooks with step definitions in `step.ts`; this module gathers them.
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
