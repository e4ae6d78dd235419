/**
 * The queue contract's backend on BullMQ, over a single redis-server, a Redis Cluster or PostgreSQL
 * (BullMQ 6's PostgreSQL backend, its tables in the schema `bullmq`): each call
 * gives a queue of its own name; time is the wall clock; a consumer that dies or freezes is a real
 * process of its own (`fixtures/bullmq-held-consumer.ts`), killed with SIGKILL or stopped with
 * SIGSTOP while it holds its job.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import type { JobConsumer, JobQueue } from '../../src/ports/queue.js';
import { createBullmqConsumer, createBullmqQueue, type BullmqConnection } from '../../src/queue/bullmq.js';
import {
  createBullmqPostgresConsumer,
  createBullmqPostgresQueue,
  postgresDatastore,
} from '../../src/queue/bullmq-postgres.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { EXECUTION_JOB_NAME, INFRA_ATTEMPTS } from '../../src/queue/policy.js';
import { spawnJsonChild } from '../support/json-child.js';
import type { ContractTime, HeldConsumer, QueueCapabilities, QueueContractBackend } from './queue-contract.js';

const HELD_CONSUMER = fileURLToPath(new URL('./fixtures/bullmq-held-consumer.ts', import.meta.url));

/**
 * Short locks, so that a dead consumer's job comes back within seconds (every consumer of the suite
 * uses them), yet long enough that a live consumer on a loaded machine renews its lock in time
 * (every 2.5 s).
 */
export const STALL = { lockDurationMs: 5_000, stalledIntervalMs: 1_000 } as const;

/** How BullMQ differs from the embedded queue on purpose. */
export const BULLMQ_CAPABILITIES: QueueCapabilities = {
  discarded: 'forgotten',
  foreignProducers: 'raw',
  stalls: 'process',
  stopping: 'finishes-arrivals',
};

/** Where the queue lives: a single Redis server's URL, a cluster's startup nodes (then the prefix is hash-tagged), or a PostgreSQL URL. */
export type BullmqTarget =
  | { readonly kind: 'server'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly { readonly host: string; readonly port: number }[] }
  | { readonly kind: 'postgres'; readonly url: string };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The wall clock, and waits on conditions with a deadline. */
export const wallTime: ContractTime = {
  now: () => Date.now(),
  elapse: sleep,
  async until(probe, what, timeoutMs = 90_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`${what}: not so within ${timeoutMs} ms`);
      await sleep(20);
    }
  },
};

let seq = 0;

/** A fresh BullMQ queue on `target` for one test of the contract. */
export async function bullmqBackend(target: BullmqTarget): Promise<QueueContractBackend> {
  const name = `contract-${++seq}`;
  // On a cluster every key of a queue must share one slot: a hash-tagged prefix.
  const prefix = target.kind === 'cluster' ? '{rxq}' : 'rx';
  const { connection, release } = connect(target);
  const queue: JobQueue =
    target.kind === 'postgres'
      ? createBullmqPostgresQueue({ connection: { url: target.url }, name })
      : createBullmqQueue({ connection, name, prefix });
  const consumers: JobConsumer[] = [];
  const children = new Set<ChildProcess>();
  let raw: Queue | undefined;
  return {
    queue,
    consumer() {
      const consumer =
        target.kind === 'postgres'
          ? createBullmqPostgresConsumer({ connection: { url: target.url }, name, ...STALL })
          : createBullmqConsumer({ connection, name, prefix, ...STALL });
      consumers.push(consumer);
      return consumer;
    },
    time: wallTime,
    stallMs: STALL.lockDurationMs + 2 * STALL.stalledIntervalMs,
    async writeForeign(jobId, payload) {
      raw ??=
        target.kind === 'postgres'
          ? postgresDatastore({ url: target.url }, 'writeForeign').queue(name)
          : new Queue(name, { connection: isUrl(connection) ? { url: connection.url } : connection, prefix });
      await raw.add(EXECUTION_JOB_NAME, payload, {
        jobId: toBullmqJobId(jobId),
        attempts: INFRA_ATTEMPTS,
        backoff: 10,
      });
    },
    async heldConsumer(): Promise<HeldConsumer> {
      const held = spawnJsonChild(HELD_CONSUMER, { ...target, name, prefix, ...STALL }, children);
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
          await held.line((l) => typeof l['error'] === 'string' && /lock .*moveToFinished/i.test(l['error']));
        },
      };
    },
    async close() {
      for (const child of children) child.kill('SIGKILL');
      for (const consumer of consumers) await consumer.stop();
      await raw?.close();
      await queue.close();
      await release();
    },
  };
}

/** The Redis connection of the queue and its consumers: the server's URL, or a `Cluster` of this backend's own (BullMQ's blocking calls want no per-request retries); PostgreSQL's is its URL. */
function connect(target: BullmqTarget): { readonly connection: BullmqConnection; release(): Promise<void> } {
  if (target.kind !== 'cluster') return { connection: { url: target.url }, release: async () => undefined };
  const cluster = new Cluster([...target.nodes], { redisOptions: { maxRetriesPerRequest: null } });
  cluster.on('error', () => undefined); // the calls report their own failures
  return { connection: cluster, release: () => cluster.quit().then(noop, () => cluster.disconnect()) };
}

function isUrl(connection: BullmqConnection): connection is { readonly url: string } {
  return 'url' in connection && typeof connection.url === 'string';
}

function noop(): void {
  // nothing to do
}
