/**
 * Events as log lines: one structured line per event, with the execution's identity and the
 * event's own fields (`step`, `key`, `primitive`, `attempt` …). The engine installs it when it
 * is given a logger (docs/decisions/029); it is also a plain middleware anyone can install.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { Middleware, ReactorEvent, ReactorEventType } from './events.js';

/** A logger method name. */
export type LogLevel = keyof Logger;

/** The level each event is logged at: failures warn, a failed run is an error, the routine is debug. */
export const EVENT_LOG_LEVELS: Readonly<Record<ReactorEventType, LogLevel>> = Object.freeze({
  'run.started': 'debug',
  'run.queued': 'debug',
  'run.resumed': 'debug',
  'run.recovered': 'warn',
  'run.stopped': 'warn',
  'run.completed': 'info',
  'run.halted': 'info',
  'run.replayed': 'info',
  'run.retried': 'info',
  'run.paused_on_failure': 'warn',
  'failure.retried': 'info',
  'failure.skipped': 'warn',
  'failure.rolled_back': 'info',
  'failure.action_refused': 'info',
  'run.forked': 'info',
  'run.version_unavailable': 'warn',
  'run.cancelled': 'info',
  'run.deadline_exceeded': 'warn',
  'run.superseded': 'info',
  'run.parked': 'info',
  'run.woken': 'info',
  'run.rolling_back': 'warn',
  'run.failed': 'error',
  'step.started': 'debug',
  'step.succeeded': 'debug',
  'step.progress': 'debug',
  'step.skipped': 'info',
  'step.halted': 'info',
  'step.retrying': 'warn',
  'step.timed_out': 'warn',
  'step.attempt_lost': 'warn',
  'step.sleeping': 'debug',
  'step.woke': 'debug',
  'step.failed': 'warn',
  'step.compensated': 'info',
  'step.undone': 'info',
  'step.compensate_failed': 'warn',
  'step.undo_failed': 'warn',
  'coordination.acquired': 'debug',
  'coordination.released': 'debug',
  'coordination.extended': 'debug',
  'coordination.waiting': 'debug',
  'coordination.contended': 'info',
  'coordination.denied': 'info',
  'coordination.lost': 'warn',
  'async.dispatched': 'debug',
  'async.child_cancelled': 'info',
  'async.waiting': 'debug',
  'async.refused': 'warn',
  'async.retrying': 'warn',
  'async.parked': 'info',
  'async.completed': 'info',
  'async.failed': 'warn',
  'async.discarded': 'info',
  'run.paused': 'info',
  'interrupt.paused': 'info',
  'interrupt.resumed': 'info',
  'interrupt.rejected': 'warn',
  'interrupt.payload_invalid': 'warn',
  'interrupt.timed_out': 'warn',
  'wait.paused': 'info',
  'wait.resumed': 'info',
  'wait.timed_out': 'warn',
  'map.element_dispatched': 'debug',
  'map.element_retrying': 'warn',
  'map.element_completed': 'debug',
  'map.element_failed': 'warn',
  'map.element_skipped': 'info',
  'map.rollback_dispatched': 'info',
  'map.element_undone': 'info',
  'map.element_undo_failed': 'warn',
  'map.parked': 'info',
  'map.element_parked': 'info',
  'map.collected': 'info',
  'trace.summarized': 'debug',
});

/** Options of {@link eventLogger}. */
export interface EventLoggerOptions {
  /** Levels to use instead of {@link EVENT_LOG_LEVELS} for some events; `false` leaves an event out. */
  readonly levels?: Partial<Record<ReactorEventType, LogLevel | false>>;
}

/**
 * A middleware that writes every event to `logger` as one line: `(fields, message)` with
 * `event` (the type), `executionId`, `reactor` and the event's own fields (`step`, `key`,
 * `primitive`, `attempt`, `delayMs`, `jobId`, `reason` …); an event's error is under `err`.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * const engine = createEngine({ store, logger: pino() }); // installs it
 * const quieter = createEngine({ store, logger: pino(), logEvents: false, middleware: [eventLogger(pino(), { levels: { 'step.started': false } })] });
 * ```
 */
export function eventLogger(logger: Logger, options: EventLoggerOptions = {}): Middleware {
  const levels = { ...EVENT_LOG_LEVELS, ...options.levels };
  return {
    name: 'event-logger',
    onEvent: (event) => {
      const level = levels[event.type];
      if (level !== false) logger[level](logFields(event), logMessage(event));
    },
  };
}

/** The structured fields of an event's line. */
export function logFields(event: ReactorEvent): Record<string, unknown> {
  const { type, at: _at, rootExecutionId, ...rest } = event;
  const fields: Record<string, unknown> = { event: type, ...rest };
  if (rootExecutionId !== event.executionId) fields['rootExecutionId'] = rootExecutionId;
  if ('error' in fields) {
    fields['err'] = fields['error'];
    delete fields['error'];
  }
  return fields;
}

/** A short human-readable message of an event. */
export function logMessage(event: ReactorEvent): string {
  const step = 'step' in event && event.step !== undefined ? ` at step "${event.step}"` : '';
  if (event.type === 'step.retrying')
    return `step "${event.step}" failed (${event.error.message}); attempt ${event.attempt} in ${event.delayMs} ms`;
  if (event.type === 'step.failed')
    return `step "${event.step}" failed${event.attempt > 0 ? ` on attempt ${event.attempt}` : ' before its body'}: ${event.error.message}`;
  if (event.type === 'step.attempt_lost')
    return `attempt ${event.attempt} of step "${event.step}" ${event.outcome === 'worker_lost' ? 'started and its worker was lost' : 'may have run: its worker was lost'}${event.worker === undefined ? '' : ` (${event.worker})`}; counted`;
  if (event.type === 'step.compensate_failed') return `compensate of "${event.step}" failed: ${event.message}`;
  if (event.type === 'step.undo_failed') return `undo of "${event.step}" failed: ${event.message}`;
  if (event.type === 'run.failed') return `reactor "${event.reactor}" failed${step}: ${event.error.message}`;
  if (event.type === 'run.parked')
    return `parked on ${event.primitive} "${event.key}" (contention attempt ${event.attempt}${event.repeats ? `, again behind the same holder` : ''})`;
  if (event.type === 'run.woken') return `woken by the release of ${event.primitive} "${event.key}"`;
  if (event.type === 'run.version_unavailable')
    return `left for a worker with version ${event.version ?? event.fingerprint} (fingerprint ${event.fingerprint}): this worker does not have it; due again in ${event.delayMs} ms`;
  if (event.type === 'run.recovered')
    return event.action === 'aborted'
      ? `recovery sweep: aborted ${event.status} inline run whose process stopped`
      : `recovery sweep: re-enqueued ${event.status} execution (${event.reason === 'inline_lost' ? 'its inline process stopped' : 'no job carried it'}) as ${event.jobId ?? '?'}`;
  if ('primitive' in event && event.type.startsWith('coordination.'))
    return `${event.type.slice('coordination.'.length)} ${event.primitive} "${event.key}"${step}`;
  return `${event.type.replace('.', ' ')}${step}`;
}
