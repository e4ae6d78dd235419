/**
 * A reactor definition's fingerprint: a stable hash of what decides how a persisted execution of
 * it continues (docs/decisions/082). A worker runs a persisted execution only on a definition of
 * the fingerprint its record carries (or one that declares a migration from it).
 *
 * Covered: the reactor's name and hand-off (`background`); each node's name, kind (`step`,
 * `asyncStep`, interrupt, `compose`, `asyncReactor`, `map`), dependencies (result arguments and
 * `waitFor`, as a set), coordination declarations (each one's kind, a rate limit's `name`, a
 * period's `every`, an ordered lock's `strict`); a map's element (a step's shape, or the element
 * reactor's fingerprint), `atomic` and whether it fans out; a composed reactor's fingerprint; the
 * reactor-level coordination declarations. Not covered (functions cannot be hashed, tuning does
 * not change how a record reads): step bodies and hooks, key functions, argument paths inside a
 * result, contracts, retry policies, timeouts, limits, TTLs and waits, `returns`, `version`.
 *
 * It reads the graph's nodes (`reactor/nodes.ts`) and a definition being built, before it has a
 * fingerprint of its own.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { onNode, type GraphNode, type NodeKind } from './reactor/nodes.js';

/** Hex characters of a fingerprint. */
export const FINGERPRINT_LENGTH = 16;

/** The part of a coordination declaration the fingerprint reads. */
interface SpecView {
  readonly kind: string;
  readonly name?: string | undefined;
  readonly every?: unknown;
  readonly strict?: boolean;
}

/**
 * The name each node kind is hashed under. A sleep hashes as a plain step, as it did when it was
 * one: a new name would change the fingerprint of every reactor that sleeps.
 */
const HASHED_KIND: Readonly<Record<NodeKind, string>> = {
  step: 'step',
  'async-step': 'asyncStep',
  interrupt: 'interrupt',
  sleep: 'step',
  'wait-for-event': 'waitForEvent',
  compose: 'compose',
  'async-reactor': 'asyncReactor',
  map: 'map',
};

/** The part of a reactor definition the fingerprint reads (a built definition, or one being built). */
export interface DefinitionView {
  readonly name: string;
  readonly nodes: readonly GraphNode[];
  readonly coordination: readonly SpecView[];
  readonly background: unknown;
  /** A built definition's own fingerprint (children are read through it, not hashed again). */
  readonly fingerprint?: string;
}

/** The fingerprint of a definition: the first {@link FINGERPRINT_LENGTH} hex characters of a sha256 over its canonical shape. */
export function fingerprintOf(definition: DefinitionView): string {
  const json = JSON.stringify(shapeOf(definition));
  return createHash('sha256').update(json).digest('hex').slice(0, FINGERPRINT_LENGTH);
}

/** The canonical shape of a definition: plain JSON, arrays in declaration order, sets sorted. */
function shapeOf(definition: DefinitionView): unknown {
  return [
    'reactor/1',
    definition.name,
    definition.background ?? null,
    definition.coordination.map(specShape),
    definition.nodes.map(nodeShape),
  ];
}

function nodeShape(node: GraphNode): unknown {
  const deps = [...node.dependsOn].sort();
  const shape = (...rest: unknown[]): unknown => [HASHED_KIND[node.kind], node.name, deps, ...rest];
  return onNode<unknown>(node, {
    step: (n) => shape(n.coordination.map(specShape)),
    'async-step': (n) => shape(n.coordination.map(specShape)),
    interrupt: () => shape([]),
    sleep: () => shape([]),
    'wait-for-event': (n) => shape(n.wait.event, n.wait.matchOn),
    compose: (n) => shape(childFingerprint(n.reactor)),
    'async-reactor': (n) => shape(childFingerprint(n.reactor)),
    map: (n) => {
      const each = n.element.kind === 'step' ? nodeShape(n.element.node) : childFingerprint(n.element.reactor);
      return shape(each, n.atomic, n.fanOut !== undefined);
    },
  });
}

function specShape(spec: SpecView): unknown {
  return [spec.kind, spec.name ?? null, spec.every ?? null, spec.strict ?? null];
}

function childFingerprint(child: DefinitionView): string {
  return child.fingerprint ?? fingerprintOf(child);
}
