import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { DefinitionError, defineStep, reactor } from '../../src/index.js';

function definitionError(fn: () => unknown): DefinitionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DefinitionError);
    return error as DefinitionError;
  }
  throw new Error('expected a DefinitionError');
}

describe('definition validation at build time', () => {
  test('a cycle names the reactor and both steps', () => {
    const error = definitionError(() =>
      reactor('loop')
        // prettier-ignore
        // @ts-expect-error -- forward reference (the compiler already refuses it)
        .step('a', { waitFor: ['b'], run: () => 1 })
        .step('b', { args: ($) => ({ a: $.result('a') }), run: () => 2 })
        .build(),
    );
    expect(error.message).toContain('reactor "loop"');
    expect(error.message).toMatch(/cycle (a -> b -> a|b -> a -> b)/);
    expect(error.reactor).toBe('loop');
  });

  test('a dangling reference names the step and the unknown step', () => {
    const error = definitionError(() =>
      reactor('r')
        // prettier-ignore
        // @ts-expect-error -- unknown step
        .step('a', { waitFor: ['ghost'], run: () => 1 })
        .build(),
    );
    expect(error.message).toContain('step "a"');
    expect(error.message).toContain('unknown step "ghost"');
    expect(error.step).toBe('a');
  });

  test('a duplicate name is refused when added', () => {
    const error = definitionError(() =>
      reactor('r')
        .step('a', { run: () => 1 })
        // prettier-ignore
        // @ts-expect-error -- duplicate
        .step('a', { run: () => 2 }),
    );
    expect(error.message).toContain('"a" is defined twice');
  });

  test('an unwired required input of a step definition names the input and the fix', () => {
    const charge = defineStep({ input: { amount: z.number(), currency: z.string().default('EUR') }, run: () => 1 });
    const error = definitionError(() => reactor('r').input({ orderId: z.string() }).step('charge', charge).build());
    expect(error.message).toContain('required input "amount" is not wired');
    expect(error.message).toContain('args: ($) => ({ amount: ... })');
    // An input with a default is not required; a reactor input of the same name wires it.
    expect(() => reactor('ok').input({ amount: z.number() }).step('charge', charge).build()).not.toThrow();
  });

  test('reading an undeclared reactor input is refused', () => {
    const error = definitionError(() =>
      reactor('r')
        .input({ a: z.string() })
        // prettier-ignore
        // @ts-expect-error -- 'b' is not an input
        .step('s', { args: ($) => ({ b: $.input('b') }), run: () => 1 })
        .build(),
    );
    expect(error.message).toContain('reactor input "b"');
  });

  test('wiring a name that is not an input of the step definition is refused', () => {
    const s = defineStep({ input: { a: z.number() }, run: () => 1 });
    const error = definitionError(() =>
      reactor('r')
        .step('s', s, { args: ($) => ({ a: $.value(1), zzz: $.value(2) }) })
        .build(),
    );
    expect(error.message).toContain('argument "zzz" is not an input of this step');
  });

  test('bad retry options and a bad returns are refused', () => {
    expect(
      definitionError(() => reactor('r').step('s', { retry: { maxAttempts: 0 }, run: () => 1 })).message,
    ).toContain('maxAttempts must be an integer >= 1');
    expect(
      definitionError(() =>
        reactor('r').step('s', { retry: { maxAttempts: 2, baseDelay: 'soon' as never }, run: () => 1 }),
      ).message,
    ).toContain('baseDelay');
    // prettier-ignore
    // @ts-expect-error -- unknown step
    expect(definitionError(() => reactor('r').step('s', { run: () => 1 }).returns('nope')).message).toContain('returns unknown step "nope"');
  });

  test('definitions are frozen data', () => {
    const r = reactor('r')
      .step('a', { run: () => 1 })
      .build();
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r.nodes)).toBe(true);
    expect(r.nodes.map((n) => n.name)).toEqual(['a']);
  });
});

describe('toMermaid', () => {
  test('draws nodes, result edges, dotted waitFor edges and nested kinds', () => {
    const child = reactor('child')
      .step('x', { run: () => 1 })
      .returns('x');
    const r = reactor('r')
      .input({ items: z.array(z.number()) })
      .step('a', { run: () => ({ v: 1 }) })
      .step('b', { args: ($) => ({ v: $.result('a', 'v') }), run: () => 2 })
      .step('c', { waitFor: ['a'], run: () => 3 })
      .compose('d', child, { waitFor: ['b'] })
      .map('e', { source: ($) => $.input('items'), each: child, args: () => ({}) })
      .returns('b');
    expect(r.toMermaid()).toBe(
      [
        'flowchart TD',
        '  s_a["a"]',
        '  s_b["b ⟶ returns"]',
        '  s_c["c"]',
        '  s_d[["d (compose)"]]',
        '  s_e{{"e (map)"}}',
        '  s_a --> s_b',
        '  s_a -.-> s_c',
        '  s_b -.-> s_d',
      ].join('\n'),
    );
  });
});

describe('step definitions', () => {
  test('extend inherits the contract and hooks and adds fields', () => {
    const undo = (): void => undefined;
    const base = defineStep({ name: 'base', input: { a: z.number() }, run: ({ a }) => a, undo });
    const derived = base.extend({ input: { b: z.number().default(2) } });
    expect(Object.keys(derived.contract.fields)).toEqual(['a', 'b']);
    expect(derived.contract.required).toEqual(['a']);
    expect(derived.hooks.run).toBe(base.hooks.run);
    expect(derived.hooks.undo).toBe(undo);
    expect(derived.name).toBe('base');
  });
});
