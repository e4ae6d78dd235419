/**
 * The Backend port: everything one backend gives a runtime, as one bundle — the store, the
 * coordinator with its fast paths, the job leases, wait lists, fan-out ledger, interrupt
 * claims, event log, event-wait index and execution stream, the queue with its consumers, the schedules, the health readiness checks read, and the
 * close. `createRuntime` (`src/runtime/`) wires an engine and its workers over one; the memory
 * backend (`createMemoryBackend`) and the Redis one (`createRedisBullmqBackend`) build theirs.
 * How a backend is added: docs/backends.md.
 *
 * @module
 */
import type { Coordinator } from './coordinator.js';
import type { EventLog } from './event-log.js';
import type { EventWaits } from './event-waits.js';
import type { ExecutionStream } from './execution-stream.js';
import type { FanOutLedger } from './fanout.js';
import type { BackendHealth } from './health.js';
import type { InterruptClaims } from './interrupt-claims.js';
import type { JobLeases } from './job-lease.js';
import type { JobConsumer, JobQueue } from './queue.js';
import type { WaitList } from './wait-list.js';
import type { QueueInspector } from './queue-inspector.js';
import type { ScheduleBackend } from './schedules.js';
import type { Store } from './store.js';

/**
 * One backend, bundled: what `createRuntime` builds an engine, its workers and its schedules
 * from. Optional members are features or fast paths the engine does without (docs/backends.md,
 * "Required behaviour, and fast paths with fallbacks").
 */
export interface Backend {
  /** The backend's name in messages and errors: `memory`, `redis`. */
  readonly name: string;
  /**
   * True when other processes share this backend's state (Redis): workers elsewhere take its
   * jobs, so a job's start and end must be fenced by the backend itself, and `jobLeases` is
   * required (`createRuntime` refuses a shared backend without them). False for a backend that
   * lives in this process only (memory).
   */
  readonly shared: boolean;
  /** Execution records and idempotency claims. */
  readonly store: Store;
  /** The atomic transitions of the five primitives, and the notification fast paths it implements (`watch`, `onFreed`, cancel announcements). */
  readonly coordinator: Coordinator;
  /** Correlation-id and resume claims; absent: an interrupt step fails with `interrupts_unsupported`. */
  readonly interruptClaims?: InterruptClaims | undefined;
  /** A job's start and end, one call each; absent: composed in this process from store and coordinator calls (refused when `shared`). */
  readonly jobLeases?: JobLeases | undefined;
  /** Wake-on-release of parked executions; absent: they wait for their fallback job. */
  readonly waitList?: WaitList | undefined;
  /** The bookkeeping of fan-out maps; absent: such a map fails with `fan_out_unavailable`. */
  readonly fanOut?: FanOutLedger | undefined;
  /** The log of sent events (`engine.send`, `engine.listEvents`); absent: those fail with `events_unsupported`. */
  readonly events?: EventLog | undefined;
  /** The index of executions waiting for an event (`.waitForEvent`, `.cancelOn`); absent: such a step fails with `events_unsupported`. */
  readonly eventWaits?: EventWaits | undefined;
  /** Each execution's events, readable from any process (`engine.watch`); absent: `engine.watch` fails with `watch_unavailable`. */
  readonly executionStream?: ExecutionStream | undefined;
  /** Where background jobs go. */
  readonly queue: JobQueue;
  /** The queue for operators (the dashboard's queue view). */
  readonly queueInspector: QueueInspector;
  /** A consumer of {@link queue} for one worker; called once per worker the runtime starts. */
  consumer(): JobConsumer;
  /** Where schedules live and what delivers their ticks. */
  readonly schedules: ScheduleBackend;
  /**
   * A start-up check the runtime waits for before work starts, when the backend has one that
   * may refuse: the engine's calls that start or continue executions wait for it and reject with
   * its error, and workers take no job until it resolves (Redis with `requireDurability`).
   */
  readonly ready?: Promise<unknown> | undefined;
  /** The backend's health now, for a readiness check. */
  health(): BackendHealth;
  /** Releases what the backend opened (connections); called once, after the workers stopped and the engine went idle. */
  close(): Promise<void>;
}
