/**
 * A sending process for `wait-for-event-processes.test.ts`: `node --import tsx send-child.ts '<json>'`
 * with `{ backend, address, namespace, orderIds }`. It builds a runtime on the same backend and
 * namespace as its parent's (`bundleOf`) knowing the checkout reactor (its `matchOn` gives the
 * match keys), prints `{"ready":true}`, waits for a `go` line on stdin, sends one
 * `payment.settled` per order id (amount: its index), prints `{"sent":n}` and exits.
 */
import { createInterface } from 'node:readline';
import { createRuntime } from '../../src/runtime/create-runtime.js';
import { bundleOf, type MatrixBackendName, type ServerAddress } from '../support/backend-recipes.js';
import { checkout, paymentSettled } from './wait-fixtures.js';

interface Config {
  readonly backend: MatrixBackendName;
  readonly address: ServerAddress;
  readonly namespace: string;
  readonly orderIds: readonly string[];
}

function writeLine(value: unknown): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as Config;
  const runtime = createRuntime(bundleOf(config.backend, config.address, config.namespace), { reactors: [checkout] });
  await runtime.engine.listEvents({ limit: 1 }); // connections up before the ready line
  const go = new Promise<void>((resolve) =>
    createInterface({ input: process.stdin }).on('line', (line) => line.trim() === 'go' && resolve()),
  );
  await writeLine({ ready: true });
  await go;
  let sent = 0;
  for (let i = 0; i < config.orderIds.length; i += 50) {
    const batch = config.orderIds.slice(i, i + 50);
    await runtime.engine.sendMany(
      batch.map((orderId, j) => ({
        event: paymentSettled,
        payload: { orderId, amount: i + j },
        options: { id: `pay-${orderId}` },
      })),
    );
    sent += batch.length;
  }
  await writeLine({ sent });
  await runtime.close();
  process.exit(0);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
