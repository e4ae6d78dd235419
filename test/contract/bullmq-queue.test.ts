/**
 * The queue contract on BullMQ, over a throwaway redis-server: each test gets a queue of its own
 * name; time is the wall clock; a consumer that dies or freezes is a real process of its own
 * (`fixtures/bullmq-held-consumer.ts`), killed with SIGKILL or stopped with SIGSTOP while it holds
 * its job.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import type { JobConsumer } from '../../src/engine/ports/queue.js';
import { createBullmqConsumer, createBullmqQueue } from '../../src/queue/bullmq.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { EXECUTION_JOB_NAME, INFRA_ATTEMPTS } from '../../src/queue/policy.js';
import { spawnJsonChild } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { describeQueueContract, type ContractTime, type HeldConsumer } from './queue-contract.js';

const HELD_CONSUMER = fileURLToPath(new URL('./fixtures/bullmq-held-consumer.ts', import.meta.url));
/** Short locks, so that a dead consumer's job comes back within seconds (every consumer of the suite uses them). */
const STALL = { lockDurationMs: 3_000, stalledIntervalMs: 1_000 } as const;
const PREFIX = 'rx';

const server = useRedisServer();
let seq = 0;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const wallTime: ContractTime = {
  now: () => Date.now(),
  elapse: sleep,
  async until(probe, what, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`${what}: not so within ${timeoutMs} ms`);
      await sleep(20);
    }
  },
};

describeQueueContract(
  'bullmq',
  { discarded: 'forgotten', foreignProducers: 'raw', stalls: 'process', stopping: 'finishes-arrivals' },
  async () => {
    const name = `contract-${++seq}`;
    const connection = { url: server.url };
    const queue = createBullmqQueue({ connection, name, prefix: PREFIX });
    const consumers: JobConsumer[] = [];
    const children = new Set<ChildProcess>();
    let raw: Queue | undefined;
    return {
      queue,
      consumer() {
        const consumer = createBullmqConsumer({ connection, name, prefix: PREFIX, ...STALL });
        consumers.push(consumer);
        return consumer;
      },
      time: wallTime,
      stallMs: STALL.lockDurationMs + 2 * STALL.stalledIntervalMs,
      async writeForeign(jobId, payload) {
        raw ??= new Queue(name, { connection, prefix: PREFIX });
        await raw.add(EXECUTION_JOB_NAME, payload, {
          jobId: toBullmqJobId(jobId),
          attempts: INFRA_ATTEMPTS,
          backoff: 10,
        });
      },
      async heldConsumer(): Promise<HeldConsumer> {
        const held = spawnJsonChild(HELD_CONSUMER, { url: server.url, name, ...STALL }, children);
        await held.line((line) => line['ready'] === true);
        const signal = (sig: NodeJS.Signals): void => void held.child.kill(sig);
        return {
          async started() {
            const line = await held.line<{ started: string; delivery: number; payload: unknown }>(
              (l) => typeof l['started'] === 'string',
            );
            return { jobId: line.started, delivery: line.delivery, payload: line.payload };
          },
          async kill() {
            signal('SIGKILL');
            await held.exited;
          },
          freeze: () => signal('SIGSTOP'),
          thaw: () => signal('SIGCONT'),
          async releaseRefused() {
            held.child.stdin?.write('release\n');
            // BullMQ refuses to finish a job whose lock another worker holds now: `Missing lock for job
            // <id>. moveToFinished` or `Lock mismatch for job <id>. Cmd moveToFinished …`.
            await held.line((l) => typeof l['error'] === 'string' && /lock .*moveToFinished/i.test(l['error']), 30_000);
          },
        };
      },
      async close() {
        for (const child of children) child.kill('SIGKILL');
        for (const consumer of consumers) await consumer.stop();
        await raw?.close();
        await queue.close();
      },
    };
  },
);
