/**
 * Child process of P15 (`node --import tsx p15-worker.ts '<json config>'`, see {@link P15ChildConfig}):
 * a ts-reactor worker (`createRedisRuntime(...).startWorker({ concurrency })`) for the waiting
 * reactor. Prints `{"ready":true}`, answers `ping <n>` with `{"pong":n,"t":…}`, prints a
 * `waiting` line per execution that reached its wait and a `resumed` line per resumed step
 * start. Exits when its stdin closes (the parent went away).
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import { now } from './children.js';
import { awaitingPayment, print, type P15ChildConfig } from './p15-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P15ChildConfig;

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [verb = '', arg = ''] = line.trim().split(/\s+/);
  if (verb === 'ping') print({ pong: Number(arg), t: now() });
});
commands.on('close', () => process.exit(0));

async function main(): Promise<void> {
  const runtime = createRedisRuntime({ url: config.url, prefix: config.prefix, reactors: [awaitingPayment()] });
  runtime.engine.subscribe((event) => {
    // The wait's match key is the JSON array of its matchOn values: [orderId].
    if (event.type === 'wait.paused')
      print({ p15: 'waiting', orderId: String((JSON.parse(event.matchKey) as unknown[])[0]) });
  });
  runtime.startWorker({ concurrency: config.concurrency });
  print({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(`p15 child failed: ${String(error)}\n`);
  process.exit(1);
});
