/**
 * A tiny benchmark runner: warmup, several timed repetitions, the median. Figures go to stdout
 * as one JSON object per line; the verdict line is the last one a benchmark prints.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';

/** One JSON line of a benchmark. */
export type BenchLine = Readonly<Record<string, unknown>> & { readonly bench: string };

/** The verdict of a benchmark (its last line). */
export type Verdict = {
  readonly bench: string;
  readonly metric: string;
  readonly value: number;
  readonly target: string;
  readonly anchor: Readonly<Record<string, unknown>>;
  readonly pass: boolean;
};

/** Prints one JSON line to stdout. */
export function emit(line: BenchLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Options of {@link measure}. */
export interface MeasureOptions {
  /** Untimed runs first (JIT warmup). */
  readonly warmup: number;
  /** Timed repetitions. */
  readonly repetitions: number;
}

/** Times `fn` `repetitions` times after `warmup` untimed calls; returns each repetition's ms. */
export async function measure(fn: () => Promise<unknown>, options: MeasureOptions): Promise<number[]> {
  for (let i = 0; i < options.warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < options.repetitions; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

/**
 * Times several contenders side by side: each repetition runs every contender once, in turn,
 * so drift and noise hit them alike. Returns each contender's per-repetition ms.
 */
export async function measureSideBySide<K extends string>(
  contenders: Readonly<Record<K, () => Promise<unknown>>>,
  options: MeasureOptions,
): Promise<Record<K, number[]>> {
  const names = Object.keys(contenders) as K[];
  for (let i = 0; i < options.warmup; i++) for (const name of names) await contenders[name]();
  const times = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < options.repetitions; i++) {
    for (const name of names) {
      const start = performance.now();
      await contenders[name]();
      times[name].push(performance.now() - start);
    }
  }
  return times;
}

/** Rounds to `digits` decimals (for readable JSON). */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
