/**
 * P15: from an event to the resumed step, across processes. A worker process
 * (`startWorker({ concurrency: 64 })`) runs executions of a reactor that waits for
 * `payment.settled` with its order id (`waitForEvent`, `matchOn: ['orderId']`) and then runs one
 * step; this process starts them (`startMany`), waits until every one has reached its wait, and
 * then sends events with `engine.send` on a runtime of its own that runs no worker — the sender
 * is another process than the one that runs the executions, as in an application.
 *
 * Latency: from just before `engine.send` to the start of the step after the wait, in the
 * worker's clock mapped onto this one (`children.ts`), one event at a time, with
 * `P15_WAITING` (default 10,000) executions waiting meanwhile. Targets: p50 ≤ 10 ms, p99 ≤ 100 ms.
 *
 * Matching cost: the time `engine.send` takes for an event that matches no wait (its order id
 * has none), with 1,000 and then 100,000 registrations in the index for other order ids (the
 * executions above, and registrations added straight to the index beside them); the figure is
 * the ratio of the medians, 100,000 against 1,000 (flat: ≤ 1.5).
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { createRedisRuntime } from '../src/bullmq.js';
import { Redis } from 'ioredis';
import { RedisEventWaits } from '../src/storage/redis/event-waits.js';
import { RedisKeys } from '../src/storage/redis/keys.js';
import { matchKeyOf } from '../src/ports/event-waits.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { now, spawnChildren, type ChildLine } from './support/children.js';
import { awaitingPayment, paymentSettled } from './support/p15-shared.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const WAITING = Number(process.env.P15_WAITING ?? 10_000);
const SAMPLES = Number(process.env.P15_SAMPLES ?? 300);
const CONCURRENCY = 64;
const START_BATCH = 500;
const MATCH_SIZES = [1_000, 100_000] as const;
const MATCH_SENDS = 300;
const ADD_BATCH = 1_000;
const READY_MS = 600_000;
const RESUME_MS = 30_000;
const PREFIX = 'p15';
const TARGET_P50_MS = 10;
const TARGET_P99_MS = 100;
const TARGET_FLAT = 1.5;

const WORKER_FILE = fileURLToPath(new URL('./support/p15-worker.ts', import.meta.url));

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const orderOf = (i: number): string => `order-${i}`;

/** Runs P15 and returns its verdict. */
export async function runP15(): Promise<Verdict> {
  const server = await startRedisServer();
  const sender = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [awaitingPayment()] });
  const [worker] = await spawnChildren(WORKER_FILE, [{ url: server.url, prefix: PREFIX, concurrency: CONCURRENCY }]);
  try {
    // Every execution to its wait.
    const waiting = new Set<string>();
    const stopListening = worker!.listen((line: ChildLine) => {
      if (line.p15 !== 'waiting') return false;
      waiting.add(String(line.orderId));
      return true;
    });
    const loadStart = performance.now();
    const reactorDef = awaitingPayment();
    for (let from = 0; from < WAITING; from += START_BATCH) {
      const entries = [];
      for (let i = from; i < Math.min(WAITING, from + START_BATCH); i++)
        entries.push({ reactor: reactorDef, input: { orderId: orderOf(i) } });
      await sender.engine.startMany(entries);
    }
    const deadline = performance.now() + READY_MS;
    while (waiting.size < WAITING) {
      if (performance.now() > deadline)
        throw new Error(`P15: ${waiting.size} of ${WAITING} executions reached their wait`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    stopListening();
    emit({
      bench: 'P15',
      figure: 'waiting',
      executions: WAITING,
      load_s: round((performance.now() - loadStart) / 1000, 1),
    });

    // Latency: one event at a time, each for an execution of its own, spread over the orders.
    const latencies: number[] = [];
    const step = Math.max(1, Math.floor(WAITING / SAMPLES));
    for (let s = 0; s < SAMPLES && s * step < WAITING; s++) {
      const orderId = orderOf(s * step);
      const resumed = worker!.next((line) => line.p15 === 'resumed' && line.orderId === orderId, RESUME_MS);
      const sentAt = now();
      await sender.engine.send(paymentSettled, { orderId, amount: 1 }, { id: `p15-${orderId}` });
      const line = await resumed;
      latencies.push(worker!.toParent(Number(line.t)) - sentAt);
    }
    const latency = {
      p50_ms: round(percentile(latencies, 50), 2),
      p99_ms: round(percentile(latencies, 99), 2),
      max_ms: round(Math.max(...latencies), 2),
      samples: latencies.length,
    };
    emit({ bench: 'P15', figure: 'event_to_resumed_step', waiting: WAITING, ...latency });

    // Matching cost: sends that match nothing, with the index at each size.
    const connection = new Redis(server.url, { maxRetriesPerRequest: null });
    const index = new RedisEventWaits({ redis: connection, keys: new RedisKeys(PREFIX) });
    const sendCost: Record<number, number> = {};
    let filed = WAITING - latencies.length;
    try {
      for (const size of MATCH_SIZES) {
        for (; filed < size; filed += ADD_BATCH) {
          const adds = [];
          for (let i = filed; i < Math.min(size, filed + ADD_BATCH); i++) {
            const orderId = `other-${i}`;
            adds.push(
              index.add({
                event: paymentSettled.name,
                matchKey: matchKeyOf(['orderId'], { orderId }),
                kind: 'resume',
                executionId: `p15-none-${i}`,
                ref: 'payment',
              }),
            );
          }
          await Promise.all(adds);
        }
        const times: number[] = [];
        for (let i = 0; i < MATCH_SENDS; i++) {
          const t0 = performance.now();
          await sender.engine.send(paymentSettled, { orderId: `nobody-${size}-${i}`, amount: 1 });
          times.push(performance.now() - t0);
        }
        sendCost[size] = median(times);
        emit({ bench: 'P15', figure: 'send_without_match', registrations: size, p50_ms: round(sendCost[size], 3) });
      }
    } finally {
      connection.disconnect();
    }
    const flat = sendCost[MATCH_SIZES[1]]! / sendCost[MATCH_SIZES[0]]!;
    const pass = latency.p50_ms <= TARGET_P50_MS && latency.p99_ms <= TARGET_P99_MS && flat <= TARGET_FLAT;
    return {
      bench: 'P15',
      metric: 'event_to_resumed_step_p50_ms',
      value: latency.p50_ms,
      target: `p50 <= ${TARGET_P50_MS} ms, p99 <= ${TARGET_P99_MS} ms with ${WAITING} waiting; send cost 100,000 / 1,000 registrations <= ${TARGET_FLAT}`,
      anchor: {
        ...latency,
        waiting: WAITING,
        send_p50_ms: Object.fromEntries(Object.entries(sendCost).map(([k, v]) => [k, round(v, 3)])),
        matching_cost_ratio: round(flat, 3),
      },
      pass,
    };
  } finally {
    await worker!.kill();
    await sender.close();
    await server.stop();
  }
}
