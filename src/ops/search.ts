/**
 * Searching executions for operators: by execution id, idempotency key and interrupt correlation
 * id through the store's own lookups, then by any of those or the input's text among the newest
 * records (a bounded window, docs/decisions/088).
 *
 * @module
 */
import { hasInterruptClaims } from '../ports/interrupt-claims.js';
import { storedStatus, type ExecutionRecord, type Store } from '../ports/store.js';
import { ReactorError } from '../errors.js';
import { summaryOf } from './executions.js';
import type { ExecutionSearch, SearchHit, SearchMatch, SearchResult } from './types.js';

/** The default number of newest records the text search reads. */
export const SEARCH_WINDOW = 1_000;
/** The most hits a search answers. */
export const SEARCH_MAX_HITS = 100;
/** The longest search text. */
export const SEARCH_MAX_LENGTH = 200;

/** What a search reads: the store, and the reactor names whose idempotency keys are looked up. */
export interface SearchSources {
  readonly store: Store;
  readonly reactorNames: readonly string[];
  /** How many of the newest records are read for text matches. */
  readonly window: number;
  /** The input as operators may see it (secrets redacted); `undefined` when it is withheld. */
  readonly shownInput: (record: ExecutionRecord) => unknown;
}

/** Searches executions. @throws ReactorError `query_invalid` on an empty or oversized text. */
export async function searchExecutions(sources: SearchSources, search: ExecutionSearch): Promise<SearchResult> {
  const text = checkedText(search.q);
  const hits = new Map<string, SearchHit>();
  const add = (record: ExecutionRecord, match: SearchMatch): void => {
    if (search.reactor !== undefined && record.reactor !== search.reactor) return;
    if (search.status !== undefined && record.status !== storedStatus(search.status)) return;
    if (!hits.has(record.id) && hits.size < SEARCH_MAX_HITS) hits.set(record.id, { ...summaryOf(record), match });
  };
  for (const [id, match] of await indexed(sources, text, search.reactor)) {
    const record = await sources.store.get(id);
    if (record) add(record, match);
  }
  const scanned = await scanWindow(sources, text, add);
  return { q: text, items: [...hits.values()], scanned, window: sources.window };
}

function checkedText(raw: unknown): string {
  const text = typeof raw === 'string' ? raw.trim() : '';
  if (text === '' || text.length > SEARCH_MAX_LENGTH)
    throw new ReactorError('query_invalid', `q: a search text of 1 to ${SEARCH_MAX_LENGTH} characters is needed`, {
      details: { q: raw },
    });
  return text;
}

/** Exact lookups: the record id, the correlation claim, each known reactor's idempotency claim. */
async function indexed(
  sources: SearchSources,
  text: string,
  reactor: string | undefined,
): Promise<readonly (readonly [string, SearchMatch])[]> {
  const found: [string, SearchMatch][] = [[text, 'id']];
  const { store } = sources;
  if (hasInterruptClaims(store)) {
    const holder = await store.correlation(text);
    if (holder !== undefined) found.push([holder, 'correlation_id']);
  }
  if (store.idempotencyHolder) {
    for (const name of reactor === undefined ? sources.reactorNames : [reactor]) {
      const holder = await store.idempotencyHolder(name, text);
      if (holder !== undefined) found.push([holder, 'idempotency_key']);
    }
  }
  return found;
}

/** Reads the newest `window` records; each that matches is added. Returns how many were read. */
async function scanWindow(
  sources: SearchSources,
  text: string,
  add: (record: ExecutionRecord, match: SearchMatch) => void,
): Promise<number> {
  const needle = text.toLowerCase();
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await sources.store.list({
      limit: Math.min(200, sources.window - seen),
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const record of page.records) {
      const match = matchOf(record, text, needle, sources.shownInput(record));
      if (match !== undefined) add(record, match);
    }
    seen += page.records.length;
    cursor = page.cursor;
  } while (cursor !== undefined && seen < sources.window);
  return seen;
}

/** How a record matches the text, if it does: `input` is the redacted input (its secrets never match). */
export function matchOf(
  record: ExecutionRecord,
  text: string,
  needle: string,
  input: unknown,
): SearchMatch | undefined {
  if (record.id === text) return 'id';
  if (record.idempotencyKey === text) return 'idempotency_key';
  if (correlationIds(record).includes(text)) return 'correlation_id';
  if (input === undefined) return undefined;
  let json: string;
  try {
    json = JSON.stringify(input) ?? '';
  } catch {
    return undefined;
  }
  return json.toLowerCase().includes(needle) ? 'input' : undefined;
}

/** The correlation ids of the record's interrupts, open or answered (from its trace). */
function correlationIds(record: ExecutionRecord): readonly string[] {
  const ids = (record.interrupts ?? []).flatMap((i) => (i.correlationId === undefined ? [] : [i.correlationId]));
  for (const event of record.trace ?? [])
    if (event.type === 'interrupt.paused' && event.correlationId !== undefined) ids.push(event.correlationId);
  return ids;
}
