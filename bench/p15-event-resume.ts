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
 * Matching cost, measured first: the time `engine.send` takes for an event that matches no wait
 * (its order id has none), on two more servers side by side, one holding 1,000 registrations for
 * other order ids and the other 100,000 (added straight to the index), the two servers' sends
 * alternated in chunks of 50; the figure is the ratio of the medians, 100,000 against 1,000
 * (flat: ≤ 1.5).
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
const MATCH_SENDS = 600;
const MATCH_CHUNK = 50;
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

/** Registrations for other order ids, added straight to the index of `url`. */
async function fill(url: string, count: number): Promise<void> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const index = new RedisEventWaits({ redis: connection, keys: new RedisKeys(PREFIX) });
  try {
    for (let from = 0; from < count; from += ADD_BATCH) {
      const adds = [];
      for (let i = from; i < Math.min(count, from + ADD_BATCH); i++) {
        adds.push(
          index.add({
            event: paymentSettled.name,
            matchKey: matchKeyOf(['orderId'], { orderId: `other-${i}` }),
            kind: 'resume',
            executionId: `p15-none-${i}`,
            ref: 'payment',
          }),
        );
      }
      await Promise.all(adds);
    }
  } finally {
    connection.disconnect();
  }
}

/**
 * The median time of `engine.send` for events that match no wait, on one server per index size
 * ({@link MATCH_SIZES}), the sizes' sends alternated in chunks so that load from elsewhere hits
 * them alike.
 */
async function matchingCost(): Promise<Record<number, number>> {
  const servers = await Promise.all(MATCH_SIZES.map(() => startRedisServer()));
  const senders = servers.map((s) => createRedisRuntime({ url: s.url, prefix: PREFIX, reactors: [awaitingPayment()] }));
  try {
    await Promise.all(MATCH_SIZES.map((size, i) => fill(servers[i]!.url, size)));
    const times = MATCH_SIZES.map((): number[] => []);
    for (let chunk = 0; chunk < MATCH_SENDS / MATCH_CHUNK; chunk++) {
      for (const [i, sender] of senders.entries()) {
        for (let n = 0; n < MATCH_CHUNK; n++) {
          const t0 = performance.now();
          await sender.engine.send(paymentSettled, { orderId: `nobody-${chunk}-${n}`, amount: 1 });
          times[i]!.push(performance.now() - t0);
        }
      }
    }
    const cost: Record<number, number> = {};
    for (const [i, size] of MATCH_SIZES.entries()) {
      cost[size] = median(times[i]!);
      emit({ bench: 'P15', figure: 'send_without_match', registrations: size, p50_ms: round(cost[size], 3) });
    }
    return cost;
  } finally {
    await Promise.all(senders.map((s) => s.close()));
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** Runs P15 and returns its verdict. */
export async function runP15(): Promise<Verdict> {
  const server = await startRedisServer();
  const sender = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [awaitingPayment()] });
  const [worker] = await spawnChildren(WORKER_FILE, [{ url: server.url, prefix: PREFIX, concurrency: CONCURRENCY }]);
  try {
    const sendCost = await matchingCost();
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
