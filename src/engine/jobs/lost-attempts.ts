/**
 * What a job records when it takes over an execution whose last worker was lost mid-job (the
 * record still says `running`): the attempts that worker may have run and never settled on the
 * record. Durable mode (the lost job put each start on the record): exactly the started,
 * unsettled attempts, `worker_lost`. With a checkpoint interval: every step that could have
 * started since the last checkpoint, `may_have_run` — never fewer runs than could have happened
 * (docs/decisions/098). A job a worker's shutdown handed back records the same, its started
 * attempts as `interrupted` (docs/decisions/118).
 *
 * @module
 */
import { onNode, type AnyReactorDefinition, type GraphNode, type NodeHandlers } from '../../dsl/definition.js';
import type { JobDelivery } from '../../ports/queue.js';
import type { AttemptOutcome, ExecutionRecord, StepRecord } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';
import { nextAttempt } from '../run/step-runner.js';

/** One attempt a lost worker may have run, as this job records it. */
export interface LostAttempt {
  readonly step: string;
  readonly attempt: number;
  readonly outcome: Extract<AttemptOutcome, 'worker_lost' | 'may_have_run' | 'interrupted'>;
  /** When its start was on the record (engine clock, ms). */
  readonly startedAt?: number;
}

/**
 * Records in `state` (rebuilt from `record` for this job) the attempts the lost worker may have
 * run: each is counted in its step's `attempts`, logged in its `runs` and announced by a
 * `step.attempt_lost` event; the step's record becomes `retrying`, so its next attempt has the
 * next number and a rollback compensates it as a step whose body ran.
 *
 * A worker was lost when the record says `running` (a job began and never wrote how it ended:
 * parked, paused, re-enqueued, finished), or when the record is still `pending` and this job
 * takes over from another delivery ({@link takesOver}): with a checkpoint interval a job writes
 * `running` only with its first interval's checkpoint. Nothing otherwise.
 */
export function recordLostAttempts(
  state: RunState,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
): readonly LostAttempt[] {
  // A worker's shutdown handed the job back: what it ran after its last checkpoint is recorded like
  // a lost worker's, its started attempts as `interrupted` (their bodies returned before this job began; decision 118).
  const handback = handedBack(delivery);
  const running = record.status === 'running';
  if (!running && !(record.status === 'pending' && (handback || takesOver(record, delivery)))) return [];
  const lastJob = running ? record.background?.lastJob : undefined;
  // A lost job that wrote nothing: a durable one writes `running` before any body, so under the
  // same settings (this worker's) it ran none; one with an interval may have run some.
  const found = lostAttempts(reactor, record, running ? lastJob?.marksStarts === true : state.marksStarts);
  const lost = handback
    ? found.map((a) => (a.outcome === 'worker_lost' ? { ...a, outcome: 'interrupted' as const } : a))
    : found;
  const now = state.clock.now();
  for (const a of lost) {
    const worker = state.stepRecord(a.step)?.started?.worker ?? lastJob?.worker;
    state.setStep(a.step, { status: 'retrying', attempts: a.attempt });
    state.logAttempt(a.step, [
      {
        attempt: a.attempt,
        ...(worker === undefined ? {} : { worker }),
        outcome: a.outcome,
        ...(a.startedAt === undefined ? {} : { startedAt: a.startedAt }),
        endedAt: now,
      },
    ]);
    state.emit({
      type: 'step.attempt_lost',
      step: a.step,
      attempt: a.attempt,
      outcome: a.outcome,
      ...(worker === undefined ? {} : { worker }),
    });
  }
  return lost;
}

/**
 * True when this job continues where another delivery of the execution stopped: the queue
 * delivers the job again (its worker died or stalled), the recovery sweep enqueued it, or a job
 * whose lease ran out handed it on (`lapsed`).
 */
export function takesOver(record: ExecutionRecord, delivery: JobDelivery): boolean {
  return (
    delivery.delivery > 1 || record.background?.recovered?.jobId === delivery.jobId || /:lapsed:/.test(delivery.jobId)
  );
}

