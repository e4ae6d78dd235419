/**
 * Engine job ids ↔ BullMQ job ids. BullMQ refuses custom ids that look like integers or contain
 * `:` (its own repeat-job ids use colons), while the engine names jobs `<executionId>:<n>`. The
 * mapping is reversible and leaves ids without `%`, `:` or an integer shape unchanged, so ids
 * stay readable in BullMQ's tooling:
 *
 * - `%` → `%25`, `:` → `%3A`;
 * - an id that would still read as an integer gets the prefix `%N` (which escaping can never
 *   produce, since every escaped `%` is followed by `25` or `3A`).
 *
 * @module
 */

/** The BullMQ id of engine job `jobId`. */
export function toBullmqJobId(jobId: string): string {
  if (jobId.length === 0) throw new RangeError('job id must not be empty');
  const escaped = jobId.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
  return `${parseInt(escaped, 10)}` === escaped ? `%N${escaped}` : escaped;
}

/** The engine job id of BullMQ id `id` (inverse of {@link toBullmqJobId}). */
export function fromBullmqJobId(id: string): string {
  const body = id.startsWith('%N') ? id.slice(2) : id;
  if (!body.includes('%')) return body; // nothing escaped (every delivery decodes its id)
  return body.replace(/%(25|3A)/g, (_, code: string) => (code === '25' ? '%' : ':'));
}
