/**
 * Definition validation, run once when a reactor is built: unknown references, cycles, unwired
 * required inputs, a bad `returns`.
 *
 * @module
 */
import { DefinitionError } from '../../errors.js';
import type { Contract } from '../contract.js';
import { onNode, type GraphNode, type NodeHandlers } from './nodes.js';

/** What validation reads of a reactor being built. */
export interface GraphToCheck {
  readonly name: string;
  readonly contract: Contract;
  readonly nodes: readonly GraphNode[];
  readonly byName: ReadonlyMap<string, GraphNode>;
  readonly returns: string | undefined;
}

/**
 * Definition validation, run once when a reactor is built: unknown references, cycles, unwired
 * required inputs, a bad `returns`. Throws a {@link DefinitionError} for the first problem
 * found; every error names the reactor, the step and the fix.
 */
export function validateGraph(graph: GraphToCheck): void {
  const fail = (step: string | undefined, message: string): never => {
    throw new DefinitionError(
      `reactor "${graph.name}"${step === undefined ? '' : `, step "${step}"`}: ${message}`,
      graph.name,
      step,
    );
  };
  for (const node of graph.nodes) {
    for (const dep of node.dependsOn) {
      if (dep === node.name) fail(node.name, `depends on itself; remove "${dep}" from its arguments or waitFor`);
      if (!graph.byName.has(dep))
        fail(node.name, `depends on unknown step "${dep}"; declare a step named "${dep}" or fix the reference`);
    }
    const args = node.kind === 'map' ? { source: node.source } : (node.args ?? {});
    for (const [argName, arg] of Object.entries(args)) {
      if (arg.source.kind === 'input' && !(arg.source.name in graph.contract.fields)) {
        fail(
          node.name,
          `argument "${argName}" reads reactor input "${arg.source.name}", which the reactor does not declare; add it to .input({...})`,
        );
      }
    }
    checkWiring(graph, node, fail);
  }
  const cycle = findCycle(graph);
  if (cycle) fail(cycle[0], `dependency cycle ${cycle.join(' -> ')}; break it by removing one of these dependencies`);
  if (graph.returns !== undefined && !graph.byName.has(graph.returns)) {
    fail(undefined, `returns unknown step "${graph.returns}"; name a declared step`);
  }
}

/** The contract a node's arguments are wired against: a placed step definition's, or a child reactor's input. */
const WIRED_CONTRACT: NodeHandlers<Contract | undefined> = {
  step: (n) => n.contract,
  'async-step': (n) => n.contract,
  interrupt: () => undefined,
  sleep: () => undefined,
  'wait-for-event': () => undefined,
  compose: (n) => n.reactor.contract,
  'async-reactor': (n) => n.reactor.contract,
  map: () => undefined,
};

function checkWiring(graph: GraphToCheck, node: GraphNode, fail: (step: string, message: string) => never): void {
  const contract = onNode<Contract | undefined>(node, WIRED_CONTRACT);
  if (!contract) return;
  for (const field of contract.required) {
    if (node.args && field in node.args) continue;
    if (field in graph.contract.fields) continue;
    fail(
      node.name,
      `required input "${field}" is not wired; add args: ($) => ({ ${field}: ... }) or a reactor input named "${field}"`,
    );
  }
  for (const argName of Object.keys(node.args ?? {})) {
    if (!(argName in contract.fields))
      fail(
        node.name,
        `argument "${argName}" is not an input of this step; its inputs are: ${Object.keys(contract.fields).join(', ') || '(none)'}`,
      );
  }
}

function findCycle(graph: GraphToCheck): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'visiting') return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of graph.byName.get(name)?.dependsOn ?? []) {
      const found = visit(dep);
      if (found) return found;
    }
    stack.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const node of graph.nodes) {
    const found = visit(node.name);
    if (found) return found.reverse();
  }
  return undefined;
}
