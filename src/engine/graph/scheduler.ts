/**
 * The planner and executor of one graph (a reactor, or a composed child inside it): starts
 * every step whose dependencies finished, in declaration order, up to the concurrency bound;
 * stops starting steps at the first failure or halt; then rolls back on failure.
 *
 * @module
 */
import { onNode, type GraphNode, type NodeHandlers } from '../../dsl/definition.js';
import { CancelledError, DeadlineExceededError, toError } from '../../errors.js';
import { cancelFrameChildren } from './async/cascade.js';
import { runAsyncReactor, runAsyncStep } from './async/dispatch.js';
import type { Frame, GraphOutcome } from './frame.js';
import { runCompose, runMap } from './nested.js';
import type { CompletedEntry, NodeOutcome } from '../model/outcome.js';
import { firstSuspension, type Suspended } from '../model/suspension.js';
import { resolveArgs, type ArgScope } from '../model/resolve-args.js';
import type { RunState } from '../run/run-state.js';
import { nextAttempt, runStepNode } from '../run/step-runner.js';
import { tracedNode } from '../model/instrument.js';
import { rollBackOrPark } from './fanout/rollback.js';
import { runInterrupt } from './interrupt/step.js';
import { runSleep } from './sleep.js';
import { runWaitForEvent } from './event-wait.js';
import { failurePauseOf } from './failure-policy.js';

export type { Frame, GraphOutcome } from './frame.js';
export { undoAll } from './undo.js';

/** Executes a graph and, if it failed, compensates the failed steps and undoes completed ones, newest first. */
export async function runFrame(run: RunState, frame: Frame): Promise<GraphOutcome> {
  const controller = frame.owned ?? new AbortController();
  const relay = (): void => controller.abort(frame.signal.reason);
  if (!frame.owned) frame.signal.addEventListener('abort', relay, { once: true });
  try {
    const { completed, failures, halt, results, interrupted, yielded } = await schedule(
      run,
      { ...frame, signal: controller.signal },
      controller,
    );
    // A worker job that must stop (lease lost, shutdown, store gone) rolls nothing back and writes nothing (decision 064).
    const stopped = run.stopped;
    if (stopped) throw stopped;
    const first = failures[0];
    // `onFailure: 'pause'`: a root frame's step that failed for good leaves the execution paused for an operator (decision 100);
    // not when the frame was stopped from outside first (a cancel, the deadline, a lost hold: its reason is that error).
    const stoppedFirst = controller.signal.reason instanceof Error;
    const pause =
      first && !interrupted && !stoppedFirst && frame.prefix === '' && !run.element && !run.unit && !run.replayOnly;
    const failure = pause ? failurePauseOf(frame.def, failures) : undefined;
    if (failure) return { status: 'yielded', step: failure.step, suspension: failure };
    if (first || interrupted) {
      run.emit({ type: 'run.rolling_back', step: first?.step, reactor: frame.def.name });
      if (frame.prefix === '') await run.checkpoint('rolling_back').catch(() => undefined);
      if (run.stopped) throw run.stopped; // the rollback's start could not be written (store gone past the tolerance): it runs on the next delivery
      // A cancel (an operator's, a cascade, the deadline) cancels the frame's children first (decision 087).
      if (isCancel(controller.signal.reason)) await cancelFrameChildren(run, frame.def, frame.prefix);
      // A fan-out map's elements are undone by jobs: the execution parks and resumes its rollback (decision 019).
      const park = await rollBackOrPark(run, failures, completed);
      if (park)
        return {
          status: 'yielded',
          step: park.step,
          suspension: {
            kind: 'fanOut',
            park: { ...park, failedStep: first?.step, error: first?.error ?? interrupted },
          },
        };
      // A cancel wins over a step that failed while it was on its way: the run ends cancelled.
      const cancel: unknown = controller.signal.reason;
      if (isCancel(cancel)) return { status: 'failed', step: first?.step, error: cancel, validation: [] };
      return first
        ? { status: 'failed', step: first.step, error: first.error, validation: first.validation }
        : { status: 'failed', step: undefined, error: interrupted!, validation: [] };
    }
    if (halt) return { status: 'halted', ...halt };
    if (yielded) return { status: 'yielded', step: yielded.step, suspension: yielded.suspension };
    const value = frame.def.returns === undefined ? Object.fromEntries(results) : results.get(frame.def.returns);
    return { status: 'completed', value, completed };
  } finally {
    if (!frame.owned) frame.signal.removeEventListener('abort', relay);
  }
}

