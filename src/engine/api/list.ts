/**
 * `engine.list`: executions over every retained record, filtered by reactor, status, tags and
 * creation time, newest first, in keyset pages (the `Store.list` port; docs/decisions/103). The
 * query is checked here, before the store is read.
 *
 * @module
 */
import { ListFilterError } from '../../errors.js';
import { readTags } from '../model/tags.js';
import {
  parseStatus,
  STATUS_NAMES,
  statusName,
  type ExecutionFilter,
  type ExecutionRecord,
} from '../../ports/store.js';
import type { EngineParts } from './parts.js';
import type { ListPage, ListedExecution, ListQuery } from './types.js';

/** The largest page `engine.list` returns. */
export const MAX_LIST_LIMIT = 1_000;
/** The page `engine.list` returns without a `limit`. */
export const DEFAULT_LIST_LIMIT = 50;

/** One page of executions matching `query` (see `Engine.list`). */
export async function listExecutions(deps: Pick<EngineParts, 'store'>, query: ListQuery = {}): Promise<ListPage> {
  const filter = storeFilter(query);
  const page = await deps.store.list(filter);
  return {
    executions: page.records.map(summaryOf),
    ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
  };
}

/** The store filter of a query, every field checked; throws {@link ListFilterError}. */
export function storeFilter(query: ListQuery): ExecutionFilter {
  const fail = (field: string, value: unknown, problem: string): never => {
    throw new ListFilterError(
      { field, value: typeof value === 'string' ? JSON.stringify(value) : String(value) },
      problem,
    );
  };
  if (typeof query !== 'object' || query === null) return fail('query', query, 'must be an object');
  const { reactor, status, cursor } = query;
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    fail('limit', limit, `must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  if (reactor !== undefined && (typeof reactor !== 'string' || reactor.length === 0))
    fail('reactor', reactor, 'must be a non-empty string');
  // `queued` is the name users see; `pending`, its stored name, is accepted too (decision 107).
  const stored = typeof status === 'string' ? parseStatus(status) : undefined;
  if (status !== undefined && stored === undefined) fail('status', status, `must be one of ${STATUS_NAMES.join(', ')}`);
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length === 0))
    fail('cursor', cursor, 'must be the cursor of a previous page');
  const from = timeOf('from', query.from, fail);
  const to = timeOf('to', query.to, fail);
  if (from !== undefined && to !== undefined && to <= from) fail('to', query.to, 'must be after from');
  const read = readTags(query.tags);
  if (!read.ok)
    throw new ListFilterError(
      { field: read.tag === 'tags' ? 'tags' : `tags.${read.tag}`, value: read.value },
      read.problem,
    );
  const { tags } = read;
  return {
    limit,
    ...(reactor === undefined ? {} : { reactor }),
    ...(stored === undefined ? {} : { status: stored }),
    ...(tags === undefined ? {} : { tags }),
    ...(from === undefined ? {} : { createdFrom: from }),
    ...(to === undefined ? {} : { createdTo: to }),
    ...(cursor === undefined ? {} : { cursor }),
  };
}

/** A `from` / `to` bound as epoch ms: a valid `Date` or a finite number >= 0. */
function timeOf(
  field: string,
  value: unknown,
  fail: (field: string, value: unknown, problem: string) => never,
): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    return fail(field, value instanceof Date ? 'Invalid Date' : value, 'must be a valid Date or epoch time in ms');
  return ms;
}

/** The summary of a record. */
export function summaryOf(record: ExecutionRecord): ListedExecution {
  return {
    executionId: record.id,
    reactor: record.reactor,
    status: statusName(record.status),
    tags: record.tags ?? {},
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.retryOf === undefined ? {} : { retryOf: record.retryOf }),
    ...(record.parentId === undefined ? {} : { parentId: record.parentId }),
  };
}
