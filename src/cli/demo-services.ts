/**
 * Fake warehouse, fraud service, payment provider and carrier for the demo. Each call waits a
 * few milliseconds on a real timer so that independent steps visibly overlap, and notes what
 * it did through `note`.
 *
 * @module
 */
import { NonRetryableError } from '../errors.js';

/** How the fake services behave in one scenario. */
export interface ServiceBehaviour {
  /** The payment provider times out on the first this many charges. */
  readonly pspFailures: number;
  /** The carrier refuses every parcel. */
  readonly carrierRejects: boolean;
}

/** The services one scenario's reactor talks to. */
export interface DemoServices {
  reserve(sku: string, quantity: number): Promise<{ reservationId: string }>;
  release(reservationId: string): Promise<void>;
  score(orderId: string, amountCents: number): Promise<{ risk: number }>;
  charge(cardToken: string, amountCents: number, currency: string): Promise<{ chargeId: string }>;
  refund(chargeId: string): Promise<void>;
  ship(orderId: string, country: string): Promise<{ tracking: string }>;
  cancelShipment(orderId: string): Promise<void>;
  notify(orderId: string, tracking: string): Promise<void>;
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates the fake services; `note` receives one line per side effect. */
export function createServices(behaviour: ServiceBehaviour, note: (line: string) => void): DemoServices {
  let charges = 0;
  return {
    async reserve(sku, quantity) {
      await wait(20);
      note(`warehouse: reserved ${quantity} x ${sku}`);
      return { reservationId: `res-${sku}` };
    },
    async release(reservationId) {
      note(`warehouse: released ${reservationId}`);
    },
    async score(orderId) {
      await wait(40);
      note(`fraud: ${orderId} scored low risk`);
      return { risk: 7 };
    },
    async charge(_cardToken, amountCents, currency) {
      await wait(5);
      charges++;
      if (charges <= behaviour.pspFailures) throw new Error('payment provider timed out');
      const chargeId = `ch-${charges}`;
      note(`psp: charged ${(amountCents / 100).toFixed(2)} ${currency} (${chargeId})`);
      return { chargeId };
    },
    async refund(chargeId) {
      note(`psp: refunded ${chargeId}`);
    },
    async ship(orderId, country) {
      await wait(5);
      if (behaviour.carrierRejects) throw new NonRetryableError(`carrier does not deliver to ${country}`);
      return { tracking: `TRK-${orderId}` };
    },
    async cancelShipment(orderId) {
      note(`carrier: cancelled the label request for ${orderId}`);
    },
    async notify(orderId, tracking) {
      note(`mail: told the customer ${orderId} ships as ${tracking}`);
    },
  };
}
