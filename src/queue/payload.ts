/**
 * The job payload codec. A job carries `{ v, executionId, reactor }` and nothing else; every
 * consumer decodes what it receives with {@link decodeJob} before touching it, so a payload that
 * is not an object, lacks a field, has a field of the wrong type or was written by another
 * format version fails with {@link MalformedJobError} — which the queue adapters turn into a
 * terminal failure instead of a retry.
 *
 * @module
 */
import { MalformedJobError } from '../errors.js';
import { JOB_FORMAT_VERSION, type ExecutionJob } from '../ports/queue.js';

/** The payload of `job` as a plain object of exactly the known fields (validated first). */
export function encodeJob(job: ExecutionJob): ExecutionJob {
  return decodeJob(job);
}

/**
 * Reads a received payload. Unknown extra fields are ignored (a reader tolerates additions made
 * within one version); everything else that does not match is a {@link MalformedJobError}.
 */
export function decodeJob(payload: unknown): ExecutionJob {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new MalformedJobError(`expected an object, got ${describe(payload)}`, payload);
  }
  const record = payload as Record<string, unknown>;
  const version = record['v'];
  if (version === undefined) throw new MalformedJobError('missing format version `v`', payload);
  if (version !== JOB_FORMAT_VERSION) {
    throw new MalformedJobError(
      `of another version: v=${describeValue(version)}, this worker reads v=${JOB_FORMAT_VERSION}`,
      payload,
    );
  }
  const executionId = requireId(record, 'executionId', payload);
  const reactor = requireId(record, 'reactor', payload);
  return { v: JOB_FORMAT_VERSION, executionId, reactor };
}

function requireId(record: Record<string, unknown>, field: string, payload: unknown): string {
  const value = record[field];
  if (value === undefined) throw new MalformedJobError(`missing field \`${field}\``, payload);
  if (typeof value !== 'string')
    throw new MalformedJobError(`field \`${field}\` must be a string, got ${describe(value)}`, payload);
  if (value.length === 0) throw new MalformedJobError(`field \`${field}\` must not be empty`, payload);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
