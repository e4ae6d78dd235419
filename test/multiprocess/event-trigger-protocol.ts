/** What `event-triggers.test.ts` and its sender processes (`event-trigger-process.ts`) share: the event, the reactor, the config. */
import { z } from 'zod';
import { event, reactor } from '../../src/index.js';
import type { MatrixBackendName, ServerAddress } from '../support/backend-recipes.js';

/** The JSON argument of a sender process. */
export interface EventTriggerConfig {
  readonly backend: MatrixBackendName;
  readonly address: ServerAddress;
  readonly namespace: string;
  /** The event ids to send, each once, all at once (in an order of this process's own). */
  readonly ids: readonly string[];
  /** This process's index: it decides the order it sends the ids in. */
  readonly index: number;
}

/** What a sender prints when it has sent every id: each id's status and the executions it started. */
export interface SentLine {
  readonly sent: true;
  readonly pid: number;
  readonly results: readonly { readonly id: string; readonly status: string; readonly started: readonly string[] }[];
}

/** The event every process sends. */
export const orderPaid = event('mp.order.paid', { orderId: z.string() });

/** The reactor each event starts. */
export const onPaid = reactor('mp-on-paid')
  .input({ orderId: z.string() })
  .on(orderPaid, { input: (e) => ({ orderId: e.orderId }) })
  .step('ship', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => orderId })
  .background('all')
  .returns('ship');
