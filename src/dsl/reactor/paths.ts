/**
 * The paths of a reactor's sleep and interrupt steps, composed children included: what a map
 * refuses as its element, and what messages name.
 *
 * @module
 */
import type { AnyReactorDefinition } from './nodes.js';

export function sleepPaths(reactor: AnyReactorDefinition, prefix = '', depth = 0): string[] {
  if (depth > 32) return [];
  return reactor.nodes.flatMap((node) => {
    if (node.kind === 'step') return node.sleep ? [`${prefix}${node.name}`] : [];
    if (node.kind === 'compose') return node.async ? [] : sleepPaths(node.reactor, `${prefix}${node.name}.`, depth + 1);
    return [];
  });
}

/** Every interrupt path of a reactor, composed children included (for messages and map refusal). */
export function interruptPaths(reactor: AnyReactorDefinition, prefix = '', depth = 0): string[] {
  if (depth > 32) return [];
  return reactor.nodes.flatMap((node) => {
    if (node.kind === 'step') return node.interrupt ? [`${prefix}${node.name}`] : [];
    if (node.kind === 'compose') return interruptPaths(node.reactor, `${prefix}${node.name}.`, depth + 1);
    return node.element.kind === 'reactor'
      ? interruptPaths(node.element.reactor, `${prefix}${node.name}[].`, depth + 1)
      : [];
  });
}
