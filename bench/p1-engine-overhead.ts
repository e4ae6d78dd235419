/**
 * P1: synchronous engine overhead. A 10-step linear reactor on the memory backend against the
 * same 10 async function calls awaited in a row, measured side by side in one process.
 * Figure: (engine time − plain time) / 10 steps, in µs per step. Target ≤ 25 µs.
 *
 * @module
 */
import { createEmbeddedEngine } from '../src/embedded.js';
import { reactor, type AnyReactorDefinition } from '../src/index.js';
import { emit, measureSideBySide, median, round, type Verdict } from './support/runner.js';

const STEPS = 10;
const RUNS_PER_REPETITION = 500;
const TARGET_US = 25;

/** The body of every step: a trivial async function. */
async function work(n: number): Promise<number> {
  return n + 1;
}

function linearReactor(): AnyReactorDefinition {
  // Built dynamically (ten steps, each reading the previous step's result); types don't matter here.
  let builder = reactor('p1-linear').step('s0', { run: () => work(0) }) as unknown as {
    step(name: string, options: object): typeof builder;
    build(): AnyReactorDefinition;
  };
  for (let i = 1; i < STEPS; i++) {
    builder = builder.step(`s${i}`, {
      args: ($: { result(step: string): unknown }) => ({ n: $.result(`s${i - 1}`) }),
      run: ({ n }: { n: number }) => work(n),
    });
  }
  return builder.build();
}

/** Runs P1 and returns its verdict. */
export async function runP1(): Promise<Verdict> {
  const definition = linearReactor();
  const engine = createEmbeddedEngine();
  let sink = 0;
  const contenders = {
    engine: async () => {
      for (let r = 0; r < RUNS_PER_REPETITION; r++) {
        const result = await engine.run(definition, {});
        if (result.status !== 'completed') throw new Error(`P1 reactor did not complete: ${result.status}`);
      }
    },
    plain: async () => {
      for (let r = 0; r < RUNS_PER_REPETITION; r++) {
        let n = 0;
        for (let i = 0; i < STEPS; i++) n = await work(n);
        sink += n;
      }
    },
  };
  const times = await measureSideBySide(contenders, { warmup: 3, repetitions: 9 });
  if (sink === 0) throw new Error('plain calls did not run');
  const perRun = (ms: number[]): number => (median(ms) * 1000) / RUNS_PER_REPETITION; // µs per run
  const engineUs = perRun(times.engine);
  const plainUs = perRun(times.plain);
  const overheadPerStep = (engineUs - plainUs) / STEPS;
  emit({
    bench: 'P1',
    figure: 'engine_run_us',
    value: round(engineUs),
    steps: STEPS,
    runs_per_repetition: RUNS_PER_REPETITION,
    repetitions: times.engine.length,
  });
  emit({ bench: 'P1', figure: 'plain_calls_us', value: round(plainUs), steps: STEPS });
  emit({ bench: 'P1', figure: 'engine_us_per_step', value: round(engineUs / STEPS) });
  return {
    bench: 'P1',
    metric: 'engine_overhead_us_per_step',
    value: round(overheadPerStep),
    target: `<= ${TARGET_US}`,
    anchor: {
      plain_10_calls_us: round(plainUs, 3),
      engine_10_step_run_us: round(engineUs),
      backend: 'memory (createEmbeddedEngine)',
    },
    pass: overheadPerStep <= TARGET_US,
  };
}