/**
 * Durable mode: marks the starts of the plain steps a job's graph starts first (the first ready
 * nodes in declaration order, up to the concurrency bound), so the job's first checkpoint carries
 * them and its first steps write no start of their own (decision 098). Call right before it.
 */
export function carryFirstStarts(run: RunState, def: Frame['def']): void {
  if (!run.marksStarts) return;
  let free = def.maxConcurrency ?? run.maxConcurrency;
  for (const node of def.nodes) {
    if (free === 0) return;
    if (node.dependsOn.length > 0) continue; // the scheduler starts the roots first, replayed ones included
    free--;
    if (!carried(node)) continue;
    const recorded = run.stepRecord(node.name);
    if (recorded?.status !== 'completed' && recorded?.status !== 'skipped')
      run.carryStart(node.name, nextAttempt(recorded));
  }
}

/** A step whose start a checkpoint before it may carry: a plain step admitted by nothing (its body starts as soon as it runs). */
function carried(node: GraphNode): boolean {
  return node.kind === 'step' && node.coordination.length === 0;
}

/** True for what a cancelled run's signal is aborted with: an operator's (or a cascade's) cancel, or the deadline. */
function isCancel(reason: unknown): reason is CancelledError | DeadlineExceededError {
  return reason instanceof CancelledError || reason instanceof DeadlineExceededError;
}

type Failed = Extract<NodeOutcome, { kind: 'failure' }>;
interface Schedule {
  readonly completed: CompletedEntry[];
  readonly failures: Failed[];
  readonly results: Map<string, unknown>;
  halt: { readonly step: string; readonly reason: string; readonly data?: unknown } | undefined;
  /** Set when an enclosing frame aborted with an error (e.g. a lost lock): no new step starts. */
  interrupted: Error | undefined;
  /** The suspension the frame ends with (`firstSuspension` of every step's); no new step starts. */
  yielded: Suspended | undefined;
}

/** An inline frame's hand-off point: the rest of the run goes to a worker (the inline driver hands off on any suspension but a pause). */
const HAND_OFF = { kind: 'retry', delayMs: 0 } as const;

