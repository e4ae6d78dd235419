/**
 * Errors of a backend as a whole: its coordination, store or queue did not answer within the
 * outage tolerance, or it does not keep what it acknowledged. The wording about one backend's
 * settings is its adapter's (the Redis durability check builds the message of its
 * `DurabilityError`).
 *
 * @module
 */

import { messageOf, ReactorError, registerRevival } from './base.js';

/**
 * A coordination backend could not be reached or did not answer (connection closed, server
 * loading or busy) for longer than the outage tolerance. The transition may or may not have
 * happened; every transition is retry-safe. `details.operation` names the call (`lock-acquire` …);
 * `details.waitedMs`, when present, is how long the call kept trying.
 */
export class CoordinationUnavailableError extends ReactorError<'coordination_unavailable'> {
  constructor(operation: string, cause: unknown, waitedMs?: number) {
    super(
      'coordination_unavailable',
      `coordination backend unavailable during ${operationWords(operation)}${waitedWords(waitedMs)}: ${messageOf(cause)}`,
      {
        cause,
        details: { operation, ...(waitedMs === undefined ? {} : { waitedMs }) },
      },
    );
    this.name = 'CoordinationUnavailableError';
  }
}
registerRevival('CoordinationUnavailableError', CoordinationUnavailableError, ['coordination_unavailable']);

/**
 * The execution store could not be reached or did not answer for longer than the outage
 * tolerance (connection closed, server loading or busy). The write may or may not have
 * happened; every store write is retry-safe. `details.operation` names the call (`store-save` …).
 */
export class StoreUnavailableError extends ReactorError<'store_unavailable'> {
  constructor(operation: string, cause: unknown, waitedMs?: number) {
    super(
      'store_unavailable',
      `execution store unavailable during ${operationWords(operation)}${waitedWords(waitedMs)}: ${messageOf(cause)}`,
      {
        cause,
        details: { operation, ...(waitedMs === undefined ? {} : { waitedMs }) },
      },
    );
    this.name = 'StoreUnavailableError';
  }
}
registerRevival('StoreUnavailableError', StoreUnavailableError, ['store_unavailable']);

/**
 * The job queue (BullMQ) could not be reached for longer than the outage tolerance while a job
 * was enqueued or promoted. The job may or may not have been added; adding it again is harmless
 * (job ids are deduplicated). `details.operation` names the call (`job-enqueue`, `job-promote`).
 */
export class QueueUnavailableError extends ReactorError<'queue_unavailable'> {
  constructor(operation: string, cause: unknown, waitedMs?: number) {
    super(
      'queue_unavailable',
      `job queue unavailable during ${operationWords(operation)}${waitedWords(waitedMs)}: ${messageOf(cause)}`,
      {
        cause,
        details: { operation, ...(waitedMs === undefined ? {} : { waitedMs }) },
      },
    );
    this.name = 'QueueUnavailableError';
  }
}
registerRevival('QueueUnavailableError', QueueUnavailableError, ['queue_unavailable']);

/**
 * `requireDurability` is set and the backend does not keep what it acknowledged across a restart
 * or a crash, can lose data it holds, or its settings could not be read. Nothing was started.
 * `details.warnings` says what was found and which setting to change; `details.persistence`,
 * `details.evicts` and `details.checked` are the check's verdict. The backend's own check builds
 * `verdict`, the sentence the message ends with (the Redis backend's names the `appendonly`,
 * `appendfsync` and `maxmemory-policy` settings; see `durabilityAtStartUp` of `ts-reactor/redis`).
 *
 * @example
 * ```ts
 * throw new DurabilityError(report, `Redis is not durable: ${report.warnings.join('; ')}`);
 * ```
 */
export class DurabilityError extends ReactorError<'durability_required'> {
  /** `verdict`: the backend's sentence about what it does not keep; by default the warnings, after "the backend is not durable". */
  constructor(
    info: {
      persistence: string;
      evicts: boolean | undefined;
      checked: boolean;
      warnings: readonly string[];
    },
    verdict = `the backend is not durable: ${info.warnings.join('; ') || `persistence ${info.persistence}`}`,
  ) {
    super('durability_required', `requireDurability: ${verdict}`, {
      details: {
        persistence: info.persistence,
        evicts: info.evicts,
        checked: info.checked,
        warnings: info.warnings,
      },
    });
    this.name = 'DurabilityError';
  }
}
registerRevival('DurabilityError', DurabilityError, ['durability_required']);

/**
 * A backend URL's scheme is not one this build serves (code `backend_unavailable`): a backend
 * that is known but not available in this build (`details.backend`), or no backend at all.
 * `details.scheme` is the URL's scheme, `details.available` the schemes that are served. Thrown
 * before anything is opened.
 */
export class BackendUnavailableError extends ReactorError<'backend_unavailable'> {
  /** `url`: the URL as it may be printed (its password redacted); only in the message. */
  constructor(info: { scheme: string; backend?: string | undefined; available: readonly string[] }, url: string) {
    const served = info.available.map((scheme) => `${scheme}//host[:port]`).join(' or ');
    super(
      'backend_unavailable',
      info.backend === undefined
        ? `"${url}" is not a URL of a backend (scheme ${info.scheme}); expected ${served}`
        : `"${url}": the ${info.backend} backend is not available yet (scheme ${info.scheme}); expected ${served}`,
      { details: { ...info } },
    );
    this.name = 'BackendUnavailableError';
  }
}
registerRevival('BackendUnavailableError', BackendUnavailableError, ['backend_unavailable']);

/** An operation id (`store-save`, `lock-acquire`) in words (`store save`, `lock acquire`). */
function operationWords(operation: string): string {
  return operation.startsWith('record-save') ? 'store save' : operation.replaceAll('-', ' ');
}

function waitedWords(waitedMs: number | undefined): string {
  return waitedMs === undefined ? '' : ` (Redis did not answer for ${(waitedMs / 1000).toFixed(1)} s)`;
}
