/**
 * The version gate of a worker's job (docs/decisions/082): before a job runs anything of an
 * execution, the definition its record names is looked up. Found (or a definition migrating from
 * it): the job continues on it. Not found: the job runs nothing — no step, no attempt, no status
 * change — records the wait on the execution (`background.waitingForVersion`, once), reports
 * `run.version_unavailable` and comes back after `parkFallbackMs`, until a worker that has the
 * definition takes it.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { priorityOf } from '../model/background.js';
import { matchVersion } from '../model/versions.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { ExecutionJob } from '../../ports/queue.js';
import type { ExecutionRecord } from '../../ports/store.js';
import type { JobLease } from './advance.js';
import type { BackgroundDeps } from './deps.js';

/** What the gate lets through: the definition and the record to continue with; `undefined`: left for another worker. */
export type Gated = { readonly reactor: AnyReactorDefinition; readonly record: ExecutionRecord } | undefined;

/**
 * Gates a job of `record` (held under its lease): the definition to continue with, or — when this
 * engine has none of the record's fingerprint — `undefined` once the job is deferred.
 */
export async function versionGate(
  deps: BackgroundDeps,
  current: AnyReactorDefinition,
  payload: ExecutionJob,
  record: ExecutionRecord,
  lease: JobLease,
): Promise<Gated> {
  const match = matchVersion(record, current, deps.versions);
  if (match.kind !== 'unavailable') return { reactor: match.reactor, record: match.record };
  const now = deps.clock.now();
  const delayMs = deps.options.parkFallbackMs;
  const jobId = `${record.id}:version:${now}`;
  const event: ReactorEvent = {
    type: 'run.version_unavailable',
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: record.reactor,
    at: now,
    fingerprint: match.fingerprint,
    ...(match.version === undefined ? {} : { version: match.version }),
    jobId,
    delayMs,
    workerId: deps.workerId,
  };
  await deps.queue.enqueue(payload, { jobId, delayMs, ...priorityOf(record.background) });
  const waiting = record.background?.waitingForVersion;
  if (waiting?.fingerprint !== match.fingerprint || waiting.workerId !== deps.workerId) {
    // Written when the wait begins or moves to another worker, not at every return of the job.
    const waitingForVersion = {
      fingerprint: match.fingerprint,
      ...(match.version === undefined ? {} : { version: match.version }),
      since: waiting?.fingerprint === match.fingerprint ? waiting.since : now,
      workerId: deps.workerId,
    };
    const background = { jobs: 0, contention: 0, ...record.background, waitingForVersion };
    await lease.saveAndRelease({ ...record, background, updatedAt: now });
  }
  deps.hub?.emit(event);
  return undefined;
}
