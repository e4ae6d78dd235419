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
 * Written without importing the definition types (`reactor.ts` imports this file): it reads a
 * structural view of them.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** Hex characters of a fingerprint. */
export const FINGERPRINT_LENGTH = 16;

/** The part of a coordination declaration the fingerprint reads. */
interface SpecView {
  readonly kind: string;
  readonly name?: string | undefined;
  readonly every?: unknown;
  readonly strict?: boolean;
}

/** The part of a graph node the fingerprint reads. */
interface NodeView {
  readonly kind: 'step' | 'compose' | 'map';
  readonly name: string;
  readonly dependsOn: readonly string[];
  readonly coordination?: readonly SpecView[];
  readonly interrupt?: unknown;
  readonly async?: true;
  readonly reactor?: DefinitionView;
  readonly element?:
    { readonly kind: 'step'; readonly node: NodeView } | { readonly kind: 'reactor'; readonly reactor: DefinitionView };
  readonly atomic?: boolean;
  readonly fanOut?: unknown;
}

/** The part of a reactor definition the fingerprint reads (a built definition, or one being built). */
export interface DefinitionView {
  readonly name: string;
  readonly nodes: readonly NodeView[];
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

function nodeShape(node: NodeView): unknown {
  const deps = [...node.dependsOn].sort();
  if (node.kind === 'compose')
    return [node.async === true ? 'asyncReactor' : 'compose', node.name, deps, childFingerprint(node.reactor)];
  if (node.kind === 'map') {
    const element = node.element;
    const each =
      element === undefined
        ? null
        : element.kind === 'step'
          ? nodeShape(element.node)
          : childFingerprint(element.reactor);
    return ['map', node.name, deps, each, node.atomic ?? true, node.fanOut !== undefined];
  }
  const kind = node.interrupt !== undefined ? 'interrupt' : node.async === true ? 'asyncStep' : 'step';
  return [kind, node.name, deps, (node.coordination ?? []).map(specShape)];
}

function specShape(spec: SpecView): unknown {
  return [spec.kind, spec.name ?? null, spec.every ?? null, spec.strict ?? null];
}

function childFingerprint(child: DefinitionView | undefined): string | null {
  if (child === undefined) return null;
  return child.fingerprint ?? fingerprintOf(child);
}
