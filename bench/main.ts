/**
 * Benchmark entry: `npm run --silent bench -- <ID>` with ID `P1` … `P13`, `P15` … `P18`, `P4-pg`, `P5-pg`
 * (P4 and P5 on PostgreSQL) or `all`; ids are case-insensitive. Prints one JSON
 * object per line; each benchmark's last line is its verdict. Exits 0 whether or not targets
 * are met, non-zero when a benchmark could not run or the id is unknown.
 *
 * @module
 */
import { runP1 } from './p1-engine-overhead.js';
import { runP2 } from './p2-dag-parallelism.js';
import { runP3 } from './p3-locked-step.js';
import { runP4, runP4Postgres } from './p4-contended-lock.js';
import { runP5, runP5Postgres } from './p5-wake-latency.js';
import { runP6 } from './p6-step-vs-reactor-lock.js';
import { runP7 } from './p7-worker-throughput.js';
import { runP8 } from './p8-retained-memory.js';
import { runP9 } from './p9-wake-precision.js';
import { runP10 } from './p10-cluster.js';
import { runP11 } from './p11-cost-growth.js';
import { runP12 } from './p12-bulk-start.js';
import { runP13 } from './p13-wake-handover.js';
import { runP15 } from './p15-event-resume.js';
import { runP16 } from './p16-durable-mode.js';
import { runP17 } from './p17-postgres-throughput.js';
import { runP18 } from './p18-postgres-locked-step.js';
import { emit, type Verdict } from './support/runner.js';

const BENCHMARKS: Readonly<Record<string, () => Promise<Verdict>>> = {
  P1: runP1,
  P2: runP2,
  P3: runP3,
  P4: runP4,
  'P4-PG': runP4Postgres,
  P5: runP5,
  'P5-PG': runP5Postgres,
  P6: runP6,
  P7: runP7,
  P8: runP8,
  P9: runP9,
  P10: runP10,
  P11: runP11,
  P12: runP12,
  P13: runP13,
  P15: runP15,
  P16: runP16,
  P17: runP17,
  P18: runP18,
};

async function main(argv: readonly string[]): Promise<number> {
  const id = argv[0]?.toUpperCase();
  if (id === undefined || argv.length > 1) {
    process.stderr.write(`usage: npm run --silent bench -- <${Object.keys(BENCHMARKS).join('|')}|all>\n`);
    return 2;
  }
  const ids = id === 'ALL' ? Object.keys(BENCHMARKS) : [id];
  for (const name of ids) {
    const bench = BENCHMARKS[name];
    if (!bench) {
      process.stderr.write(`unknown benchmark "${argv[0]}"; known: ${Object.keys(BENCHMARKS).join(', ')}, all\n`);
      return 2;
    }
    emit(await bench());
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `benchmark could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
