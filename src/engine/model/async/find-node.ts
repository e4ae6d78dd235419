/**
 * Finds an `asyncStep` node of a reactor by its path (`ship`, `pay.ship` inside the composed
 * step `pay`, `items[2].ship` inside a map of reactors).
 *
 * @module
 */
import type { AnyReactorDefinition, StepNode } from '../../../dsl/definition.js';

/** The async step node at `path`, or undefined when the definition has none there. */
export function findAsyncStep(root: AnyReactorDefinition, path: string): StepNode | undefined {
  const segments = path.split('.');
  let def: AnyReactorDefinition | undefined = root;
  for (let i = 0; i < segments.length - 1 && def; i++) {
    const node = def.byName.get(segments[i]!.replace(/\[\d+\]$/, ''));
    if (node?.kind === 'compose') def = node.reactor;
    else if (node?.kind === 'map' && node.element.kind === 'reactor') def = node.element.reactor;
    else def = undefined;
  }
  const last = def?.byName.get(segments[segments.length - 1]!);
  return last?.kind === 'step' && last.async === true ? last : undefined;
}