function schedule(run: RunState, frame: Frame, controller: AbortController): Promise<Schedule> {
  const state: Schedule = {
    completed: [],
    failures: [],
    results: new Map(),
    halt: undefined,
    interrupted: undefined,
    yielded: undefined,
  };
  const ready = new Readiness(frame.def.nodes);
  const limit = frame.def.maxConcurrency ?? run.maxConcurrency;
  const handoff = run.mode === 'inline' ? frame.handoff : undefined; // a hand-off never re-triggers in the worker
  let running = 0;
  return new Promise((resolve) => {
    const settle = (node: GraphNode, outcome: NodeOutcome): void => {
      running--;
      if (outcome.kind === 'success' || outcome.kind === 'skipped') {
        state.results.set(node.name, outcome.value);
        ready.finished(node.name);
        if (outcome.kind === 'success') state.completed.push(outcome.entry);
        if (handoff && 'after' in handoff && handoff.after === node.name)
          state.yielded ??= { step: node.name, suspension: HAND_OFF };
      } else if (outcome.kind === 'yield') {
        // A pause wins over parks and retries (they run again on resume), a park over a retry; else the soonest retry wins.
        state.yielded = firstSuspension(state.yielded, { step: outcome.step, suspension: outcome.suspension });
      } else if (outcome.kind === 'halt') {
        state.halt ??= {
          step: outcome.step,
          reason: outcome.reason,
          ...(outcome.data === undefined ? {} : { data: outcome.data }),
        };
        controller.abort('halted');
      } else {
        state.failures.push(outcome);
        controller.abort('failed');
      }
      pump();
    };
    // Durable mode: the checkpoint after a step also carries the starts of the plain steps that
    // start as soon as it settles (a linear chain: no write of their own, decision 098).
    const carryStarts = (node: GraphNode, outcome: NodeOutcome): void => {
      if (!run.marksStarts || (outcome.kind !== 'success' && outcome.kind !== 'skipped')) return;
      if (frame.signal.aborted || state.halt || state.failures.length > 0 || state.interrupted || state.yielded) return;
      for (const next of ready.wouldStart(node.name, limit - running + 1)) {
        if (!carried(next)) continue; // one admitted first marks its start once admitted
        const path = frame.prefix + next.name;
        const recorded = run.stepRecord(path);
        if (recorded?.status === 'completed' || recorded?.status === 'skipped') continue;
        run.carryStart(path, nextAttempt(recorded));
      }
    };
    // Durable mode: the last step of a job's root graph — nothing else running, ready or made
    // ready by it — settles on the final record, written right after it (one write, not two).
    const endsJob = (node: GraphNode, outcome: NodeOutcome): boolean =>
      run.marksStarts &&
      frame.owned !== undefined &&
      frame.prefix === '' &&
      outcome.kind === 'success' &&
      running === 1 &&
      !frame.signal.aborted &&
      state.halt === undefined &&
      state.failures.length === 0 &&
      state.interrupted === undefined &&
      state.yielded === undefined &&
      ready.next() === undefined &&
      ready.wouldStart(node.name, Number.MAX_SAFE_INTEGER).length === 0;
    const pump = (): void => {
      const reason: unknown = frame.signal.reason;
      if (frame.signal.aborted && reason instanceof Error && state.failures.length === 0) state.interrupted ??= reason;
      const stopping =
        state.halt !== undefined ||
        state.failures.length > 0 ||
        state.interrupted !== undefined ||
        state.yielded !== undefined;
      // The ready nodes in declaration order: what a scan of every waiting node would start, at the cost of the starts only.
      for (let node = stopping ? undefined : ready.next(); node && running < limit; node = ready.next()) {
        if (handoff && 'before' in handoff && handoff.before === node.name) {
          state.yielded ??= { step: node.name, suspension: HAND_OFF };
          break;
        }
        ready.take();
        running++;
        void runNode(run, frame, node, state.results)
          .then((outcome) =>
            persist(
              run,
              outcome,
              run.marksStarts ? () => carryStarts(node, outcome) : undefined,
              endsJob(node, outcome),
            ),
          )
          .then(
            (outcome) => settle(node, outcome),
            (error: unknown) =>
              settle(node, {
                kind: 'failure',
                step: frame.prefix + node.name,
                error: toError(error),
                validation: [],
                compensate: undefined,
              }),
          );
      }
      if (running === 0) resolve(state);
    };
    pump();
  });
}

/**
 * The nodes of one graph that may start, in declaration order. Each node counts its dependencies
 * that have not finished; a finished node counts down only its own dependents. A settle costs the
 * settled node's dependents and a start the log of the ready nodes, never a scan of the waiting
 * nodes (which made a linear chain of n steps cost O(n²)).
 */
class Readiness {
  readonly #nodes: readonly GraphNode[];
  /** Unfinished dependencies, by declaration index. */
  readonly #missing: number[];
  /** The declaration indexes of the nodes depending on a node, by its name. */
  readonly #dependents = new Map<string, number[]>();
  /** A binary min-heap of the declaration indexes of the nodes whose dependencies all finished. */
  readonly #ready: number[] = [];

