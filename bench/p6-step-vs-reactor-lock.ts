/**
 * P6 (SC-002): what a step-level lock buys over a reactor-level one. A reactor of 8 steps in a
 * chain, each 20 ms (a timer), runs 8 executions at once on ONE key, in-process
 * (`engine.run`) on the Redis backend of a throwaway redis-server. Subject: only step 3 declares
 * the lock (`lock:` on the step), so the executions overlap everywhere except inside step 3.
 * Anchor, in the same run on the same server: the same reactor with the lock at reactor level
 * (`withLock`), which serializes the whole executions. Rounds alternate subject and anchor.
 *
 * Figure: wall(step level) / wall(reactor level), median of the per-round ratios. Ideal
 * ≈ (7 × 20 + 8 × 20) / (8 × 8 × 20) = 300 / 1280 ≈ 0.23; target ≤ 0.35.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { createEngine, reactor, type AnyReactorDefinition, type Engine } from '../src/index.js';
import { createRedisBackend } from '../src/storage/redis/index.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const STEPS = 8;
const STEP_MS = 20;
const LOCKED_STEP = 3; // s3 in build()
const EXECUTIONS = 8;
const ROUNDS = 7;
const WARMUP_ROUNDS = 1;
const TARGET = 0.35;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** 8 chained 20 ms steps; the lock on step 3 (`step`) or on the whole reactor (`reactor`). */
function build(level: 'step' | 'reactor'): AnyReactorDefinition {
  const lock = {
    key: ({ account }: { account: string }) => `p6:${level}:${account}`,
    ttl: '30s',
    wait: '60s',
  } as const;
  const base = reactor(`p6-${level}`).input({ account: z.string() });
  const r = level === 'reactor' ? base.withLock(lock) : base;
  const body = { run: () => sleep(STEP_MS) };
  return r
    .step('s1', body)
    .step('s2', { ...body, waitFor: ['s1'] })
    .step('s3', { ...body, waitFor: ['s2'], ...(level === 'step' ? { lock } : {}) })
    .step('s4', { ...body, waitFor: ['s3'] })
    .step('s5', { ...body, waitFor: ['s4'] })
    .step('s6', { ...body, waitFor: ['s5'] })
    .step('s7', { ...body, waitFor: ['s6'] })
    .step('s8', { ...body, waitFor: ['s7'] })
    .build();
}

async function round8(engine: Engine, definition: AnyReactorDefinition): Promise<number> {
  const began = performance.now();
  const results = await Promise.all(
    Array.from({ length: EXECUTIONS }, () => engine.run(definition, { account: 'one' })),
  );
  const wall = performance.now() - began;
  const bad = results.find((r) => r.status !== 'completed');
  if (bad) throw new Error(`P6: an execution ended ${bad.status}`);
  return wall;
}

/** Runs P6 and returns its verdict. */
export async function runP6(): Promise<Verdict> {
  const server = await startRedisServer();
  const backend = createRedisBackend({ url: server.url, prefix: 'p6' });
  try {
    const engine = createEngine({ store: backend.store, coordinator: backend.coordinator, checkpointIntervalMs: 100 });
    const stepLevel = build('step');
    const reactorLevel = build('reactor');
    for (let i = 0; i < WARMUP_ROUNDS; i++) {
      await round8(engine, stepLevel);
      await round8(engine, reactorLevel);
    }
    const ratios: number[] = [];
    const walls = { step: [] as number[], reactor: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      const s = await round8(engine, stepLevel);
      const r = await round8(engine, reactorLevel);
      walls.step.push(s);
      walls.reactor.push(r);
      ratios.push(s / r);
      emit({
        bench: 'P6',
        round: i + 1,
        stepLevelMs: round(s, 1),
        reactorLevelMs: round(r, 1),
        ratio: round(s / r, 3),
      });
    }
    const value = round(median(ratios), 3);
    const ideal = (STEPS - 1) * STEP_MS + EXECUTIONS * STEP_MS;
    return {
      bench: 'P6',
      metric: 'wall_ratio_step_vs_reactor_lock',
      value,
      target: `<= ${TARGET}`,
      anchor: {
        reactorLevelMedianMs: round(median(walls.reactor), 1),
        stepLevelMedianMs: round(median(walls.step), 1),
        idealStepLevelMs: ideal,
        idealReactorLevelMs: EXECUTIONS * STEPS * STEP_MS,
        idealRatio: round(ideal / (EXECUTIONS * STEPS * STEP_MS), 3),
        shape: `${STEPS} steps × ${STEP_MS} ms, step ${LOCKED_STEP} locked, ${EXECUTIONS} executions on one key, in-process on Redis`,
        rounds: ROUNDS,
      },
      pass: value <= TARGET,
    };
  } finally {
    await backend.close();
    await server.dispose();
  }
}