/** A job a worker's shutdown handed back (`<id>:handback:…`): its worker was stopped, not lost (decision 118). */
function handedBack(delivery: JobDelivery): boolean {
  return delivery.jobId.includes(':handback:');
}

/**
 * The attempts a lost worker may have run, from its record: every started, unsettled attempt
 * (`StepRecord.started`, or a timed attempt's recorded start); without start marks (`exact`
 * false) also every step that could have started since the last checkpoint.
 */
export function lostAttempts(reactor: AnyReactorDefinition, record: ExecutionRecord, exact: boolean): LostAttempt[] {
  const lost: LostAttempt[] = [];
  const known = new Set<string>();
  for (const [step, r] of Object.entries(record.steps)) {
    const startedAt = r.status === 'running' ? (r.started?.at ?? r.attemptStartedAt) : undefined;
    if (startedAt === undefined) continue;
    known.add(step);
    lost.push({ step, attempt: r.started?.attempt ?? r.attempts, outcome: 'worker_lost', startedAt });
  }
  if (exact) return lost;
  for (const step of mayHaveStarted(reactor.nodes, '', record.steps))
    if (!known.has(step)) lost.push({ step, attempt: nextAttempt(record.steps[step]), outcome: 'may_have_run' });
  return lost;
}

/** Statuses that say a step is done with as far as the lost job is concerned. */
const SETTLED: ReadonlySet<StepRecord['status']> = new Set(['completed', 'skipped']);
/** Statuses that say a step did not run in the lost job (it ended, or waits elsewhere). */
const STOPPED: ReadonlySet<StepRecord['status']> = new Set(['failed', 'halted', 'compensated', 'undone', 'dispatched']);

type StartedIn = (prefix: string, steps: Readonly<Record<string, StepRecord>>) => string[];

/**
 * Per node kind, the attempts a lost job may have started at a reachable node: a plain step's
 * own, a composed reactor's steps; undefined for a kind that writes a checkpoint or parks before
 * its dependents run, or runs in a job of its own (async steps and reactors, interrupts, sleeps,
 * maps).
 */
const STARTED_IN_JOB: NodeHandlers<StartedIn | undefined> = {
  step: (n) => (prefix) => [prefix + n.name],
  'async-step': () => undefined,
  interrupt: () => undefined,
  sleep: () => undefined,
  'wait-for-event': () => undefined,
  compose: (n) => (prefix, steps) => mayHaveStarted(n.reactor.nodes, `${prefix}${n.name}.`, steps),
  'async-reactor': () => undefined,
  map: () => undefined,
};

/**
 * The plain steps of a graph (and of the reactors it composes) that could have started since the
 * record was written: not settled on it, and every dependency settled on it or itself able to
 * finish without a checkpoint (a plain step or a compose). A sleep, an interrupt, an async step
 * and a fan-out map always write a checkpoint before what depends on them runs; a step that
 * could have started may also have finished (its dependents are then reachable too).
 */
function mayHaveStarted(
  nodes: readonly GraphNode[],
  prefix: string,
  steps: Readonly<Record<string, StepRecord>>,
): string[] {
  const reachable = new Set<string>(); // nodes that could have finished in the lost job
  const started: string[] = [];
  const settled = (name: string): boolean => SETTLED.has(steps[prefix + name]?.status ?? 'running');
  let grew = true;
  while (grew) {
    grew = false;
    for (const node of nodes) {
      if (reachable.has(node.name) || settled(node.name)) continue;
      const status = steps[prefix + node.name]?.status;
      if (status !== undefined && STOPPED.has(status)) continue;
      if (!node.dependsOn.every((dep) => settled(dep) || reachable.has(dep))) continue;
      const found = onNode(node, STARTED_IN_JOB)?.(prefix, steps);
      if (found !== undefined) {
        started.push(...found);
        reachable.add(node.name);
        grew = true;
      }
    }
  }
  return started;
}
