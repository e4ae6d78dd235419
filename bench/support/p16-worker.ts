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
 * - `floor <checkpointIntervalMs> <executionId>`: prepares a plain BullMQ `Worker` (not running)
 *   with the same concurrency on the floor's queue, whose processor makes only the writes the
 *   subject's worker makes for one execution with that interval (./p16-shared.ts `floorWrites`,
 *   copied from the finished execution `executionId`): it takes the lease and reads the record
 *   (`job-enter`), streams each write's events (gathered per tick across jobs, as the engine
 *   does), writes each record under the lease (`record-save-fenced`) and the final one with the
 *   lease's release (`job-leave`); no engine, no step. A job counts as done when it completed;
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
import { cancelRequestKey, livenessKey } from '../../src/engine/model/keys.js';
import type { StreamBatch } from '../../src/ports/execution-stream.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { now } from './children.js';
import { countSentCommands, floorWrites, takeSentCounts, threeSteps, type P16ChildConfig } from './p16-shared.js';

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
  countJobs(worker, 'raw', (job) => job.name === 'c');
  return plainRunning(worker, 'raw', connection);
}

/** Counts the `completed` and `failed` jobs of a plain worker (`isLast`: the job that ends a unit of work). */
function countJobs(worker: Worker, side: string, isLast: (job: Job) => boolean): void {
  worker.on('error', (error) => process.stderr.write(`P16 ${side} worker: ${String(error)}\n`));
  worker.on('failed', (_job, error) => {
    failed++;
    process.stderr.write(`P16: a ${side} job failed: ${error.message}\n`);
  });
  worker.on('completed', (job) => {
    if (!isLast(job)) return;
    last = now();
    done++;
  });
}

async function prepareFloor(checkpointIntervalMs: number, templateId: string): Promise<Running> {
  const backend = createRedisBackend({ url: config.url, prefix: config.prefix });
  const final = await backend.store.get(templateId);
  const stream = backend.executionStream;
  if (final?.status !== 'completed' || stream === undefined)
    throw new Error('P16: no completed record (or no execution stream) to copy for the floor');
  const writes = floorWrites(final, checkpointIntervalMs);
  // The events of every job of one tick go in one append, as the engine's publisher gathers them.
  let gathered: StreamBatch[] = [];
  let flush: Promise<void> | undefined;
  const streamed = (batch: StreamBatch): Promise<void> => {
    gathered.push(batch);
    flush ??= new Promise<void>((resolve, reject) =>
      process.nextTick(() => {
        const batches = gathered;
        gathered = [];
        flush = undefined;
        stream.append(batches).then(resolve, reject);
      }),
    );
    return flush;
  };
  const connection = new Redis(config.url, { maxRetriesPerRequest: null });
  const worker = new Worker(
    config.floorQueue,
    async (job: Job<{ executionId: string }>) => {
      if (first === 0) first = now();
      const { executionId } = job.data;
      const key = livenessKey(executionId);
      const owner = `p16-floor:${executionId}:${job.id ?? ''}`;
      const live = await backend.jobLeases.enterJob({
        lease: { key, holder: { owner, executionId }, ttlMs: 30_000 },
        executionId,
        cancel: { key: cancelRequestKey(executionId), bucket: 'requested' },
      });
      if (!live.acquired || live.record === undefined) throw new Error('P16: a floor job found no record or no lease');
      const appends: Promise<void>[] = [];
      for (const [i, write] of writes.entries()) {
        appends.push(streamed({ executionId, events: write.events })); // not waited for before the record (as the engine does)
        const record = { ...write.record, id: executionId, rootId: executionId, updatedAt: Date.now() };
        if (i < writes.length - 1) await backend.jobLeases.saveFenced(record, key, owner);
        else await backend.jobLeases.saveAndRelease(record, key, owner);
      }
      await Promise.all(appends);
    },
    { connection, prefix: config.prefix, concurrency: config.concurrency, autorun: false },
  );
  countJobs(worker, 'floor', () => true);
  return plainRunning(worker, 'floor', connection, () => backend.close());
}

/** A plain worker, ready and not yet running: `go` runs it; `stop` closes it, its connection, then `after`. */
async function plainRunning(
  worker: Worker,
  side: string,
  connection: Redis,
  after: () => Promise<void> = async () => undefined,
): Promise<Running> {
  await worker.waitUntilReady();
  return {
    go: () => {
      void worker.run().catch((error: unknown) => process.stderr.write(`P16 ${side} worker: ${String(error)}\n`));
    },
    stop: async () => {
      await worker.close();
      connection.disconnect();
      await after();
    },
  };
}

async function handle(verb: string, arg: string, more: string): Promise<void> {
  switch (verb) {
    case 'ping':
      print({ pong: Number(arg), t: now() });
      return;
    case 'subject':
    case 'raw':
    case 'floor':
      if (running) throw new Error('P16 child: a worker is already running');
      running =
        verb === 'subject'
          ? await prepareSubject(Number(arg))
          : verb === 'raw'
            ? await prepareRaw()
            : await prepareFloor(Number(arg), more);
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
  const [verb = '', arg = '', more = ''] = line.trim().split(/\s+/);
  handle(verb, arg, more).catch((error: unknown) => {
    process.stderr.write(`P16 child: ${String(error)}\n`);
    process.exit(1);
  });
});
commands.on('close', () => process.exit(0));
print({ ready: true, pid: process.pid });
