/**
 * Redis worker process of P11 (`node --import tsx p11-worker.ts '<json config>'`, see
 * {@link P11WorkerConfig}): a ts-reactor worker (`createRedisRuntime(...).startWorker`) for
 * P11's fan-out reactor, with the default background options. Prints `{"ready":true}` once its
 * connection answers, answers `ping <n>` with `{"pong":n,"t":…}`, and runs until stdin closes
 * or SIGTERM (graceful close).
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import { now } from './children.js';
import { mapReactor, P11_FANOUT_REACTOR, type P11WorkerConfig } from './p11-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P11WorkerConfig;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function main(): Promise<void> {
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: [mapReactor(P11_FANOUT_REACTOR, true)],
  });
  let closing = false;
  const close = (): void => {
    if (closing) return;
    closing = true;
    void runtime.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', close);
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      const [verb = '', arg = ''] = line.trim().split(/\s+/);
      if (verb === 'ping') print({ pong: Number(arg), t: now() });
    })
    .on('close', close); // the parent went away
  await runtime.engine.result('p11-worker:connectivity-check');
  runtime.startWorker({ concurrency: config.concurrency });
  print({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `p11 worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
