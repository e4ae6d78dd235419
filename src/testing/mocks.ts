import type { AnyReactorDefinition, GraphNode, StepNode } from '../dsl/definition.js';
import type { StepContext } from '../dsl/context.js';

/** A mock: a replacement body, or a plain value the step returns. */
export type StepMock =
  ((args: never, ctx: StepContext) => unknown) | { readonly value: unknown } | { readonly throws: unknown };

/**
 * A copy of `definition` with some step bodies replaced. Keys are step names; a composed
 * child's steps are named by path (`payment.charge`). Compensate and undo hooks are kept.
 * Mocked values go through a JSON round trip, as persisted results do.
 */
export function mockSteps<R extends AnyReactorDefinition>(definition: R, mocks: Readonly<Record<string, StepMock>>): R {
  const used = new Set<string>();
  const result = replace(definition, mocks, '', used);
  const unknown = Object.keys(mocks).filter((k) => !used.has(k));
  if (unknown.length > 0)
    throw new Error(
      `mockSteps: no step named ${unknown.map((u) => `"${u}"`).join(', ')} in reactor "${definition.name}"`,
    );
  return result as R;
}

function replace(
  definition: AnyReactorDefinition,
  mocks: Readonly<Record<string, StepMock>>,
  prefix: string,
  used: Set<string>,
): AnyReactorDefinition {
  const nodes = definition.nodes.map((node): GraphNode => {
    const path = prefix + node.name;
    if (node.kind === 'compose') return { ...node, reactor: replace(node.reactor, mocks, `${path}.`, used) };
    const mock = mocks[path];
    if (node.kind !== 'step' || mock === undefined) return node;
    used.add(path);
    return { ...node, hooks: { ...node.hooks, run: toBody(mock) } } satisfies StepNode;
  });
  const byName = new Map(nodes.map((n) => [n.name, n]));
  return Object.freeze({ ...definition, nodes, byName });
}

function toBody(mock: StepMock): StepNode['hooks']['run'] {
  if (typeof mock === 'function') return async (args, ctx) => roundTrip(await mock(args, ctx));
  if ('throws' in mock) {
    return () => {
      throw mock.throws;
    };
  }
  return () => roundTrip(mock.value);
}

function roundTrip(value: unknown): unknown {
  return value === undefined || typeof value !== 'object' || value === null || isSignal(value)
    ? value
    : JSON.parse(JSON.stringify(value));
}

function isSignal(value: object): boolean {
  return Object.getOwnPropertySymbols(value).some((s) => s === Symbol.for('ts-reactor.signal'));
}
