/**
 * P11: cost growth. What one unit of work costs when there is a lot of it, against the same unit
 * when there is little, each pair measured side by side in one run (rounds alternate the sizes):
 *
 * - `linear`: engine cost per step of a chain of 2,000 trivial steps vs 100 (`engine.run` on
 *   `createEngine({ store: new MemoryStore() })`: wall ms / steps);
 * - `inline_map`: per element of an inline map over 100,000 numbers vs 1,000 (`maxElements`
 *   raised to 100,000, elements in this process);
 * - `embedded_fanout`: wall per element of the same map with `fanOut: { batchSize: 100 }` started
 *   in the background on `createEmbeddedEngine` (pool of 16), 10,000 elements vs 1,000;
 * - `redis_fanout`: the same on a throwaway `redis-server` with two worker processes
 *   (`startWorker({ concurrency: 16 })` each), 10,000 elements vs 1,000.
 *
 * A family's ratio is the median per-unit time of the large size over that of the small one.
 * The three in-process families run in a child process each (a stalled or crashed case is killed
 * without the benchmark); every run has a timeout, and a size that fails, throws or stalls is
 * printed as such and fails the verdict. A last check runs a map one element over its
 * `maxElements`: it must fail with `map_too_large` before any element runs, in a small fraction
 * of the large inline map's time. Verdict `cost_growth_max_ratio`: the worst ratio, target ≤ 1.5.
 *
 * @module
 */
import { runFamily } from './support/p11-family.js';
import { overLimitMap, type LimitCheck } from './support/p11-limits.js';
import { redisFanOut } from './support/p11-redis.js';
import { P11_MAX_ELEMENTS, type P11ChildConfig, type P11Family, type P11Outcome } from './support/p11-shared.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const TARGET = 1.5;
const RUN_TIMEOUT_MS = 60_000;
const FAMILY_DEADLINE_MS = 120_000;
/** The over-limit map must fail within this fraction of one large inline map run. */
const EARLY_FRACTION = 0.1;

type Case = P11Family | 'redis_fanout';

const FAMILIES: readonly P11ChildConfig[] = [
  {
    family: 'linear',
    small: 100,
    large: 2_000,
    runsSmall: 200,
    runsLarge: 10,
    warmup: 2,
    rounds: 7,
    runTimeoutMs: RUN_TIMEOUT_MS,
  },
  {
    family: 'inline_map',
    small: 1_000,
    large: 100_000,
    runsSmall: 50,
    runsLarge: 1,
    warmup: 1,
    rounds: 5,
    runTimeoutMs: RUN_TIMEOUT_MS,
  },
  {
    family: 'embedded_fanout',
    small: 1_000,
    large: 10_000,
    runsSmall: 10,
    runsLarge: 1,
    warmup: 1,
    rounds: 5,
    runTimeoutMs: RUN_TIMEOUT_MS,
  },
];
const REDIS = {
  small: 1_000,
  large: 10_000,
  runsSmall: 3,
  runsLarge: 1,
  warmup: 1,
  rounds: 3,
  runTimeoutMs: RUN_TIMEOUT_MS,
  workers: 2,
  concurrency: 16,
};

interface Growth {
  readonly ratio: number | undefined;
  /** Median wall ms of one run of the large size (undefined when it was not measured). */
  readonly largeRunMs: number | undefined;
  readonly failed: boolean;
}

