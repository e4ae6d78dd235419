/**
 * The engine's parts as `createEngine` wires them: one object the public methods in `api/` are
 * built from (each takes the part of it it uses).
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import { ReactorError } from '../../errors.js';
import type { CancelTargets } from '../execution/cancels.js';
import type { InlineLeaseDeps } from '../execution/inline-lease.js';
import type { OperationsDeps } from '../execution/operations.js';
import type { StateFactory } from '../execution/state-factory.js';
import type { BackgroundDeps } from '../jobs/deps.js';
import type { DetachedWork } from '../jobs/detached-work.js';
import type { Sweeper } from '../jobs/sweep.js';
import type { EventHub } from '../model/events.js';
import type { Instrument } from '../model/instrument.js';
import type { StreamPublisher } from '../model/stream-publisher.js';
import type { RunResult } from '../model/results.js';
import type { Clock, Ids } from '../../ports/clock.js';
import type { ExecutionStream } from '../../ports/execution-stream.js';
import type { Store } from '../../ports/store.js';
import type { EventCancels } from './event-cancels.js';
import type { IdempotencyClaims } from './idempotency.js';
import type { ReactorRegistry } from './registry.js';

/** The inline runs of one engine, by execution id: their root controllers and outcomes. */
export type InlineRunMap = Map<string, { readonly abort: AbortController; readonly done: Promise<RunResult> }>;

/** The engine's basics: the options' defaults applied, its event stream, and its in-memory tables. */
export interface EngineCore {
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly logger: Logger;
  readonly hub: EventHub;
  readonly instrument: Instrument;
  readonly registry: ReactorRegistry;
  readonly inflight: InlineRunMap;
  /** Work started without awaiting it, awaited by `engine.idle()`. */
  readonly detached: DetachedWork;
  /** The bound of every trace this engine keeps or appends to (`maxTraceEntries`, validated; decision 073). */
  readonly maxTraceEntries: number;
  /** Each execution's events, for watchers (`executionStream`); absent: `engine.watch` fails. */
  readonly stream: ExecutionStream | undefined;
  /** Appends this engine's events to {@link stream} (decision 138). */
  readonly publisher: StreamPublisher | undefined;
}

/** Everything the engine's public methods are built from. */
export interface EngineParts extends EngineCore {
  readonly claims: IdempotencyClaims;
  readonly states: StateFactory;
  /** Undefined without a queue: background execution then fails with `queue_missing`. */
  readonly background: BackgroundDeps | undefined;
  readonly cancels: CancelTargets;
  /** Set when inline runs hold a liveness lease (a store and a coordinator other processes share). */
  readonly inlineLeases: InlineLeaseDeps | undefined;
  readonly operations: OperationsDeps;
  /** Set when this engine can sweep (a queue, a coordinator and job leases). */
  readonly sweeper: Sweeper | undefined;
  /** The `cancelOn` registrations of accepted executions. */
  readonly eventCancels: EventCancels;
}

/** The background deps, or a `queue_missing` error when the engine has no queue. */
export function needQueue(parts: Pick<EngineParts, 'background'>): BackgroundDeps {
  if (parts.background) return parts.background;
  throw new ReactorError(
    'queue_missing',
    'background execution needs a queue: createEngine({ queue }) or createEmbeddedEngine()',
  );
}
