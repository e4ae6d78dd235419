/**
 * Errors of background work: workers, jobs and async units — a lease lost, an inline run
 * abandoned, a worker shut down, a malformed job, a hand-off refused, a reader of an async unit
 * that gave up.
 *
 * @module
 */

import { ReactorError, registerRevival } from './base.js';

/**
 * A worker no longer holds the liveness lease of the execution it was working on (it expired
 * while the process was frozen or cut off, or another worker took the execution over). It
 * stops that execution and writes nothing more to its record; the lease's holder goes on.
 * Also the reason `ctx.signal` is aborted with in that case.
 */
export class LeaseLostError extends ReactorError<'lease_lost'> {
  constructor(executionId: string, how: 'expired' | 'taken_over') {
    const why =
      how === 'expired' ? 'its lease ran out on this worker before it could be renewed' : 'another worker holds it now';
    super(
      'lease_lost',
      `execution ${executionId}: this worker lost its liveness lease (${why}); it stopped without writing the record`,
      { details: { executionId, how } },
    );
    this.name = 'LeaseLostError';
  }
}
registerRevival('LeaseLostError', LeaseLostError, ['lease_lost']);

/**
 * The process that ran the execution inline (`engine.run`) stopped holding its liveness lease
 * (it died, or was cut off for longer than the lease), and the worker whose recovery sweep found
 * it could not continue it — its reactor is not registered there, or the run was rolling back —
 * so the sweep ended it `aborted`. Nothing was undone by the sweep. `details.step` is a step that
 * was running when the process stopped, if any; `details.rollingBack` is true for a rollback.
 */
export class InlineRunAbandonedError extends ReactorError<'inline_run_abandoned'> {
  constructor(info: {
    readonly executionId: string;
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly rollingBack?: boolean;
  }) {
    const at = info.step === undefined ? '' : ` (step "${info.step}" was running)`;
    const why =
      info.rollingBack === true
        ? 'its rollback cannot be resumed elsewhere'
        : `reactor "${info.reactor}" is not registered with the worker that found it`;
    super(
      'inline_run_abandoned',
      `execution ${info.executionId} ran inline in a process that stopped${at}; ${why}, so it was aborted`,
      {
        details: {
          executionId: info.executionId,
          reactor: info.reactor,
          ...(info.step === undefined ? {} : { step: info.step }),
          rollingBack: info.rollingBack === true,
        },
      },
    );
    this.name = 'InlineRunAbandonedError';
  }
}
registerRevival('InlineRunAbandonedError', InlineRunAbandonedError, ['inline_run_abandoned']);

/** A worker shut down before the step finished: `ctx.signal` is aborted with it and the job is handed back to the queue. */
export class WorkerShutdownError extends ReactorError<'worker_shutdown'> {
  constructor(timeoutMs: number) {
    super(
      'worker_shutdown',
      `the worker shut down (its ${timeoutMs} ms shutdown deadline passed); the execution continues on another worker`,
      { details: { timeoutMs } },
    );
    this.name = 'WorkerShutdownError';
  }
}
registerRevival('WorkerShutdownError', WorkerShutdownError, ['worker_shutdown']);

/** A job payload that is malformed or of another format version: failed at once, never retried. */
export class MalformedJobError extends ReactorError<'job_malformed'> {
  constructor(problem: string, payload: unknown) {
    super('job_malformed', `job payload rejected: ${problem}`, { details: { problem, payload: safePayload(payload) } });
    this.name = 'MalformedJobError';
  }
}
registerRevival('MalformedJobError', MalformedJobError, ['job_malformed']);

/**
 * Dispatching an `asyncStep` or `asyncReactor` was refused before anything was queued: it
 * declares a lock (or a limit-1 semaphore) on a key its own dispatching execution holds, so the
 * unit would wait for a key its dispatcher keeps. Never retried; the dispatching step is not
 * compensated (it never started).
 */
export class HandOffRefusedError extends ReactorError<'handoff_refused'> {
  constructor(info: {
    reactor: string;
    step: string;
    kind: 'step' | 'reactor';
    primitive: 'lock' | 'semaphore';
    key: string;
    executionId: string;
    holder: string;
    declaredBy?: string;
  }) {
    const what = info.kind === 'step' ? 'asyncStep' : 'asyncReactor';
    const on = info.declaredBy === undefined ? '' : ` (on its ${info.declaredBy})`;
    super(
      'handoff_refused',
      `reactor "${info.reactor}", step "${info.step}": refused to dispatch the ${what}: it declares ${info.primitive} "${info.key}"${on}, which the dispatching execution ${info.executionId} holds (${info.holder}); ` +
        `the unit would wait for a key its dispatcher keeps. Run it inline (.step), compose it (.compose), or narrow its key so it differs from the held one`,
      { details: { ...info } },
    );
    this.name = 'HandOffRefusedError';
  }
}
registerRevival('HandOffRefusedError', HandOffRefusedError, ['handoff_refused']);

/**
 * A reader of an async unit's result gave up: an in-process caller after `asyncWaitMs`, a worker
 * after `asyncParkTimeoutMs` since the dispatch. The unit itself goes on (or is discarded if the
 * reader's execution rolls back).
 */
export class AsyncWaitTimeoutError extends ReactorError<'async_wait_timeout'> {
  constructor(info: { reactor: string; step: string; unitId: string; waitedMs: number; mode: 'wait' | 'park' }) {
    const how = info.mode === 'wait' ? 'waited' : 'stayed parked';
    super(
      'async_wait_timeout',
      `reactor "${info.reactor}", step "${info.step}": ${how} ${info.waitedMs} ms for async unit ${info.unitId} to finish; raise background.${info.mode === 'wait' ? 'asyncWaitMs' : 'asyncParkTimeoutMs'} or read the result later`,
      {
        details: { ...info },
      },
    );
    this.name = 'AsyncWaitTimeoutError';
  }
}
registerRevival('AsyncWaitTimeoutError', AsyncWaitTimeoutError, ['async_wait_timeout']);

function safePayload(payload: unknown): unknown {
  try {
    const json = JSON.stringify(payload);
    return json !== undefined && json.length <= 2_000 ? (JSON.parse(json) as unknown) : String(json).slice(0, 2_000);
  } catch {
    return String(payload);
  }
}
