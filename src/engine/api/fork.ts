/**
 * `engine.fork`: a new execution linked to a finished one (or one paused on a failure) that
 * reuses the recorded results of the steps before `fromStep` and runs from there
 * (docs/decisions/100). "Before" is precise: every top-level step that is neither `fromStep` nor
 * downstream of it (depends on it, directly or through other steps) and that completed or was
 * skipped in the source; its nested records (a compose's steps, a map's elements) come along.
 * Everything else runs in the fork.
 *
 * @module
 */
import type { EventCancels } from './event-cancels.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import { ExecutionNotFoundError, ReactorError } from '../../errors.js';
import { continueInline, prepareWorker, type Announce } from '../execution/interrupt/continue.js';
import type { RunResult } from '../model/results.js';
import { versionFor } from '../model/versions.js';
import type { Ids } from '../../ports/clock.js';
import {
  RECORD_VERSION,
  TERMINAL_STATUSES,
  type ExecutionRecord,
  type MapElementStates,
  type StepRecord,
} from '../../ports/store.js';
import { linkRetry, type RetryLinkDeps } from './retry-link.js';
import { refused, type SteerDeps } from './steer.js';

/** Options of `engine.fork`. */
export interface ForkOptions {
  /** The top-level step the fork runs from; it and every step downstream of it run again. */
  readonly fromStep: string;
  /**
   * A replaced input (validated against the reactor's contract). The reused results are kept as
   * recorded: they ran with the source's input (docs/decisions/100).
   */
  readonly input?: unknown;
}

/** How long a fork of one source from one step refuses an identical second one (a double click). */
export const FORK_CLAIM_TTL_MS = 5_000;

/** What a fork needs: the actions' deps, ids for the new execution, and the retry link's deps. */
export type ForkDeps = SteerDeps &
  RetryLinkDeps & {
    readonly ids: Ids;
    /** Files the fork's `cancelOn` registrations before its first record, as a start does (decision 152). */
    readonly eventCancels?: EventCancels | undefined;
  };

/** Starts the fork of `sourceId` and returns its result (its outcome inline, or `queued` in a worker). */
export async function forkExecution(deps: ForkDeps, sourceId: string, options: ForkOptions): Promise<RunResult> {
  const stored = await deps.store.get(sourceId);
  if (!stored) throw new ExecutionNotFoundError(sourceId);
  const registered = deps.registry.get(stored.reactor);
  if (!registered)
    throw new ReactorError(
      'reactor_unknown',
      `cannot fork execution ${sourceId}: reactor "${stored.reactor}" is not registered with this engine (engine.register)`,
      { details: { reactor: stored.reactor } },
    );
  // The definition the source ran with: the reused results belong to its graph.
  const { reactor, record: source } = versionFor(stored, registered, deps.versions, 'fork');
  const fromStep = options.fromStep;
  if (!TERMINAL_STATUSES.has(source.status) && !(source.status === 'paused' && source.pausedOn))
    throw refused(
      deps,
      source,
      'fork',
      'not_paused_on_failure',
      `it is ${source.status}; fork a finished execution or one paused on a failure`,
      fromStep,
    );
  if (typeof fromStep !== 'string' || !reactor.byName.has(fromStep))
    throw refused(
      deps,
      source,
      'fork',
      'unknown_step',
      `reactor "${reactor.name}" has no step "${String(fromStep)}"`,
      fromStep,
    );
  const replaced = 'input' in options && options.input !== undefined;
  let input = source.input as Record<string, unknown>;
  if (replaced) {
    const valid = await validateContract(reactor.contract, options.input);
    if (!valid.ok)
      throw refused(
        deps,
        source,
        'fork',
        'invalid_input',
        'the input does not satisfy the reactor contract',
        fromStep,
        valid.issues,
      );
    input = valid.value;
  }
  const claims = deps.claims;
  if (!claims)
    throw refused(
      deps,
      source,
      'fork',
      'unsupported',
      'the engine store does not implement claims (MemoryStore and RedisStore do)',
      fromStep,
    );
  const claim = await claims.claimResume(
    source.id,
    `fork:${fromStep}:${replaced ? JSON.stringify(input) : ''}`,
    crypto.randomUUID(),
    FORK_CLAIM_TTL_MS,
  );
  if (!claim.claimed)
    throw refused(
      deps,
      source,
      'fork',
      'already_claimed',
      `an identical fork was started in the last ${FORK_CLAIM_TTL_MS / 1000} s`,
      fromStep,
    );
  const reused = reusable(reactor, source, fromStep);
  const id = deps.ids.executionId();
  const now = deps.clock.now();
  const seeded: ExecutionRecord = {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: reactor.name,
    ...(source.fingerprint === undefined ? {} : { fingerprint: source.fingerprint }),
    ...(source.version === undefined ? {} : { version: source.version }),
    status: 'running',
    input,
    steps: stepsOf(source, reused),
    ...mapStatesOf(source, reused),
    retryOf: source.id,
    rollbackFailures: [],
    trace: [],
    createdAt: now,
    updatedAt: now,
  };
  await deps.eventCancels?.register(reactor, id, input);
  const announce: Announce = (state) =>
    state.emit({ type: 'run.forked', sourceId: source.id, fromStep, reused, inputReplaced: replaced });
  const background = deps.queue !== undefined && (source.background !== undefined || reactor.background === 'all');
  let result: RunResult;
  if (background) {
    const worker = await prepareWorker(deps, reactor, seeded, fromStep, 'resume', announce);
    await linkRetry(deps, source.id, id);
    await worker.enqueue();
    result = worker.result;
  } else {
    await deps.store.save(seeded);
    await linkRetry(deps, source.id, id);
    result = await continueInline(deps, reactor, seeded, fromStep, announce);
  }
  return result;
}

/**
 * The top-level steps a fork from `fromStep` reuses: not it, not downstream of it, completed or
 * skipped in `source`, and not undone there since (a rollback keeps a step's record `completed`;
 * its trace says `step.undone`).
 */
export function reusable(reactor: AnyReactorDefinition, source: ExecutionRecord, fromStep: string): string[] {
  const rerun = new Set([fromStep]);
  // Declaration order is a topological order: a node's dependencies come before it.
  for (const node of reactor.nodes) if (node.dependsOn.some((d) => rerun.has(d))) rerun.add(node.name);
  const undone = new Set(
    (source.trace ?? []).filter((e) => e.type === 'step.undone' || e.type === 'step.compensated').map((e) => e.step),
  );
  return reactor.nodes
    .map((n) => n.name)
    .filter(
      (name) =>
        !rerun.has(name) && !undone.has(name) && ['completed', 'skipped'].includes(source.steps[name]?.status ?? ''),
    );
}

/** The step records of the reused steps and everything nested under them. */
function stepsOf(source: ExecutionRecord, reused: readonly string[]): Record<string, StepRecord> {
  const steps: Record<string, StepRecord> = {};
  for (const [path, record] of Object.entries(source.steps))
    if (reused.some((name) => under(path, name))) steps[path] = record;
  return steps;
}

/** The large maps' element states of the reused steps. */
function mapStatesOf(
  source: ExecutionRecord,
  reused: readonly string[],
): { mapStates?: Record<string, MapElementStates> } {
  const entries = Object.entries(source.mapStates ?? {}).filter(([path]) => reused.some((name) => under(path, name)));
  return entries.length === 0 ? {} : { mapStates: Object.fromEntries(entries) };
}

function under(path: string, name: string): boolean {
  return path === name || path.startsWith(`${name}.`) || path.startsWith(`${name}[`);
}