  constructor(nodes: readonly GraphNode[]) {
    this.#nodes = nodes;
    this.#missing = nodes.map((node, index) => {
      const deps = new Set(node.dependsOn);
      for (const dep of deps) {
        const list = this.#dependents.get(dep);
        if (list) list.push(index);
        else this.#dependents.set(dep, [index]);
      }
      if (deps.size === 0) this.#ready.push(index); // ascending: already a heap
      return deps.size;
    });
  }

  /** The first ready node in declaration order (it stays ready until {@link take}). */
  next(): GraphNode | undefined {
    const index = this.#ready[0];
    return index === undefined ? undefined : this.#nodes[index];
  }

  /**
   * The nodes that `name` finishing now makes ready and that would start at once with `free`
   * slots open (the ready nodes start in declaration order), in that order.
   */
  wouldStart(name: string, free: number): GraphNode[] {
    const newly = (this.#dependents.get(name) ?? []).filter((index) => this.#missing[index] === 1);
    if (newly.length === 0 || free <= 0) return [];
    const starting = [...this.#ready, ...newly].sort((a, b) => a - b).slice(0, free);
    return starting.filter((index) => newly.includes(index)).map((index) => this.#nodes[index]!);
  }

  /** Removes the node {@link next} returned: it starts. */
  take(): void {
    const heap = this.#ready;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const child = left + 1 < heap.length && heap[left + 1]! < heap[left]! ? left + 1 : left;
      if (heap[child]! >= last) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }

  /** A node finished (completed or skipped): its dependents with nothing else to wait for become ready. */
  finished(name: string): void {
    for (const index of this.#dependents.get(name) ?? []) {
      if (--this.#missing[index]! !== 0) continue;
      const heap = this.#ready;
      let i = heap.length;
      heap.push(index);
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= index) break;
        heap[i] = heap[parent]!;
        i = parent;
      }
      heap[i] = index;
    }
  }
}

/**
 * Checkpoints after a node settles; a checkpoint that cannot be written fails the step (its work
 * is undone), unless the write stopped the worker's job (then the graph stops, decision 064).
 */
async function persist(
  run: RunState,
  outcome: NodeOutcome,
  carry: (() => void) | undefined,
  last: boolean,
): Promise<NodeOutcome> {
  try {
    carry?.();
    await (last ? run.progressToEnd() : run.progress());
    return outcome;
  } catch (error) {
    if (run.stopped) throw run.stopped;
    const step =
      outcome.kind === 'success' ? outcome.entry.step : outcome.kind === 'skipped' ? 'checkpoint' : outcome.step;
    const compensate =
      outcome.kind === 'success' ? outcome.entry.undo : outcome.kind === 'failure' ? outcome.compensate : undefined;
    return { kind: 'failure', step, error: toError(error), validation: [], compensate };
  }
}

function runNode(
  run: RunState,
  frame: Frame,
  node: GraphNode,
  results: ReadonlyMap<string, unknown>,
): Promise<NodeOutcome> {
  const scope: ArgScope = { input: frame.input, results };
  const place = { path: frame.prefix + node.name, reactor: frame.def.name, signal: frame.signal };
  return onNode(node, NODE_RUNNERS, { run, frame, scope, place });
}

/** What a node's runner gets besides the node. */
interface NodeCall {
  readonly run: RunState;
  readonly frame: Frame;
  readonly scope: ArgScope;
  readonly place: { readonly path: string; readonly reactor: string; readonly signal: AbortSignal };
}

/** How each kind of node runs (one map for every call: no closures per node run). */
const NODE_RUNNERS: NodeHandlers<Promise<NodeOutcome>, NodeCall> = {
  step: (n, { run, scope, place }) =>
    runStepNode(run, n, place, () =>
      resolveArgs(n.args, scope, place.path, n.contract ? Object.keys(n.contract.fields) : undefined),
    ),
  'async-step': (n, { run, frame, scope, place }) =>
    tracedNode(run, place, () => runAsyncStep(run, n, place, scope, frame.def)),
  interrupt: (n, { run, scope, place }) =>
    tracedNode(run, place, () => runInterrupt(run, n, place, () => resolveArgs(n.args, scope, place.path, undefined))),
  sleep: (n, { run, scope, place }) => tracedNode(run, place, () => runSleep(run, n, place, scope)),
  'wait-for-event': (n, { run, scope, place }) =>
    tracedNode(run, place, () =>
      runWaitForEvent(run, n, place, () => resolveArgs(n.args, scope, place.path, undefined)),
    ),
  compose: (n, { run, scope, place }) => tracedNode(run, place, () => runCompose(run, n, place, scope, runFrame)),
  'async-reactor': (n, { run, frame, scope, place }) =>
    tracedNode(run, place, () => runAsyncReactor(run, n, place, scope, frame.def)),
  map: (n, { run, scope, place }) => tracedNode(run, place, () => runMap(run, n, place, scope, runFrame)),
};
