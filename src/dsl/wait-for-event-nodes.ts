/**
 * Finding a reactor's `.waitForEvent` nodes: one by path, and the `matchOn` lists declared for an
 * event name (what a sent event computes its match keys with). The declaration itself is
 * `wait-for-event.ts`.
 *
 * @module
 */
import type { AnyReactorDefinition, WaitForEventNode } from './definition.js';

/** The wait-for-event node at `path` (`payment`, `checkout.payment` inside a composed reactor), if any. */
export function findEventWait(reactor: AnyReactorDefinition, path: string): WaitForEventNode | undefined {
  const [head, ...rest] = path.split('.');
  const node = reactor.byName.get(head ?? '');
  if (!node) return undefined;
  if (rest.length === 0) return node.kind === 'wait-for-event' ? node : undefined;
  return node.kind === 'compose' || node.kind === 'async-reactor'
    ? findEventWait(node.reactor, rest.join('.'))
    : undefined;
}

/**
 * The distinct `matchOn` field lists of every wait for `event` in `reactors` and the reactors
 * they compose or start (each list once, in its declared order): what a sent event computes its
 * match keys with.
 */
export function matchOnListsFor(reactors: Iterable<AnyReactorDefinition>, event: string): readonly string[][] {
  const lists = new Map<string, string[]>();
  const seen = new Set<AnyReactorDefinition>();
  const visit = (reactor: AnyReactorDefinition, depth: number): void => {
    if (seen.has(reactor) || depth > 32) return;
    seen.add(reactor);
    for (const node of reactor.nodes) {
      if (node.kind === 'wait-for-event' && node.wait.event === event)
        lists.set(JSON.stringify(node.wait.matchOn), [...node.wait.matchOn]);
      if (node.kind === 'compose' || node.kind === 'async-reactor') visit(node.reactor, depth + 1);
      if (node.kind === 'map' && node.element.kind === 'reactor') visit(node.element.reactor, depth + 1);
    }
  };
  for (const reactor of reactors) visit(reactor, 0);
  return [...lists.values()];
}
