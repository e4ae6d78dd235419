/**
 * `npm run --silent chaos [-- <rounds> [executions]]`: the long version of the fault tests.
 * Each round kills the throwaway `redis-server` (SIGKILL) in the middle of `executions` (default
 * 300) executions over two worker processes, restarts it 3 s later, and counts the outcome,
 * once per persistence setting (AOF always, AOF everysec, none). Prints one JSON object per
 * run (completed / failed / lost / stuck / body re-runs / overlaps …) and a final verdict line,
 * like `bench`. Exits 0 whether or not the bar is met (`pass` says), 1 when it could not run.
 *
 * @module
 */
import { runRestartExperiment, type RestartOutcome } from '../test/faults/support/restart-experiment.js';

const MODES = ['aof', 'aof-everysec', 'none'] as const;

/** The bar of each setting: nothing failed or stuck; with AOF always nothing lost; everysec loses only the last second. */
function meets(outcome: RestartOutcome): boolean {
  if (outcome.failed > 0 || outcome.stuck > 0) return false;
  if (outcome.persistence === 'aof') return outcome.lost === 0 && outcome.overlaps === 0;
  if (outcome.persistence === 'aof-everysec') return outcome.lost === outcome.lostRecent && outcome.overlaps === 0;
  return outcome.warnings.length > 0 && (outcome.lost === 0 || outcome.waitOfLost === 'execution_not_found');
}

async function main(argv: readonly string[]): Promise<void> {
  const rounds = Number(argv[0] ?? 1);
  const executions = Number(argv[1] ?? 300);
  if (!Number.isSafeInteger(rounds) || rounds < 1 || !Number.isSafeInteger(executions) || executions < 1) {
    process.stderr.write('usage: npm run --silent chaos -- [rounds (≥ 1)] [executions (≥ 1)]\n');
    process.exit(2);
  }
  const results: RestartOutcome[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const persistence of MODES) {
      const outcome = await runRestartExperiment({ persistence, executions });
      results.push(outcome);
      process.stdout.write(`${JSON.stringify({ chaos: 'redis-restart', round, ...outcome, pass: meets(outcome) })}\n`);
    }
  }
  const sum = (pick: (o: RestartOutcome) => number): number => results.reduce((n, o) => n + pick(o), 0);
  const verdict = {
    chaos: 'verdict',
    runs: results.length,
    failed: sum((o) => o.failed),
    lost: sum((o) => o.lost),
    stuck: sum((o) => o.stuck),
    bodyReruns: sum((o) => o.bodyReruns),
    overlaps: sum((o) => o.overlaps),
    pass: results.every(meets),
  };
  process.stdout.write(`${JSON.stringify(verdict)}\n`);
  process.exit(0);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `chaos could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
