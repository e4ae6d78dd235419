import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    setupFiles: ['./test/support/setup.ts'],
    // Most files wait on Redis, child processes and timers rather than the CPU: two at a time
    // (Vitest's default on 2 cores is one). Every test is written to pass beside CPU-burning
    // processes, which another file running alongside is.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A bound on a hung test, not a speed requirement: generous, as a busy machine (CI beside
    // other work) may take a minute to start a server or a child process.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits for what a loaded machine may take seconds to do (its default is 1 s).
    expect: { poll: { timeout: 15_000 } },
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
