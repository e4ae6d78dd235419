/**
 * How operators write tag filters (the dashboard's tag field, the API's and the CLI's `tag`):
 * `key=value`, several separated by commas or given as repeated parameters; every tag must match.
 *
 * @module
 */
import { readTags } from '../engine/model/tags.js';
import { ReactorError } from '../errors.js';

/**
 * The tags `texts` name (`['orderId=42', 'region=eu,tier=gold']`), checked against the tag
 * limits; `undefined` when none is given. Throws `ReactorError` `query_invalid` naming the text
 * at fault: no `=`, or a key or value the limits refuse.
 */
export function parseTagFilters(texts: readonly string[]): Readonly<Record<string, string>> | undefined {
  const tags: Record<string, string> = {};
  for (const part of texts.flatMap((text) => text.split(','))) {
    const pair = part.trim();
    if (pair === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ReactorError('query_invalid', `tag: "${pair}" is not key=value`, { details: { tag: pair } });
    tags[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  const read = readTags(tags);
  if (!read.ok)
    throw new ReactorError('query_invalid', `tag ${read.tag}: ${read.problem}; got ${read.value}`, {
      details: { tag: read.tag },
    });
  return read.tags;
}

/** True for text that can be a tag key (the column a list shows). */
export function isTagKey(text: string): boolean {
  return readTags({ [text]: 'x' }).ok;
}
