/**
 * Definition fingerprints (decision 082): the same graph hashes the same across builds; what
 * decides how a persisted execution continues changes it; bodies and tuning do not.
 */
import { describe, expect, it } from 'vitest';
import { defineStep, DefinitionError, reactor } from '../../src/index.js';

const child = () =>
  reactor('child')
    .step('c', { run: () => 1 })
    .build();

function flow(
  opts: {
    rename?: boolean;
    waitFor?: boolean;
    lock?: boolean;
    body?: number;
    retries?: number;
    childName?: string;
  } = {},
) {
  const first = opts.rename === true ? 'a2' : 'a';
  return reactor('flow', { version: '1' })
    .step(first, { run: () => opts.body ?? 1 })
    .step('b', {
      ...(opts.waitFor === false ? {} : { waitFor: [first] }),
      retry: { maxAttempts: opts.retries ?? 3 },
      ...(opts.lock === true ? { lock: { key: () => 'k' } } : {}),
      run: () => 2,
    })
    .compose(
      'sub',
      opts.childName === undefined
        ? child()
        : reactor(opts.childName)
            .step('c', { run: () => 1 })
            .build(),
    )
    .build();
}

describe('definition fingerprints', () => {
  it('is 16 hex characters, the same for the same graph across builds, and is on the definition with its version', () => {
    const a = flow();
    expect(a.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(flow().fingerprint).toBe(a.fingerprint);
    expect(a.version).toBe('1');
  });

  it('ignores step bodies and tuning (retry policy)', () => {
    expect(flow({ body: 7, retries: 5 }).fingerprint).toBe(flow().fingerprint);
  });

  it('changes with a renamed step, a changed dependency, an added lock, a changed composed child', () => {
    const base = flow().fingerprint;
    for (const changed of [
      flow({ rename: true }),
      flow({ waitFor: false }),
      flow({ lock: true }),
      flow({ childName: 'other' }),
    ])
      expect(changed.fingerprint).not.toBe(base);
  });

  it('changes with the hand-off and the kind of a step', () => {
    const plain = reactor('k')
      .step('s', { run: () => 1 })
      .build();
    expect(
      reactor('k')
        .step('s', { run: () => 1 })
        .background('all')
        .build().fingerprint,
    ).not.toBe(plain.fingerprint);
    expect(
      reactor('k')
        .asyncStep('s', { run: () => 1 })
        .build().fingerprint,
    ).not.toBe(plain.fingerprint);
    const def = defineStep({ name: 'd', input: {}, run: () => 1 });
    expect(reactor('k').step('s', def).build().fingerprint).toBe(plain.fingerprint); // a placed definition is a step too
  });

  it('checks version and migrateFrom when the reactor is built', () => {
    expect(() => reactor('x', { version: '' }).build()).toThrow(DefinitionError);
    expect(() => reactor('x', { migrateFrom: [{} as never] }).build()).toThrow(/exactly one/);
    expect(() => reactor('x', { version: '2', migrateFrom: [{ version: '2' }] }).build()).toThrow(/its own version/);
    expect(
      reactor('x', { migrateFrom: [{ version: '1', renamed: { a: 'b' } }] })
        .step('b', { run: () => 1 })
        .build().migrateFrom,
    ).toEqual([{ version: '1', renamed: { a: 'b' } }]);
    // A rename to a name that is not a step of the definition is refused (docs/decisions/116).
    expect(() => reactor('x', { migrateFrom: [{ version: '1', renamed: { a: 'b' } }] }).build()).toThrow(
      /renames "a" to "b", which is not a step of this definition/,
    );
  });
});
