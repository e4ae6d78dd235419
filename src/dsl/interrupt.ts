/**
 * Interrupt steps: a step that pauses the execution until an external resume delivers a payload,
 * validated against the interrupt's schema. The step's result is the validated payload.
 *
 * The declaration and payload validation are `interrupt-spec.ts`; `interruptPaths` is
 * `reactor/paths.ts` (the builder refuses a map over a reactor that pauses). Both are re-exported
 * here.
 *
 * @module
 */
import type { AnyReactorDefinition, InterruptNode } from './definition.js';

export * from './interrupt-spec.js';
export { interruptPaths } from './reactor.js';

/** An interrupt step node at `path` (`approve`, `review.approve` inside a composed reactor), if any. */
export function findInterrupt(reactor: AnyReactorDefinition, path: string): InterruptNode | undefined {
  const [head, ...rest] = path.split('.');
  const node = reactor.byName.get(head ?? '');
  if (!node) return undefined;
  if (rest.length === 0) return node.kind === 'interrupt' ? node : undefined;
  return node.kind === 'compose' || node.kind === 'async-reactor'
    ? findInterrupt(node.reactor, rest.join('.'))
    : undefined;
}
