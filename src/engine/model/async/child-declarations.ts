/**
 * What an `asyncReactor` child will hold, as far as the dispatcher can tell before enqueue: its
 * reactor-level declarations (keyed on its validated input) and the step-level ones of every step
 * whose arguments come from that input alone (inputs and constants, validated with the step's
 * contract), also inside the reactors it composes or dispatches. A step that reads another
 * step's result cannot be keyed here: it is left to the child (docs/decisions/033).
 *
 * @module
 */
import type { CoordinationSpec } from '../../../dsl/coordination.js';
import {
  onNode,
  type AnyReactorDefinition,
  type AsyncReactorNode,
  type BodyNode,
  type ComposeNode,
  type GraphNode,
} from '../../../dsl/definition.js';
import { validateContract } from '../../../dsl/contract.js';
import { resolveArgs } from '../resolve-args.js';

/** Declarations a unit will take, with the values their keys are computed from. */
export interface Declared {
  readonly specs: readonly CoordinationSpec[];
  readonly args: unknown;
  /** Who the keys are computed for (the unit's step, or the child reactor). */
  readonly keyScope: { readonly reactor: string; readonly step: string | undefined };
  /** Named in the refusal when it is not the dispatched unit itself (a step of the child). */
  readonly declaredBy?: string;
}

/** A lock, or a semaphore of limit 1 or of a limit function (which may evaluate to 1). */
const EXCLUSIVE = (s: CoordinationSpec): boolean =>
  s.kind === 'lock' || (s.kind === 'semaphore' && (s.limit === 1 || typeof s.limit === 'function'));

/** The child's declarations computable from its validated `input`: reactor level first, then its steps in definition order. */
export async function childDeclarations(
  child: AnyReactorDefinition,
  input: Record<string, unknown>,
  prefix = '',
): Promise<Declared[]> {
  const out: Declared[] = [
    {
      specs: child.coordination,
      args: input,
      keyScope: { reactor: child.name, step: undefined },
      ...(prefix === '' ? {} : { declaredBy: `reactor "${child.name}" at "${prefix.slice(0, -1)}"` }),
    },
  ];
  for (const node of child.nodes) out.push(...(await nodeDeclarations(child, node, input, prefix)));
  return out;
}

async function nodeDeclarations(
  child: AnyReactorDefinition,
  node: GraphNode,
  input: Record<string, unknown>,
  prefix: string,
): Promise<Declared[]> {
  try {
    return await computable(child, node, input, prefix + node.name);
  } catch {
    return []; // a transform that throws here throws in the child too, which reports it
  }
}

async function computable(
  child: AnyReactorDefinition,
  node: GraphNode,
  input: Record<string, unknown>,
  path: string,
): Promise<Declared[]> {
  if (!fromInputOnly(node)) return [];
  const none = (): Promise<Declared[]> => Promise.resolve([]);
  return onNode(node, {
    step: (n) => stepDeclarations(child, n, input, path),
    'async-step': (n) => stepDeclarations(child, n, input, path),
    interrupt: none,
    sleep: none,
    'wait-for-event': none,
    compose: (n) => composedDeclarations(n, input, path),
    'async-reactor': (n) => composedDeclarations(n, input, path),
    map: none,
  });
}

/** What a composed reactor (inline or `asyncReactor`) declares, for the input its arguments give it. */
async function composedDeclarations(
  node: ComposeNode | AsyncReactorNode,
  input: Record<string, unknown>,
  path: string,
): Promise<Declared[]> {
  const raw = resolveArgs(node.args, { input, results: new Map() }, path, Object.keys(node.reactor.contract.fields));
  const validated = await validateContract(node.reactor.contract, raw);
  return validated.ok ? childDeclarations(node.reactor, validated.value, `${path}.`) : [];
}

/** What a step (plain or async) declares that excludes: its locks and single-slot semaphores, with its arguments. */
async function stepDeclarations(
  child: AnyReactorDefinition,
  node: BodyNode,
  input: Record<string, unknown>,
  path: string,
): Promise<Declared[]> {
  if (!node.coordination.some(EXCLUSIVE)) return [];
  let args: Record<string, unknown> = resolveArgs(
    node.args,
    { input, results: new Map() },
    path,
    node.contract ? Object.keys(node.contract.fields) : undefined,
  );
  if (node.contract) {
    const validated = await validateContract(node.contract, args);
    if (!validated.ok) return []; // the child reports its invalid arguments itself
    args = validated.value;
  }
  return [
    {
      specs: node.coordination,
      args,
      keyScope: { reactor: child.name, step: path },
      declaredBy: `step "${path}" of reactor "${child.name}"`,
    },
  ];
}

/** True when none of the node's arguments reads another step's result (a missing map is the whole input). */
function fromInputOnly(node: GraphNode): boolean {
  return node.args === undefined || Object.values(node.args).every((arg) => arg.source.kind !== 'result');
}
