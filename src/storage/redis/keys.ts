/**
 * The only place Redis key and channel names are built.
 *
 * Every coordination primitive instance lives in one cluster slot: its keys share one hash tag,
 * e.g. `rx:{lock:orders-42}` and `rx:{lock:orders-42}:fence`. User-supplied segments are escaped
 * (`%` → `%25`, `{` → `%7B`, `}` → `%7D`) so a key can never end a hash tag early or collide
 * with another key's layout.
 *
 * @module
 */

import type { PrimitiveKind } from '../../engine/ports/coordinator.js';

/** The default key prefix. */
export const DEFAULT_PREFIX = 'rx';

/** Escapes a user-supplied segment so it cannot contain a hash-tag brace. */
export function escapeSegment(segment: string): string {
  if (!segment.includes('%') && !segment.includes('{') && !segment.includes('}')) return segment; // the common case, on every key built
  return segment.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}

/** Undoes {@link escapeSegment}. */
export function unescapeSegment(segment: string): string {
  return segment.replace(/%(25|7B|7D)/g, (_, code: string) => (code === '25' ? '%' : code === '7B' ? '{' : '}'));
}

/** Escapes Redis glob specials so the text matches itself in a SCAN MATCH pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** Turns an inspector glob (`*`, `?`, the rest literal) over user keys into a glob over escaped segments. */
function userGlob(glob: string): string {
  return [...escapeSegment(glob)].map((char) => (char === '*' || char === '?' ? char : globLiteral(char))).join('');
}

/** The hash-tag kind of each primitive's state key. */
const TAGS: Readonly<Record<PrimitiveKind, string>> = {
  lock: 'lock',
  semaphore: 'sem',
  rate: 'rate',
  period: 'period',
  ordered: 'ord',
};

/** A state key found by SCAN, parsed back: the user key, and the window or bucket where the layout has one. */
export interface ScannedKey {
  readonly key: string;
  readonly periodMs?: number;
  readonly bucket?: string;
}

/** Builds every key and channel name under one prefix. */
export class RedisKeys {
  /** The prefix every key starts with. */
  readonly prefix: string;

  constructor(prefix: string = DEFAULT_PREFIX) {
    if (prefix.length === 0 || /[{}\s]/.test(prefix)) {
      throw new RangeError(
        `redis key prefix must be non-empty, without braces or whitespace; got ${JSON.stringify(prefix)}`,
      );
    }
    this.prefix = prefix;
  }

  // ── Exclusive lock ──

  /** Lock hash: owner, token, nesting and holder info; TTL = the lease. */
  lock(key: string): string {
    return this.tag('lock', key);
  }
  /** Last fencing token handed out for the key; no TTL. */
  lockFence(key: string): string {
    return `${this.tag('lock', key)}:fence`;
  }

  // ── Semaphore ──

  /** Lease ZSET: owner → expiry (server ms). */
  semaphore(key: string): string {
    return this.tag('sem', key);
  }
  /** Semaphore meta hash: `limit`, `n:<owner>` nesting, `i:<owner>` holder JSON. */
  semaphoreMeta(key: string): string {
    return `${this.tag('sem', key)}:meta`;
  }

  // ── Rate limit ──

  /** Sliding log of one window: ZSET start id → server ms. */
  rate(key: string, periodMs: number): string {
    return `${this.tag('rate', key)}:${String(periodMs)}`;
  }

  // ── Period ──

  /** Marker of one bucket. */
  period(key: string, bucket: string): string {
    return `${this.tag('period', key)}:${escapeSegment(bucket)}`;
  }

  // ── Ordered lock ──

  /** Ordered-lock hash: epoch, counters, in-flight position, marks. No TTL. */
  ordered(key: string): string {
    return this.tag('ord', key);
  }

  // ── Channels ──

