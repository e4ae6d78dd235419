/**
 * Shared fixtures of the tests of failures an operator steers: an order reactor whose `charge`
 * step fails while `failCharge` says so, counting each body and recording undos and compensations.
 */
import { z } from 'zod';
import { reactor, type OnFailure } from '../../src/index.js';

/** What the order reactor's bodies and rollback hooks did. */
export interface Ledger {
  /** Runs of each step's body. */
  readonly bodies: Record<string, number>;
  /** Undos and compensations, in the order they ran. */
  readonly rollback: string[];
  /** While true, `charge` fails (non-retryable: it fails for good at once). */
  failCharge: boolean;
}

export function ledger(): Ledger {
  return { bodies: {}, rollback: [], failCharge: true };
}

const count = (l: Ledger, step: string): void => {
  l.bodies[step] = (l.bodies[step] ?? 0) + 1;
};

/**
 * reserve → price → charge → ship, `charge` failing while `l.failCharge`; `onFailure` on the
 * reactor (default 'pause'); `charge` is skippable with a `{ id }` value.
 */
export function order(l: Ledger, name = 'steer-order', onFailure: OnFailure = 'pause') {
  return reactor(name, { onFailure })
    .input({ orderId: z.string(), amount: z.number() })
    .step('reserve', {
      run: ({ orderId }) => (count(l, 'reserve'), `R-${orderId}`),
      undo: () => void l.rollback.push('undo reserve'),
    })
    .step('price', {
      args: ($) => ({ amount: $.input('amount') }),
      run: ({ amount }) => (count(l, 'price'), amount * 2),
      undo: () => void l.rollback.push('undo price'),
    })
    .step('charge', {
      args: ($) => ({ cents: $.result('price'), reservation: $.result('reserve') }),
      retry: { maxAttempts: 1 },
      skippable: z.object({ id: z.string() }),
      run: ({ cents }) => {
        count(l, 'charge');
        if (l.failCharge) throw new Error('card declined');
        return { id: `ch-${cents}` };
      },
      compensate: () => void l.rollback.push('compensate charge'),
      undo: () => void l.rollback.push('undo charge'),
    })
    .step('ship', {
      args: ($) => ({ charge: $.result('charge', 'id') }),
      run: ({ charge }) => (count(l, 'ship'), `shipped with ${charge}`),
      undo: () => void l.rollback.push('undo ship'),
    })
    .returns('ship');
}
