/**
 * Execution tags (`{ orderId: '42' }` on `run` / `start`): their limits and the check that
 * enforces them before anything is written (docs/limits.md, docs/decisions/103).
 *
 * @module
 */
import { TagsInvalidError } from '../../errors.js';
import type { ExecutionTags } from '../../ports/store.js';

/** The most tags one execution carries (each is one more index entry per status change on Redis). */
export const MAX_TAGS = 8;
/** The longest tag key, in characters. */
export const MAX_TAG_KEY_LENGTH = 64;
/** The longest tag value, in characters (UTF-16 code units). */
export const MAX_TAG_VALUE_LENGTH = 256;
/** What a tag key may hold: letters, digits, `_`, `-`, `.` (never `=`, which separates key and value in an index name). */
const TAG_KEY = /^[A-Za-z0-9_.-]+$/;
/** Control characters, which a tag value may not hold. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** What is wrong with some tags: the tag at fault (`tags` for the whole map), its value as text, and why. */
export interface TagsProblem {
  readonly tag: string;
  readonly value: string;
  readonly problem: string;
}

/**
 * The tags checked and copied into a plain frozen object (keys in sorted order; `undefined` for
 * none: `undefined` or `{}`), or what is wrong with them: not a plain object, more than
 * {@link MAX_TAGS}, a key empty, longer than {@link MAX_TAG_KEY_LENGTH} or with another character
 * than letters, digits, `_`, `-`, `.`; a value not a string, empty, longer than
 * {@link MAX_TAG_VALUE_LENGTH} or holding a control character.
 */
export function readTags(
  tags: unknown,
): { readonly ok: true; readonly tags: ExecutionTags | undefined } | ({ readonly ok: false } & TagsProblem) {
  const wrong = (tag: string, value: unknown, problem: string) => ({
    ok: false as const,
    tag,
    value: shown(value),
    problem,
  });
  if (tags === undefined) return { ok: true, tags: undefined };
  if (typeof tags !== 'object' || tags === null || Array.isArray(tags) || !isPlain(tags))
    return wrong('tags', tags, 'must be an object of string keys to string values');
  const keys = Object.keys(tags).sort();
  if (keys.length === 0) return { ok: true, tags: undefined };
  if (keys.length > MAX_TAGS) return wrong('tags', `${keys.length} tags`, `may hold at most ${MAX_TAGS} tags`);
  const checked: Record<string, string> = {};
  for (const key of keys) {
    if (key.length > MAX_TAG_KEY_LENGTH) return wrong(key, key, `key is longer than ${MAX_TAG_KEY_LENGTH} characters`);
    if (!TAG_KEY.test(key)) return wrong(key, key, 'key may hold only letters, digits, _, - and .');
    const value = (tags as Record<string, unknown>)[key];
    if (typeof value !== 'string') return wrong(key, value, 'value must be a string');
    if (value.length === 0) return wrong(key, value, 'value must not be empty');
    if (value.length > MAX_TAG_VALUE_LENGTH)
      return wrong(key, value, `value is longer than ${MAX_TAG_VALUE_LENGTH} characters`);
    if (CONTROL.test(value)) return wrong(key, value, 'value must not hold control characters');
    checked[key] = value;
  }
  return { ok: true, tags: Object.freeze(checked) };
}

/**
 * The tags of a run or start checked (see {@link readTags}); throws {@link TagsInvalidError}
 * (`tags_invalid`) naming the tag, and `entry`, a `startMany` entry's index.
 */
export function checkTags(tags: unknown, source: { readonly entry?: number } = {}): ExecutionTags | undefined {
  const read = readTags(tags);
  if (read.ok) return read.tags;
  throw new TagsInvalidError(
    { tag: read.tag, value: read.value, ...(source.entry === undefined ? {} : { entry: source.entry }) },
    read.problem,
  );
}

/** True for an object made by `{}` or `Object.create(null)` (not a Map, Date, class instance). */
function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A rejected value as text (shortened). */
function shown(value: unknown): string {
  const text =
    typeof value === 'string'
      ? JSON.stringify(value)
      : value === null
        ? 'null'
        : typeof value === 'object' || typeof value === 'function'
          ? Object.prototype.toString.call(value)
          : `${value as number | boolean | bigint | undefined}`;
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