  /** Pub/sub channel notified when the lock is freed. */
  lockChannel(key: string): string {
    return `${this.tag('lock', key)}:ch`;
  }
  /** Pub/sub channel notified when a semaphore slot is freed. */
  semaphoreChannel(key: string): string {
    return `${this.tag('sem', key)}:ch`;
  }
  /** Pub/sub channel notified when an ordered lock advances, drains or resets. */
  orderedChannel(key: string): string {
    return `${this.tag('ord', key)}:ch`;
  }
  /** Channel of a rate limit (nothing publishes on it today: waits end by timeout). */
  rateChannel(key: string): string {
    return `${this.tag('rate', key)}:ch`;
  }
  /** Channel of cancel announcements: the message is the execution id (one channel per prefix). */
  cancelChannel(): string {
    return `${this.prefix}:cancels`;
  }
  /** Channel of a period key (nothing publishes on it today: waits end by timeout). */
  periodChannel(key: string): string {
    return `${this.tag('period', key)}:ch`;
  }

  // ── Execution records ──

  /** One execution record (JSON string with TTL). */
  execution(id: string): string {
    return `${this.prefix}:exec:{${escapeSegment(id)}}`;
  }
  /** The element states of one large map of an execution, kept apart from its record (same hash tag). */
  executionMapPart(id: string, path: string): string {
    return `${this.prefix}:exec:{${escapeSegment(id)}}:map:${escapeSegment(path)}`;
  }
  /** Index of every record: ZSET id → createdAt. */
  executionIndex(): string {
    return `${this.prefix}:{idx}:exec`;
  }
  /** Index of one reactor's records. */
  executionIndexByReactor(reactor: string): string {
    return `${this.prefix}:{idx}:reactor:${escapeSegment(reactor)}`;
  }
  /** Index of the records last saved with a status (entries are checked when read). */
  executionIndexByStatus(status: string): string {
    return `${this.prefix}:{idx}:status:${escapeSegment(status)}`;
  }
  /** Idempotency claim of `key` under `reactor`. */
  idempotency(reactor: string, key: string): string {
    return `${this.prefix}:idem:{${escapeSegment(reactor)}}:${escapeSegment(key)}`;
  }

  // ── Fan-out maps ──

  /** Ledger hash of one fan-out map: counters, `s:<i>` element status, `c:<i>` claim; TTL = the records'. */
  fanOut(mapId: string): string {
    return this.tag('fanout', mapId);
  }

  // ── Interrupts ──

  /** Claim of an interrupt correlation id: the holding execution id (TTL = the record TTL). */
  correlation(correlationId: string): string {
    return `${this.prefix}:corr:{${escapeSegment(correlationId)}}`;
  }
  /** Resume claim of one interrupt of one execution (`SET NX`): the winning claimant. */
  resumeClaim(executionId: string, step: string): string {
    return `${this.prefix}:resume:{${escapeSegment(executionId)}}:${escapeSegment(step)}`;
  }

  // ── Inspection (SCAN patterns; never KEYS) ──

  /**
   * The SCAN MATCH pattern of the state keys of `kind` whose user key may match `glob` (`*`, `?`,
   * the rest literal). Matches are approximate (`?` vs an escaped brace): check them with
   * {@link RedisKeys.parseScanned} and the glob again.
   */
  scanPattern(kind: PrimitiveKind, glob: string): string {
    const head = `${globLiteral(this.prefix)}:{${TAGS[kind]}:${userGlob(glob)}}`;
    return kind === 'rate' || kind === 'period' ? `${head}:*` : head;
  }

  /** Parses a state key of `kind` back into its user key (and window or bucket); `undefined` for any other key. */
  parseScanned(kind: PrimitiveKind, redisKey: string): ScannedKey | undefined {
    const start = `${this.prefix}:{${TAGS[kind]}:`;
    const close = redisKey.indexOf('}', start.length);
    if (!redisKey.startsWith(start) || close < 0) return undefined;
    const key = unescapeSegment(redisKey.slice(start.length, close));
    const rest = redisKey.slice(close + 1);
    if (kind === 'rate') return /^:\d+$/.test(rest) ? { key, periodMs: Number(rest.slice(1)) } : undefined;
    if (kind === 'period') return rest.startsWith(':') ? { key, bucket: unescapeSegment(rest.slice(1)) } : undefined;
    return rest === '' ? { key } : undefined;
  }

  private tag(kind: string, key: string): string {
    return `${this.prefix}:{${kind}:${escapeSegment(key)}}`;
  }
}
