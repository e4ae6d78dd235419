/**
 * Registering a reactor registers the `asyncReactor` children it dispatches (also inside composed
 * reactors and maps), so a worker that knows the parent can run the children.
 *
 * @module
 */
import { onNode, type AnyReactorDefinition } from '../../../dsl/definition.js';

/**
 * Adds `reactor` and, recursively, every reactor it dispatches with `asyncReactor`. A reactor
 * already in the registry (the same definition) is taken as registered with its children: every
 * write to an engine's registry must therefore go through here, never a plain `set`.
 */
export function registerTree(registry: Map<string, AnyReactorDefinition>, reactor: AnyReactorDefinition): void {
  if (registry.get(reactor.name) === reactor) return;
  registry.set(reactor.name, reactor);
  registerChildren(registry, reactor);
}

/** Children of a reactor that runs inline (compose, map element): not registered itself, but what it dispatches is. */
function registerChildren(registry: Map<string, AnyReactorDefinition>, reactor: AnyReactorDefinition): void {
  for (const node of reactor.nodes) {
    onNode<void>(node, {
      step: () => undefined,
      'async-step': () => undefined,
      interrupt: () => undefined,
      sleep: () => undefined,
      'wait-for-event': () => undefined,
      compose: (n) => registerChildren(registry, n.reactor),
      'async-reactor': (n) => registerTree(registry, n.reactor),
      map: (n) => {
        if (n.element.kind === 'reactor') registerChildren(registry, n.element.reactor);
      },
    });
  }
}
