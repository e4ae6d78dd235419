/**
 * The keyset cursor of `Store.list`, shared by both stores: the last listed record's creation
 * time and id, as opaque base64url text. The next page starts strictly after that pair in the
 * listing's order (newest first: `createdAt` descending, then id descending).
 *
 * @module
 */
import { ListFilterError } from '../errors.js';

/** A position in a listing: a record's creation time and id. */
export interface ListPosition {
  readonly createdAt: number;
  readonly id: string;
}

/** The opaque cursor of `position`. */
export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/** The position a cursor names; throws `ListFilterError` (`list_filter_invalid`) for text no store handed out. */
export function decodeListCursor(cursor: string): ListPosition {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && Number.isFinite(value[0]) && typeof value[1] === 'string')
      return { createdAt: value[0] as number, id: value[1] };
  } catch {
    // fall through
  }
  throw new ListFilterError({ field: 'cursor', value: JSON.stringify(cursor) }, 'is not a cursor of this listing');
}

/** True when a record at `createdAt`, `id` comes strictly after `after` in a listing (newest first). */
export function isAfter(createdAt: number, id: string, after: ListPosition | undefined): boolean {
  if (after === undefined) return true;
  return createdAt < after.createdAt || (createdAt === after.createdAt && id < after.id);
}

/** Newest first: `createdAt` descending, then id descending (the order of `ZREVRANGEBYSCORE`). */
export function newestFirst(a: ListPosition, b: ListPosition): number {
  return b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** The default page size of a listing. */
export const DEFAULT_LIST_PAGE = 50;

/** True when every tag of `wanted` is on `tags` with the same value. */
export function hasTags(
  tags: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, string>> | undefined,
): boolean {
  if (wanted === undefined) return true;
  for (const [key, value] of Object.entries(wanted)) if (tags?.[key] !== value) return false;
  return true;
}
