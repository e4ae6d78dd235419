/**
 * Registering a reactor registers the `asyncReactor` children it dispatches (also inside composed
 * reactors and maps), so a worker that knows the parent can run the children.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';

/**
 * Adds `reactor` and, recursively, every reactor it dispatches with `asyncReactor`. A reactor
 * already in the registry (the same definition) is taken as registered with its children: every
 * write to an engine's registry must therefore go through here, never a plain `set`.
 */
export function registerTree(registry: Map<string, AnyReactorDefinition>, reactor: AnyReactorDefinition): void {
  if (registry.get(reactor.name) === reactor) return;
  registry.set(reactor.name, reactor);
  for (const node of reactor.nodes) {
    if (node.kind === 'compose') {
      if (node.async === true) registerTree(registry, node.reactor);
      else registerChildren(registry, node.reactor);
    } else if (node.kind === 'map' && node.element.kind === 'reactor') registerChildren(registry, node.element.reactor);
  }
}

/** Children of a reactor that runs inline (compose, map element): not registered itself, but what it dispatches is. */
function registerChildren(registry: Map<string, AnyReactorDefinition>, reactor: AnyReactorDefinition): void {
  for (const node of reactor.nodes) {
    if (node.kind === 'compose') {
      if (node.async === true) registerTree(registry, node.reactor);
      else registerChildren(registry, node.reactor);
    } else if (node.kind === 'map' && node.element.kind === 'reactor') registerChildren(registry, node.element.reactor);
  }
}