/** Prints a family's figure (or its failures) and returns its ratio. */
function report(name: Case, unit: 'step' | 'element', small: number, large: number, outcome: P11Outcome): Growth {
  for (const f of outcome.failures)
    emit({ bench: 'P11', figure: name, [`${unit}s`]: f.size, [f.kind]: f.message, after_ms: round(f.afterMs, 0) });
  const perUnit = (size: number, clock: 'wallMs' | 'cpuMs'): number[] =>
    outcome.samples
      .filter((s) => s.size === size && s[clock] !== undefined)
      .map((s) => (s[clock]! * 1000) / (s.runs * size));
  const [wallSmall, wallLarge] = [perUnit(small, 'wallMs'), perUnit(large, 'wallMs')];
  const [cpuSmall, cpuLarge] = [perUnit(small, 'cpuMs'), perUnit(large, 'cpuMs')];
  const failed = outcome.failures.length > 0;
  if (wallSmall.length === 0 || wallLarge.length === 0)
    return { ratio: undefined, largeRunMs: undefined, failed: true };
  const ratio = median(wallLarge) / median(wallSmall);
  const largeRuns = outcome.samples.filter((s) => s.size === large).map((s) => s.wallMs / s.runs);
  emit({
    bench: 'P11',
    figure: name,
    [`small_${unit}s`]: small,
    [`large_${unit}s`]: large,
    [`small_us_per_${unit}`]: round(median(wallSmall), 3),
    [`large_us_per_${unit}`]: round(median(wallLarge), 3),
    ratio: round(ratio, 3),
    ...(cpuSmall.length > 0 && cpuLarge.length > 0 ? { cpu_ratio: round(median(cpuLarge) / median(cpuSmall), 3) } : {}),
    large_run_ms: round(median(largeRuns), 1),
    small_rounds_us: wallSmall.map((v) => round(v, 3)),
    large_rounds_us: wallLarge.map((v) => round(v, 3)),
  });
  return { ratio, largeRunMs: median(largeRuns), failed };
}

/** Runs P11 and returns its verdict. */
export async function runP11(): Promise<Verdict> {
  const growth: Partial<Record<Case, Growth>> = {};
  for (const config of FAMILIES) {
    const outcome = await runFamily(config, FAMILY_DEADLINE_MS);
    growth[config.family] = report(
      config.family,
      config.family === 'linear' ? 'step' : 'element',
      config.small,
      config.large,
      outcome,
    );
  }
  growth.redis_fanout = report('redis_fanout', 'element', REDIS.small, REDIS.large, await redisFanOut(REDIS));

  const limit = await overLimitMap().catch((error: unknown): LimitCheck => ({
    elements: P11_MAX_ELEMENTS + 1,
    status: 'threw',
    code: undefined,
    message: error instanceof Error ? error.message : String(error),
    failedStep: undefined,
    elementsRun: 0,
    ms: 0,
    clear: false,
  }));
  const largeInlineMs = growth.inline_map?.largeRunMs;
  const early = limit.ms <= (largeInlineMs === undefined ? 1_000 : EARLY_FRACTION * largeInlineMs);
  emit({
    bench: 'P11',
    figure: 'limit_map_too_large',
    elements: limit.elements,
    max_elements: P11_MAX_ELEMENTS,
    status: limit.status,
    code: limit.code ?? null,
    failed_step: limit.failedStep ?? null,
    elements_run: limit.elementsRun,
    ms: round(limit.ms, 2),
    message: limit.message,
    clear: limit.clear,
    early,
  });

  const cases = Object.entries(growth) as [Case, Growth][];
  const ratios = Object.fromEntries(cases.map(([name, g]) => [name, g.ratio === undefined ? null : round(g.ratio, 3)]));
  const measured = cases.flatMap(([, g]) => (g.ratio === undefined ? [] : [g.ratio]));
  const worst = measured.length > 0 ? Math.max(...measured) : 0;
  const failing = cases.filter(([, g]) => g.failed || g.ratio === undefined).map(([name]) => name);
  return {
    bench: 'P11',
    metric: 'cost_growth_max_ratio',
    value: round(worst, 3),
    target: `<= ${TARGET}`,
    anchor: {
      ratios,
      failed_or_stalled: failing,
      limit_fails_early_and_clearly: limit.clear && early,
      sizes: {
        linear_steps: [100, 2_000],
        inline_map_elements: [1_000, 100_000],
        embedded_fanout_elements: [1_000, 10_000],
        redis_fanout_elements: [REDIS.small, REDIS.large],
      },
      fan_out: {
        batch_size: 100,
        embedded_pool: 16,
        redis_workers: REDIS.workers,
        worker_concurrency: REDIS.concurrency,
      },
    },
    pass: failing.length === 0 && measured.every((r) => r <= TARGET) && limit.clear && early,
  };
}
