/**
 * Child process of P16 (`node --import tsx p16-worker.ts '<json config>'`, see {@link P16ChildConfig}).
 * Runs one worker at a time, on the parent's word (stdin lines):
 *
 * - `subject <checkpointIntervalMs>`: prepares a ts-reactor runtime with that checkpoint interval
 *   (connected, its start-up checks done); `go` then calls `startWorker({ concurrency })`. An
 *   execution counts as done at its `run.completed`;
 * - `raw`: prepares a plain BullMQ `Worker` (not running) with the same concurrency on the raw
 *   flows' queue; `go` runs it. The processor of `b` and `c` reads its child's value
 *   (`getChildrenValues`) and adds one, like the reactor's steps; a flow counts as done when its
 *   root job `c` completed;
 * - `stats`: prints `{"stats":…}` (done, the first delivery and the last completion on the
 *   shared clock); `counts`: prints `{"counts":…}`, the commands this process sent since `go`
 *   (./p16-shared.ts); `stop`: stops the worker (and closes the runtime), prints `{"stopped":true}`.
 *
 * Prints `{"ready":true}` first and answers `ping <n>`. Exits when its stdin closes.
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { now } from './children.js';
import { countSentCommands, takeSentCounts, threeSteps, type P16ChildConfig } from './p16-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P16ChildConfig;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

countSentCommands();

interface Running {
  readonly go: () => void;
  readonly stop: () => Promise<void>;
}

let running: Running | undefined;
let done = 0;
let first = 0;
let last = 0;
let failed = 0;

function reset(): void {
  done = 0;
  first = 0;
  last = 0;
  failed = 0;
  takeSentCounts();
}

async function prepareSubject(checkpointIntervalMs: number): Promise<Running> {
  const runtime: RedisRuntime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: [threeSteps()],
    checkpointIntervalMs,
  });
  runtime.engine.subscribe((event) => {
    if (event.type === 'run.resumed' && first === 0) first = now();
    if (event.type === 'run.failed') {
      failed++;
      process.stderr.write(`P16: an execution failed: ${event.error.message}\n`);
    }
    if (event.type !== 'run.completed' && event.type !== 'run.failed') return;
    last = now();
    done++;
  });
  await runtime.ready();
  let worker: ReturnType<RedisRuntime['startWorker']> | undefined;
  return {
    go: () => {
      worker = runtime.startWorker({ concurrency: config.concurrency });
    },
    stop: async () => {
      await worker?.stop();
      await runtime.close();
    },
  };
}

function childValue(values: Record<string, unknown>): number {
  const [value] = Object.values(values);
  if (typeof value !== 'number') throw new Error('P16: a raw job found no child value');
  return value;
}

async function prepareRaw(): Promise<Running> {
  const connection = new Redis(config.url, { maxRetriesPerRequest: null });
  const worker = new Worker(
    config.rawQueue,
    async (job: Job) => {
      if (first === 0) first = now();
      if (job.name === 'a') return 1;
      return childValue(await job.getChildrenValues()) + 1;
    },
    { connection, prefix: config.prefix, concurrency: config.concurrency, autorun: false },
  );
  worker.on('error', (error) => process.stderr.write(`P16 raw worker: ${String(error)}\n`));
  worker.on('failed', (_job, error) => {
    failed++;
    process.stderr.write(`P16: a raw job failed: ${error.message}\n`);
  });
  worker.on('completed', (job) => {
    if (job.name !== 'c') return;
    last = now();
    done++;
  });
  await worker.waitUntilReady();
  return {
    go: () => {
      void worker.run().catch((error: unknown) => process.stderr.write(`P16 raw worker: ${String(error)}\n`));
    },
    stop: async () => {
      await worker.close();
      connection.disconnect();
    },
  };
}

async function handle(verb: string, arg: string): Promise<void> {
  switch (verb) {
    case 'ping':
      print({ pong: Number(arg), t: now() });
      return;
    case 'subject':
    case 'raw':
      if (running) throw new Error('P16 child: a worker is already running');
      running = verb === 'subject' ? await prepareSubject(Number(arg)) : await prepareRaw();
      print({ prepared: verb });
      return;
    case 'go':
      reset();
      running?.go();
      print({ going: true });
      return;
    case 'stats':
      print({ stats: { done, failed, first, last } });
      return;
    case 'counts':
      print({ counts: takeSentCounts() });
      return;
    case 'stop':
      await running?.stop();
      running = undefined;
      print({ stopped: true });
      return;
    default:
      throw new Error(`P16 child: unknown command "${verb}"`);
  }
}

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [verb = '', arg = ''] = line.trim().split(/\s+/);
  handle(verb, arg).catch((error: unknown) => {
    process.stderr.write(`P16 child: ${String(error)}\n`);
    process.exit(1);
  });
});
commands.on('close', () => process.exit(0));
print({ ready: true, pid: process.pid });
