/** What `fanout.test.ts` and its worker processes (`fanout-worker-process.ts`) share. */

export interface FanOutWorkerConfig {
  readonly url: string;
  /** Key prefix of the runtime (store, ledger, queue) and of the observation keys. */
  readonly prefix: string;
  readonly concurrency: number;
  readonly batchSize: number;
}

/** The reactor name both sides register. */
export const FANOUT_REACTOR = 'fan-acceptance';

/** Observation keys the workers write: per-element counters (hashes index → n), pids, one ordered log. */
export function fanOutKeys(prefix: string): {
  runs: string;
  runPid: string;
  undos: string;
  undoPid: string;
  log: string;
} {
  return {
    runs: `${prefix}-obs:runs`,
    runPid: `${prefix}-obs:run-pid`,
    undos: `${prefix}-obs:undos`,
    undoPid: `${prefix}-obs:undo-pid`,
    log: `${prefix}-obs:log`,
  };
}
