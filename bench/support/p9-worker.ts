/**
 * Child process of P9 (`node --import tsx p9-worker.ts '<json config>'`, see {@link P9ChildConfig}).
 * Runs two workers side by side on the same server: a ts-reactor worker
 * (`createRedisRuntime(...).startWorker({ concurrency })`) for the sleeping reactor, and a plain
 * BullMQ `Worker` with the same concurrency on the anchor's queue of delayed jobs. Prints
 * `{"ready":true}`, answers `ping <n>` with `{"pong":n,"t":…}`, and prints one {@link P9Line} per
 * `step.woke` and `run.completed` event of the reactor and per anchor job started. Exits when its
 * stdin closes (the parent went away).
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createRedisRuntime } from '../../src/bullmq.js';
import { now } from './children.js';
import { napper, type P9ChildConfig, type P9Line } from './p9-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P9ChildConfig;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [verb = '', arg = ''] = line.trim().split(/\s+/);
  if (verb === 'ping') print({ pong: Number(arg), t: now() });
});
commands.on('close', () => process.exit(0));

async function main(): Promise<void> {
  const runtime = createRedisRuntime({ url: config.url, prefix: config.prefix, reactors: [napper()] });
  const wakeAt = new Map<string, number>();
  runtime.engine.subscribe((event) => {
    if (event.type === 'step.woke') {
      wakeAt.set(event.executionId, event.wakeAt);
      const line: P9Line = { p9: 'woke', id: event.executionId, late: event.at - event.wakeAt, due: event.wakeAt };
      print(line);
    } else if (event.type === 'run.completed') {
      const due = wakeAt.get(event.executionId);
      wakeAt.delete(event.executionId);
      if (due === undefined) return; // woken in the other process: its line is the woke one
      const line: P9Line = { p9: 'done', id: event.executionId, late: event.at - due, due };
      print(line);
    }
  });
  runtime.startWorker({ concurrency: config.concurrency });

  const connection = new Redis(config.url, { maxRetriesPerRequest: null });
  const anchor = new Worker(
    config.anchorQueue,
    async (job) => {
      const started = Date.now();
      const due = job.timestamp + (job.opts.delay ?? 0);
      const line: P9Line = { p9: 'job', id: String(job.id), late: started - due, due };
      print(line);
    },
    { connection, prefix: config.prefix, concurrency: config.concurrency },
  );
  anchor.on('error', (error) => process.stderr.write(`p9 anchor worker: ${String(error)}\n`));
  await anchor.waitUntilReady();
  print({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(`p9 child failed: ${String(error)}\n`);
  process.exit(1);
});
