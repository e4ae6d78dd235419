/**
 * `coordinationOf`: which steps of a built reactor coordinate, on what. It reads a built
 * definition, so it sits above the builder; the declarations themselves are `coordination.ts`.
 *
 * @module
 */
import type { CoordinationKind, CoordinationSpec } from './coordination.js';
import { onNode, type AnyReactorDefinition } from './definition.js';

/** One coordination declaration of a reactor, found by {@link coordinationOf}. */
export interface CoordinationDeclaration {
  /** The reactor that declares it (a composed child's name for its own declarations). */
  readonly reactor: string;
  /** The step path (`charge`, `payments.charge`, `items[]`); undefined for a reactor-level declaration. */
  readonly step: string | undefined;
  readonly kind: CoordinationKind;
  /** The validated options (durations in ms; the key function, and a limit function, as declared). */
  readonly spec: CoordinationSpec;
}

/**
 * Lists which steps of a reactor coordinate, on what, with which options: its reactor-level
 * declarations (`step` undefined), its steps', map elements' (`name[]`) and, recursively,
 * those of composed reactors (paths prefixed by the compose step's name). Several semaphores or
 * rate limits of one declaration list are one entry each.
 */
export function coordinationOf(reactor: AnyReactorDefinition): readonly CoordinationDeclaration[] {
  const out: CoordinationDeclaration[] = [];
  const visit = (def: AnyReactorDefinition, prefix: string, depth: number): void => {
    if (depth > 32) return;
    for (const spec of def.coordination)
      out.push({ reactor: def.name, step: prefix === '' ? undefined : prefix.slice(0, -1), kind: spec.kind, spec });
    for (const node of def.nodes) {
      const path = `${prefix}${node.name}`;
      const own = (specs: readonly CoordinationSpec[], step: string): void => {
        for (const spec of specs) out.push({ reactor: def.name, step, kind: spec.kind, spec });
      };
      onNode<void>(node, {
        step: (n) => own(n.coordination, path),
        'async-step': (n) => own(n.coordination, path),
        interrupt: () => undefined,
        sleep: () => undefined,
        'wait-for-event': () => undefined,
        compose: (n) => visit(n.reactor, `${path}.`, depth + 1),
        'async-reactor': (n) => visit(n.reactor, `${path}.`, depth + 1),
        map: (n) =>
          n.element.kind === 'step'
            ? own(n.element.node.coordination, `${path}[]`)
            : visit(n.element.reactor, `${path}[].`, depth + 1),
      });
    }
  };
  visit(reactor, '', 0);
  return out;
}
