/**
 * The paths of a reactor's sleep and interrupt steps, composed children included: what a map
 * refuses as its element, and what messages name.
 *
 * @module
 */
import { onNode, type AnyReactorDefinition } from './nodes.js';

/** Every sleep path of a reactor, composed children included (for the map refusal). */
export function sleepPaths(reactor: AnyReactorDefinition, prefix = '', depth = 0): string[] {
  if (depth > 32) return [];
  return reactor.nodes.flatMap((node) =>
    onNode<string[]>(node, {
      step: () => [],
      'async-step': () => [],
      interrupt: () => [],
      sleep: () => [`${prefix}${node.name}`],
      'wait-for-event': () => [],
      compose: (n) => sleepPaths(n.reactor, `${prefix}${n.name}.`, depth + 1),
      // the child is an execution of its own: its sleeps park it, not this one
      'async-reactor': () => [],
      map: () => [],
    }),
  );
}

/** Every interrupt and event-wait path of a reactor (the steps that pause it), composed children included (for messages and map refusal). */
export function interruptPaths(reactor: AnyReactorDefinition, prefix = '', depth = 0): string[] {
  if (depth > 32) return [];
  return reactor.nodes.flatMap((node) =>
    onNode<string[]>(node, {
      step: () => [],
      'async-step': () => [],
      interrupt: () => [`${prefix}${node.name}`],
      sleep: () => [],
      // a wait for an event pauses the execution as an interrupt does
      'wait-for-event': () => [`${prefix}${node.name}`],
      compose: (n) => interruptPaths(n.reactor, `${prefix}${n.name}.`, depth + 1),
      'async-reactor': (n) => interruptPaths(n.reactor, `${prefix}${n.name}.`, depth + 1),
      map: (n) =>
        n.element.kind === 'reactor' ? interruptPaths(n.element.reactor, `${prefix}${n.name}[].`, depth + 1) : [],
    }),
  );
}
