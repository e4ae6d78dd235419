/**
 * Finds an async node of a reactor by its path (`ship`, `pay.ship` inside the composed step
 * `pay`, `items[2].ship` inside a map of reactors): an `asyncStep`, or an `asyncReactor`.
 *
 * @module
 */
import type { AnyReactorDefinition, AsyncReactorNode, AsyncStepNode, GraphNode } from '../../../dsl/definition.js';

/** The async step node at `path`, or undefined when the definition has none there. */
export function findAsyncStep(root: AnyReactorDefinition, path: string): AsyncStepNode | undefined {
  const node = nodeAt(root, path);
  return node?.kind === 'async-step' ? node : undefined;
}

/** The `asyncReactor` node at `path`, or undefined when the definition has none there. */
export function findAsyncReactor(root: AnyReactorDefinition, path: string): AsyncReactorNode | undefined {
  const node = nodeAt(root, path);
  return node?.kind === 'async-reactor' ? node : undefined;
}

/** The node at `path`, through compose and map-of-reactor frames. */
function nodeAt(root: AnyReactorDefinition, path: string): GraphNode | undefined {
  const segments = path.split('.');
  let def: AnyReactorDefinition | undefined = root;
  for (let i = 0; i < segments.length - 1 && def; i++) {
    const node = def.byName.get(segments[i]!.replace(/\[\d+\]$/, ''));
    if (node?.kind === 'compose' || node?.kind === 'async-reactor') def = node.reactor;
    else if (node?.kind === 'map' && node.element.kind === 'reactor') def = node.element.reactor;
    else def = undefined;
  }
  return def?.byName.get(segments[segments.length - 1]!);
}
