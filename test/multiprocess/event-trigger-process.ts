/**
 * A sender process for `event-triggers.test.ts`: `node --import tsx event-trigger-process.ts '<json>'`
 * ({@link EventTriggerConfig}). It builds a runtime on the test's backend and namespace with the
 * reactor that starts on the event (no worker), prints `{"ready":true}`, waits for a line on
 * stdin, then sends every id at once (in an order of its own) and prints a {@link SentLine}.
 */
import { createRuntime } from '../../src/runtime/create-runtime.js';
import { bundleOf } from '../support/backend-recipes.js';
import { onPaid, orderPaid, type EventTriggerConfig, type SentLine } from './event-trigger-protocol.js';

/** `ids` rotated by `index` thirds and reversed on odd indexes: each process meets the ids in another order. */
function orderOf(ids: readonly string[], index: number): string[] {
  const shift = Math.floor((ids.length * index) / 3);
  const rotated = [...ids.slice(shift), ...ids.slice(0, shift)];
  return index % 2 === 1 ? rotated.reverse() : rotated;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as EventTriggerConfig;
  const say = (level: string) => (fields: object | string, message?: string) =>
    process.stderr.write(`${level} ${message ?? ''} ${JSON.stringify(fields)}\n`);
  const logger = { debug: () => undefined, info: say('info'), warn: say('warn'), error: say('error') };
  const runtime = createRuntime(bundleOf(config.backend, config.address, config.namespace), {
    reactors: [onPaid],
    logger,
    logEvents: false,
  });
  await runtime.engine.result('event-trigger-process:connectivity-check'); // connections up before ready
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const results = await Promise.all(
    orderOf(config.ids, config.index).map(async (id) => {
      const sent = await runtime.engine.send(orderPaid, { orderId: id }, { id });
      if (sent.triggerFailures.length > 0) throw sent.triggerFailures[0];
      return { id, status: sent.status, started: sent.started };
    }),
  );
  const line: SentLine = { sent: true, pid: process.pid, results };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  await runtime.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `event-trigger-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
