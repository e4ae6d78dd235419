/**
 * How this process names itself to operators: the queue's worker list and the attempts it runs
 * in execution records (`StepRecord.runs`, docs/decisions/098).
 *
 * @module
 */
import { hostname } from 'node:os';

/** This process as `<host>-<pid>` (the host name's characters outside `A-Za-z0-9._-` become `_`). */
export function hostWorkerName(): string {
  return `${hostname().replace(/[^A-Za-z0-9._-]/g, '_')}-${process.pid}`;
}
