import { onNode, type AnyReactorDefinition, type BodyNode, type GraphNode } from '../dsl/definition.js';
import type { StepContext } from '../dsl/context.js';
import type { StepArgsOf, StepsOf } from '../dsl/reactor.js';
import type { Signal } from '../dsl/signals.js';

/**
 * A mock: a replacement body, or a plain value the step returns. `V` is the step's result type
 * (the value, or what the body returns or resolves to; a body may also return signals); `A` is
 * what the body receives as arguments (the step's own `args`, as its real body does).
 */
export type StepMock<V = unknown, A = never> =
  | ((args: A, ctx: StepContext) => V | Signal | Promise<V | Signal>)
  | { readonly value: V }
  | { readonly throws: unknown };

/**
 * The mocks of a reactor's steps, typed by its step names, argument types and result types: a
 * misspelt step, a value of the wrong shape or a body that reads an argument the step does not
 * have does not compile. Steps inside a composed reactor are named by path (`payment.charge`)
 * and take an untyped mock.
 */
export type StepMocks<R> = {
  readonly [K in keyof StepsOf<R> & string]?: StepMock<StepsOf<R>[K], MockArgs<StepArgsOf<R>, K>>;
} & { readonly [path: `${string}.${string}`]: StepMock };

/** A mock's `args` for step `K`: the step's arguments; `never` for a step whose body is not replaced by arguments (compose, map, interrupt, sleep, waitForEvent). */
type MockArgs<G, K extends string> = K extends keyof G ? G[K] : never;

/**
 * A copy of `definition` with some step bodies replaced. Keys are step names; a composed
 * child's steps are named by path (`payment.charge`). Compensate and undo hooks are kept.
 * Mocked values go through a JSON round trip, as persisted results do.
 */
export function mockSteps<R extends AnyReactorDefinition>(definition: R, mocks: StepMocks<R>): R {
  const used = new Set<string>();
  const result = replace(definition, mocks as Readonly<Record<string, StepMock>>, '', used);
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
    const mock = mocks[path];
    const body = <N extends BodyNode>(n: N): N => {
      if (mock === undefined) return n;
      used.add(path);
      return { ...n, hooks: { ...n.hooks, run: toBody(mock) } };
    };
    // an interrupt or a sleep has no body: its mock is taken and changes nothing
    const bodiless = <N extends GraphNode>(n: N): N => {
      if (mock !== undefined) used.add(path);
      return n;
    };
    return onNode<GraphNode>(node, {
      step: body,
      'async-step': body,
      interrupt: bodiless,
      sleep: bodiless,
      'wait-for-event': bodiless,
      compose: (n) => ({ ...n, reactor: replace(n.reactor, mocks, `${path}.`, used) }),
      'async-reactor': (n) => ({ ...n, reactor: replace(n.reactor, mocks, `${path}.`, used) }),
      map: (n) => n,
    });
  });
  const byName = new Map(nodes.map((n) => [n.name, n]));
  return Object.freeze({ ...definition, nodes, byName });
}

function toBody(mock: StepMock): BodyNode['hooks']['run'] {
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
