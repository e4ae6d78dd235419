/**
 * P2: DAG parallelism. Four independent 50 ms steps then a join, on the embedded engine.
 * Figure: wall time / 50 ms. Target ≤ 1.3. Anchor, measured in the same run: the same reactor
 * with one step at a time (what the reference gem does, ~200 ms).
 *
 * @module
 */
import { createEmbeddedEngine } from '../src/embedded.js';
import { reactor, type AnyReactorDefinition, type ReactorOptions } from '../src/index.js';
import { emit, measureSideBySide, median, round, type Verdict } from './support/runner.js';

const STEP_MS = 50;
const TARGET_RATIO = 1.3;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function fanOutJoin(options: ReactorOptions): AnyReactorDefinition {
  const body = async (): Promise<number> => {
    await sleep(STEP_MS);
    return 1;
  };
  return reactor('p2-fan-out', options)
    .step('a', { run: body })
    .step('b', { run: body })
    .step('c', { run: body })
    .step('d', { run: body })
    .step('join', {
      args: ($) => ({ a: $.result('a'), b: $.result('b'), c: $.result('c'), d: $.result('d') }),
      run: ({ a, b, c, d }) => a + b + c + d,
    })
    .returns('join');
}

/** Runs P2 and returns its verdict. */
export async function runP2(): Promise<Verdict> {
  const engine = createEmbeddedEngine();
  const parallel = fanOutJoin({});
  const sequential = fanOutJoin({ maxConcurrency: 1 });
  const runOnce = (definition: AnyReactorDefinition) => async () => {
    const result = await engine.run(definition, {});
    if (result.status !== 'completed' || result.value !== 4)
      throw new Error(`P2 reactor did not complete: ${result.status}`);
  };
  const times = await measureSideBySide(
    { parallel: runOnce(parallel), sequential: runOnce(sequential) },
    { warmup: 2, repetitions: 9 },
  );
  const wall = median(times.parallel);
  const seq = median(times.sequential);
  emit({ bench: 'P2', figure: 'parallel_wall_ms', value: round(wall), runs: times.parallel.map((t) => round(t, 1)) });
  emit({
    bench: 'P2',
    figure: 'sequential_wall_ms',
    value: round(seq),
    runs: times.sequential.map((t) => round(t, 1)),
  });
  emit({ bench: 'P2', figure: 'speedup_vs_sequential', value: round(seq / wall) });
  const ratio = wall / STEP_MS;
  return {
    bench: 'P2',
    metric: 'wall_over_step_duration',
    value: round(ratio, 3),
    target: `<= ${TARGET_RATIO}`,
    anchor: {
      step_ms: STEP_MS,
      parallel_wall_ms: round(wall),
      sequential_wall_ms: round(seq),
      sequential_means: 'same reactor with maxConcurrency 1 (the reference gem runs steps one after another)',
    },
    pass: ratio <= TARGET_RATIO,
  };
}
