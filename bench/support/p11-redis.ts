/**
 * P11's Redis case: the fan-out map run by two worker processes (`p11-worker.ts`,
 * `startWorker({ concurrency })` each) on a throwaway `redis-server`. This process only starts
 * each run (`engine.start`) and polls its record (`engine.wait`, every 5 ms): a run's wall time
 * is from the start to the poll that finds it finished. Rounds alternate the small and the large
 * size like the in-process families (`p11-child.ts`); a run still unfinished after its timeout is
 * reported as stalled and ends the case (its elements would hold the workers). A server or worker
 * that cannot start is reported as an error of both sizes, never thrown.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { RunResult } from '../../src/index.js';
import { startRedisServer, type RedisServerHandle } from '../../test/support/redis-server.js';
import { spawnChildren, type BenchChild } from './children.js';
import {
  mapReactor,
  P11_FANOUT_REACTOR,
  type P11ChildConfig,
  type P11Failure,
  type P11Outcome,
  type P11Sample,
  type P11WorkerConfig,
} from './p11-shared.js';

const WORKER = fileURLToPath(new URL('./p11-worker.ts', import.meta.url));
const PREFIX = 'p11';
const TERMINAL = new Set(['completed', 'failed', 'halted', 'cancelled']);

/** Options of {@link redisFanOut}: the sizes and rounds of a measuring child, plus the workers. */
export type RedisFanOutOptions = Omit<P11ChildConfig, 'family'> & {
  readonly workers: number;
  readonly concurrency: number;
};

function describe(result: RunResult): string {
  if (result.status !== 'failed') return `ended ${result.status}`;
  const code = (result.error as { code?: unknown }).code;
  return `${typeof code === 'string' ? `${code}: ` : ''}${result.error.message}`;
}

/** One run of `size` elements: its wall ms, or what went wrong. */
async function once(
  runtime: RedisRuntime,
  size: number,
  timeoutMs: number,
): Promise<number | Omit<P11Failure, 'size'>> {
  const definition = mapReactor(P11_FANOUT_REACTOR, true);
  const start = performance.now();
  try {
    const started = await runtime.engine.start(definition, { n: size });
    const result =
      started.status === 'queued' ? await runtime.engine.wait(started.executionId, { timeoutMs, pollMs: 5 }) : started;
    const afterMs = performance.now() - start;
    if (!TERMINAL.has(result.status))
      return { kind: 'stalled', message: `still ${result.status} after ${timeoutMs} ms`, afterMs };
    if (result.status !== 'completed' || result.value !== size)
      return {
        kind: 'error',
        message: result.status === 'completed' ? `value ${String(result.value)}` : describe(result),
        afterMs,
      };
    return afterMs;
  } catch (error) {
    return {
      kind: 'error',
      message: error instanceof Error ? error.message : String(error),
      afterMs: performance.now() - start,
    };
  }
}

/** Runs the Redis fan-out case: samples of both sizes, and the sizes that failed or stalled. */
export async function redisFanOut(options: RedisFanOutOptions): Promise<P11Outcome> {
  const samples: P11Sample[] = [];
  const failures: P11Failure[] = [];
  let server: RedisServerHandle | undefined;
  let workers: BenchChild[] = [];
  let runtime: RedisRuntime | undefined;
  try {
    server = await startRedisServer();
    const config: P11WorkerConfig = { url: server.url, prefix: PREFIX, concurrency: options.concurrency };
    workers = await spawnChildren(
      WORKER,
      Array.from({ length: options.workers }, () => config),
    );
    runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [mapReactor(P11_FANOUT_REACTOR, true)] });
    const sizes = [
      { size: options.small, runs: options.runsSmall },
      { size: options.large, runs: options.runsLarge },
    ];
    const failed = new Set<number>();
    rounds: for (let round = 1 - options.warmup; round <= options.rounds; round++) {
      for (const { size, runs } of sizes) {
        if (failed.has(size)) continue;
        let wallMs = 0;
        for (let r = 0; r < runs; r++) {
          const outcome = await once(runtime, size, options.runTimeoutMs);
          if (typeof outcome === 'number') {
            wallMs += outcome;
            continue;
          }
          failed.add(size);
          failures.push({ size, ...outcome });
          if (outcome.kind === 'stalled') break rounds;
          break;
        }
        if (!failed.has(size) && round >= 1) samples.push({ size, round, runs, wallMs });
      }
    }
    return { samples, failures };
  } catch (error) {
    // The server, a worker or the runtime could not start: every size not yet failed is unmeasured.
    const message = `the Redis case could not run: ${error instanceof Error ? error.message : String(error)}`;
    for (const size of [options.small, options.large])
      if (!failures.some((f) => f.size === size)) failures.push({ size, kind: 'error', message, afterMs: 0 });
    return { samples, failures };
  } finally {
    await runtime?.close().catch(() => undefined);
    await Promise.all(workers.map((w) => w.kill()));
    await server?.dispose().catch(() => undefined);
  }
}
