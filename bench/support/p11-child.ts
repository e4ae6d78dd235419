/**
 * Measuring child of P11 (`node --import tsx p11-child.ts '<json config>'`, see
 * {@link P11ChildConfig}): one family of in-process cases per process, so a case that stalls or
 * runs out of memory can be killed without taking the benchmark with it.
 *
 * Prints `{"ready":true}`, answers `ping <n>`, then on `go` runs the rounds: each round times one
 * sample of the small size, then one of the large size (`runsSmall` / `runsLarge` runs in a row,
 * wall and CPU time), and prints `{"sample":…}` per sample. A size whose run fails or throws is
 * reported once as `{"failure":…}` and not run again; a run that outlives `runTimeoutMs` is
 * reported as stalled and the child exits (the stuck run cannot be stopped from outside).
 * Ends with `{"done":true}`.
 *
 * - `linear`: a chain of n trivial steps, `engine.run` on `createEngine({ store: new MemoryStore() })`;
 * - `inline_map`: the map over n numbers run inline (`engine.run`, in-process elements), same engine;
 * - `embedded_fanout`: the same map with `fanOut`, `engine.start` + `engine.wait` on
 *   `createEmbeddedEngine` (pool of 16, fallback job out of reach).
 *
 * A new engine (and store) per sample, built outside the timed part; a forced GC between samples.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createEmbeddedEngine } from '../../src/embedded.js';
import { createEngine, MemoryStore, type AnyReactorDefinition, type RunResult } from '../../src/index.js';
import { now } from './children.js';
import { chainReactor, mapReactor, type P11ChildConfig, type P11Failure, type P11Sample } from './p11-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P11ChildConfig;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** A failed run's error, as `code: message`. */
function describe(result: RunResult): string {
  if (result.status !== 'failed') return `ended ${result.status}`;
  const code = (result.error as { code?: unknown }).code;
  return `${typeof code === 'string' ? `${code}: ` : ''}${result.error.message}`;
}

/** Times `runs` executions of one size on a fresh engine; resolves with the times or what went wrong. */
type Sampler = (size: number, runs: number) => Promise<{ wallMs: number; cpuMs: number } | Omit<P11Failure, 'size'>>;

class Stalled extends Error {}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Stalled(`no outcome within ${config.runTimeoutMs} ms`)), config.runTimeoutMs);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Times `runs` calls of `once`; the first that does not give `expected` ends the sample as a failure. */
async function timed(
  runs: number,
  once: () => Promise<RunResult>,
  expected: unknown,
): Promise<{ wallMs: number; cpuMs: number } | Omit<P11Failure, 'size'>> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let r = 0; r < runs; r++) {
    const runStart = performance.now();
    try {
      const result = await withTimeout(once());
      // An inline run that never yields to the event loop cannot be interrupted by the timer: check after.
      const tookMs = performance.now() - runStart;
      if (tookMs > config.runTimeoutMs)
        return {
          kind: 'stalled',
          message: `took ${Math.round(tookMs)} ms, over ${config.runTimeoutMs} ms`,
          afterMs: tookMs,
        };
      if (result.status !== 'completed' || result.value !== expected)
        return {
          kind: 'error',
          message: result.status === 'completed' ? `value ${String(result.value)}` : describe(result),
          afterMs: performance.now() - runStart,
        };
    } catch (error) {
      return {
        kind: error instanceof Stalled ? 'stalled' : 'error',
        message: error instanceof Error ? error.message : String(error),
        afterMs: performance.now() - runStart,
      };
    }
  }
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

function inlineSampler(
  definitionOf: (size: number) => AnyReactorDefinition,
  expected: (size: number) => unknown,
): Sampler {
  return async (size, runs) => {
    const definition = definitionOf(size);
    const engine = createEngine({ store: new MemoryStore() });
    return timed(runs, () => engine.run(definition, { n: size }), expected(size));
  };
}

function fanOutSampler(): Sampler {
  const definition = mapReactor('p11-embedded-fanout', true);
  return async (size, runs) => {
    const engine = createEmbeddedEngine({ workerConcurrency: 16, background: { parkFallbackMs: 600_000 } });
    try {
      return await timed(
        runs,
        async () => {
          const started = await engine.start(definition, { n: size });
          if (started.status !== 'queued') return started;
          return engine.wait(started.executionId, { timeoutMs: config.runTimeoutMs, pollMs: 5 });
        },
        size,
      );
    } finally {
      await engine.close({ timeoutMs: 1_000 }).catch(() => undefined);
    }
  };
}

function sampler(): Sampler {
  switch (config.family) {
    case 'linear': {
      const chains = new Map<number, AnyReactorDefinition>();
      const chainOf = (n: number): AnyReactorDefinition => {
        if (!chains.has(n)) chains.set(n, chainReactor(n));
        return chains.get(n)!;
      };
      return inlineSampler(chainOf, (n) => n - 1);
    }
    case 'inline_map': {
      const definition = mapReactor('p11-inline-map', false);
      return inlineSampler(
        () => definition,
        (n) => n,
      );
    }
    case 'embedded_fanout':
      return fanOutSampler();
  }
}

async function measure(): Promise<void> {
  const sample = sampler();
  const failed = new Set<number>();
  const sizes = [
    { size: config.small, runs: config.runsSmall },
    { size: config.large, runs: config.runsLarge },
  ];
  for (let round = 1 - config.warmup; round <= config.rounds; round++) {
    for (const { size, runs } of sizes) {
      if (failed.has(size)) continue;
      gc();
      const outcome = await sample(size, runs);
      if ('kind' in outcome) {
        failed.add(size);
        print({ failure: { size, ...outcome } satisfies P11Failure });
        if (outcome.kind === 'stalled') process.exit(0);
        continue;
      }
      if (round >= 1) print({ sample: { size, round, runs, ...outcome } satisfies P11Sample });
    }
  }
  print({ done: true });
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const [verb = '', arg = ''] = line.trim().split(/\s+/);
    if (verb === 'ping') print({ pong: Number(arg), t: now() });
    if (verb === 'go')
      measure().then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(
            `p11 child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
          );
          process.exit(1);
        },
      );
  })
  .on('close', () => process.exit(0)); // the parent went away
print({ ready: true, pid: process.pid });
