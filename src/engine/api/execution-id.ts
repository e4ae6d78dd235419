/**
 * The check of an execution id passed to the engine's methods: a non-empty string, or the call
 * rejects with a `TypeError` before anything is read or written.
 *
 * @module
 */

/** `call(id)`, or a rejection with a `TypeError` when `id` is not a non-empty string. */
export function withExecutionId<R>(method: string, id: unknown, call: (id: string) => Promise<R>): Promise<R> {
  if (typeof id === 'string' && id.length > 0) return call(id);
  const got = typeof id === 'string' ? 'an empty string' : id === null ? 'null' : typeof id;
  return Promise.reject(new TypeError(`engine.${method}: executionId must be a non-empty string; got ${got}`));
}
