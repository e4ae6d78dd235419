/**
 * The demo's checkout reactor: validate the order, then reserve stock and score fraud at the
 * same time, charge the card (retried on a flaky provider), ship, notify.
 *
 * @module
 */
import { defineStep } from '../dsl/step.js';
import { reactor } from '../dsl/reactor.js';
import type { DemoServices } from './demo-services.js';
import { positiveInt, text, withDefault } from './demo-schema.js';

/** Builds the checkout reactor over one scenario's services. */
export function checkoutReactor(services: DemoServices) {
  // A reusable step with its own input contract; the card token is a secret.
  const chargeCard = defineStep({
    name: 'charge-card',
    input: { cardToken: text(), amountCents: positiveInt(), currency: withDefault(text(), 'EUR') },
    redact: ['cardToken'],
    retry: { maxAttempts: 3, backoff: 'exponential', baseDelay: '50ms' },
    run: ({ cardToken, amountCents, currency }) => services.charge(cardToken, amountCents, currency),
    undo: (charge) => services.refund(charge.chargeId),
  });

  return reactor('checkout')
    .input(
      {
        orderId: text(),
        sku: text(),
        quantity: positiveInt(),
        amountCents: positiveInt(),
        cardToken: text(),
        country: text(),
      },
      { redact: ['cardToken'] },
    )
    .step('validate-order', {
      run: (order) => ({ orderId: order.orderId.toUpperCase() }),
    })
    .step('reserve-stock', {
      args: ($) => ({ sku: $.input('sku'), quantity: $.input('quantity') }),
      waitFor: ['validate-order'],
      run: ({ sku, quantity }) => services.reserve(sku, quantity),
      undo: (reservation) => services.release(reservation.reservationId),
    })
    .step('fraud-check', {
      args: ($) => ({ orderId: $.result('validate-order', 'orderId'), amountCents: $.input('amountCents') }),
      run: ({ orderId, amountCents }) => services.score(orderId, amountCents),
    })
    .step('charge-card', chargeCard, { waitFor: ['reserve-stock', 'fraud-check'] })
    .step('ship-order', {
      args: ($) => ({ orderId: $.result('validate-order', 'orderId'), country: $.input('country') }),
      waitFor: ['charge-card'],
      retry: { maxAttempts: 3, backoff: 'fixed', baseDelay: '10ms' },
      run: ({ orderId, country }) => services.ship(orderId, country),
      compensate: (_error, { orderId }) => services.cancelShipment(orderId),
    })
    .step('notify-customer', {
      args: ($) => ({
        orderId: $.result('validate-order', 'orderId'),
        tracking: $.result('ship-order', 'tracking'),
        chargeId: $.result('charge-card', 'chargeId'),
      }),
      run: async ({ orderId, tracking, chargeId }) => {
        await services.notify(orderId, tracking);
        return { orderId, chargeId, tracking };
      },
    })
    .returns('notify-customer');
}
