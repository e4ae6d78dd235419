/**
 * Reading the query string: execution filters (status checked, times as ISO, `datetime-local`
 * in UTC, or ms; tags as `key=value`, repeated or comma-separated; the tag column to show), with
 * a clear 400 on bad input.
 *
 * @module
 */
import type { Context } from 'hono';
import { STATUS_NAMES, statusName, parseStatus } from '../ports/store.js';
import { ReactorError } from '../errors.js';
import { isTagKey, parseTagFilters } from '../ops/tag-filter.js';
import { parseOperatorTime } from '../ops/time.js';
import type { ExecutionQuery, ExecutionSearch } from '../ops/types.js';
import type { ListFilters } from './html/executions-page.js';

/** Parses a time: digits are ms; anything else a date (a date without a zone is UTC). */
export function parseTime(name: string, raw: string | undefined): number | undefined {
  const value = parseOperatorTime(raw);
  if (value === undefined) return undefined;
  if (!Number.isFinite(value))
    throw new ReactorError('query_invalid', `${name}: "${raw}" is not a time (ISO 8601 or ms since the epoch)`, {
      details: { [name]: raw },
    });
  return value;
}

/** The filters of the executions list from the query string, and the search when `q` is given. */
export function executionQuery(c: Context): {
  query: ExecutionQuery;
  filters: ListFilters;
  search: ExecutionSearch | undefined;
} {
  const q = (name: string): string | undefined => {
    const value = c.req.query(name);
    return value === undefined || value === '' ? undefined : value;
  };
  const name = q('status');
  // `pending` is accepted as another name of `queued` (decision 107).
  const status = name === undefined ? undefined : parseStatus(name);
  if (name !== undefined && status === undefined)
    throw new ReactorError('query_invalid', `status: "${name}" is not one of ${STATUS_NAMES.join(', ')}`, {
      details: { status: name },
    });
  const limitRaw = q('limit');
  const limit = limitRaw === undefined ? undefined : Number(limitRaw);
  const from = parseTime('from', q('from'));
  const to = parseTime('to', q('to'));
  const text = q('q')?.trim();
  const tagTexts = (c.req.queries('tag') ?? []).filter((t) => t.trim() !== '');
  const tags = parseTagFilters(tagTexts);
  const column = q('column');
  if (column !== undefined && !isTagKey(column))
    throw new ReactorError('query_invalid', `column: "${column}" is not a tag key`, { details: { column } });
  const filters: ListFilters = {
    ...pick('q', text === '' ? undefined : text),
    ...pick('reactor', q('reactor')),
    ...pick('status', status === undefined ? undefined : statusName(status)),
    ...pick('from', q('from')),
    ...pick('to', q('to')),
    ...pick('tag', tagTexts.length === 0 ? undefined : tagTexts.join(',')),
    ...pick('column', column),
  };
  const query: ExecutionQuery = {
    ...pick('reactor', q('reactor')),
    ...(status === undefined ? {} : { status }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(tags === undefined ? {} : { tags }),
    ...(limit === undefined ? {} : { limit }),
    ...pick('cursor', q('cursor')),
  };
  const search: ExecutionSearch | undefined =
    text === undefined || text === ''
      ? undefined
      : {
          q: text,
          ...pick('reactor', q('reactor')),
          ...(status === undefined ? {} : { status }),
        };
  return { query, filters, search };
}

function pick<K extends string>(name: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: string };
}
