/**
 * Definition validation, run once when a reactor is built: unknown references, cycles, unwired
 * required inputs, a bad `returns`. Every error names the reactor, the step and the fix.
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import type { Arg } from './args.js';
import type { Contract } from './contract.js';
import type { GraphNode } from './definition.js';

/** The steps an argument map and a `waitFor` list depend on, without duplicates. */
export function dependenciesOf(
  args: Readonly<Record<string, Arg<unknown>>> | undefined,
  waitFor: readonly string[],
): readonly string[] {
  const deps = new Set<string>();
  for (const arg of Object.values(args ?? {})) if (arg.source.kind === 'result') deps.add(arg.source.step);
  for (const name of waitFor) deps.add(name);
  return Object.freeze([...deps]);
}

interface GraphToCheck {
  readonly name: string;
  readonly contract: Contract;
  readonly nodes: readonly GraphNode[];
  readonly byName: ReadonlyMap<string, GraphNode>;
  readonly returns: string | undefined;
}

/** Throws a {@link DefinitionError} for the first problem found. */
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

function checkWiring(graph: GraphToCheck, node: GraphNode, fail: (step: string, message: string) => never): void {
  const contract = node.kind === 'step' ? node.contract : node.kind === 'compose' ? node.reactor.contract : undefined;
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
