/**
 * A P17 worker process (spawned by bench/p17-postgres-throughput.ts with its JSON config as the
 * one argument). Prints `{"ready":true}`, then answers stdin lines:
 *
 * - `ping <n>` → `{"pong":n,"t":…}` (clock sync);
 * - `go <round>` → starts a worker (ts-reactor's `startWorker`, or a BullMQ `Worker` with an empty
 *   processor) and prints `{"progress":round,"done":k,"first":…,"last":…}` lines: the
 *   completions since the previous line (batched once per event-loop turn), the first delivery
 *   of the round and the latest completion;
 * - `stop <round>` → closes the worker and prints `{"stopped":round}`.
 *
 * Timestamps are `performance.timeOrigin + performance.now()` of this process.
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { createPostgresRuntime } from '../../src/postgres.js';
import { postgresDatastore } from '../../src/queue/bullmq-postgres.js';
import { now } from './children.js';
import { threeSteps, type P17ChildConfig } from './p17-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P17ChildConfig;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Counts a round's first delivery and completions, and reports them once per event-loop turn. */
class Progress {
  round = -1;
  first = 0;
  last = 0;
  pending = 0;
  scheduled = false;
  delivered(): void {
    if (this.first === 0) this.first = now();
  }
  completed(): void {
    this.last = now();
    this.pending++;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      print({ progress: this.round, done: this.pending, first: this.first, last: this.last });
      this.pending = 0;
    });
  }
  reset(round: number): void {
    this.round = round;
    this.first = 0;
    this.last = 0;
    this.pending = 0;
  }
}

const progress = new Progress();

/** Starts the worker of a round; returns its stop. */
type Start = () => () => Promise<void>;

function reactorSide(): { start: Start; close: () => Promise<void> } {
  const runtime = createPostgresRuntime({ connection: config.url, reactors: [threeSteps()] });
  runtime.engine.subscribe((event) => {
    if (event.type === 'run.resumed') progress.delivered();
    else if (event.type === 'run.completed' || event.type === 'run.failed') progress.completed();
    if (event.type === 'run.failed') process.stderr.write(`P17: an execution failed: ${event.error.message}\n`);
  });
  return {
    start: () => {
      const worker = runtime.startWorker({ concurrency: config.concurrency });
      return () => worker.stop();
    },
    close: () => runtime.close(),
  };
}

function rawSide(): { start: Start; close: () => Promise<void> } {
  const datastore = postgresDatastore({ url: config.url }, 'P17');
  return {
    start: () => {
      const opened = datastore.worker(
        config.queue,
        async () => {
          progress.delivered();
        },
        { concurrency: config.concurrency },
      );
      opened.worker.on('error', () => undefined);
      opened.worker.on('completed', () => progress.completed());
      return async () => {
        await opened.worker.close();
        await opened.release();
      };
    },
    close: async () => undefined,
  };
}

async function main(): Promise<void> {
  const side = config.mode === 'reactor' ? reactorSide() : rawSide();
  let stop: (() => Promise<void>) | undefined;
  const commands = createInterface({ input: process.stdin });
  commands.on('line', (line) => {
    const [verb = '', arg = ''] = line.trim().split(/\s+/);
    if (verb === 'ping') return print({ pong: Number(arg), t: now() });
    if (verb === 'go') {
      progress.reset(Number(arg));
      stop = side.start();
    } else if (verb === 'stop') {
      const stopping = stop;
      stop = undefined;
      void (stopping?.() ?? Promise.resolve()).then(
        () => print({ stopped: Number(arg) }),
        (error: unknown) => print({ stopped: Number(arg), error: String(error) }),
      );
    }
  });
  commands.on('close', () => void side.close().finally(() => process.exit(0))); // the parent went away or is done
  print({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(`p17 child failed: ${String(error)}\n`);
  process.exit(1);
});
