/**
 * The reactor builder and the graph it builds, as the rest of the package imports them: the
 * files of `reactor/` (builder, options, nodes, validation, drawing, paths) re-exported here,
 * so one import names them all.
 *
 * @module
 */
export { reactor, ReactorBuilder } from './reactor/builder.js';
export { toMermaid } from './reactor/drawing.js';
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
export {
  DEFAULT_FAN_OUT_BATCH,
  DEFAULT_MAP_MAX_ELEMENTS,
  type AsyncStepOptions,
  type BackgroundDeclaration,
  type FreshName,
  type InlineStepOptions,
  type InterruptOptions,
  type MapOptions,
  type NoArgs,
  type PlacementOptions,
  type ReactorOptions,
  type StepArgs,
  type StepPlacementOptions,
  type WaitForEventOptions,
  type TypeError,
  type Wiring,
} from './reactor/options.js';
export { interruptPaths, sleepPaths } from './reactor/paths.js';
