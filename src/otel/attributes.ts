/**
 * The names of the span attributes and span events `ts-reactor/otel` writes (the reference
 * table is in docs/observability.md).
 *
 * @module
 */

/** Span attribute names. */
export const ATTR = Object.freeze({
  /** The execution's id (every span). */
  executionId: 'ts_reactor.execution.id',
  /** The outermost execution's id (run spans). */
  rootExecutionId: 'ts_reactor.execution.root_id',
  /** The reactor's name (every span; a composed child's name on its steps). */
  reactor: 'ts_reactor.reactor',
  /** The step path: `charge`, `payment.charge`, `items[3]` (step, compensate, undo spans). */
  step: 'ts_reactor.step',
  /** The step's last attempt in this span. */
  attempt: 'ts_reactor.step.attempt',
  /** How the step span ended: `succeeded`, `failed`, `skipped`, `halted`, `parked`, `retrying`, `paused`. */
  stepOutcome: 'ts_reactor.step.outcome',
  /** `inline`, `worker` or `operation` (an operator's cancel or undo). */
  runMode: 'ts_reactor.run.mode',
  /** How this run of the execution ended: `completed`, `failed`, `halted`, `cancelled`, `parked`, `retrying`, `paused`, `queued`. */
  runOutcome: 'ts_reactor.run.outcome',
  /** The job (run spans of a worker, enqueue spans). */
  jobId: 'ts_reactor.job.id',
  /** 1 on a job's first delivery; more on redelivery. */
  delivery: 'ts_reactor.job.delivery',
  /** Why a job was enqueued: `start`, `retry`, `park`. */
  enqueueReason: 'ts_reactor.enqueue.reason',
  /** The job's delay, ms. */
  delayMs: 'ts_reactor.enqueue.delay_ms',
  /** A coordination key (coordination and park/wake events). */
  key: 'ts_reactor.coordination.key',
  /** A coordination primitive: `lock`, `semaphore`, `rate_limit`, `period`, `ordered_lock`. */
  primitive: 'ts_reactor.coordination.primitive',
  /** The reactor's input with redacted fields hidden, as JSON (run spans, with `recordInput`). */
  input: 'ts_reactor.input',
  /** On a span link: how the linked trace relates (`retry_of`: this execution retries that one). */
  linkKind: 'ts_reactor.link.kind',
  /** Set when the persisted trace context could not be read (the run starts a new trace). */
  traceContextInvalid: 'ts_reactor.trace_context.invalid',
});
