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

/** The default key prefix. */
export const DEFAULT_PREFIX = 'rx';

/** Escapes a user-supplied segment so it cannot contain a hash-tag brace. */
export function escapeSegment(segment: string): string {
  return segment.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}

/** Builds every key and channel name under one prefix. */
export class RedisKeys {
  /** The prefix every key starts with. */
  readonly prefix: string;

  constructor(prefix: string = DEFAULT_PREFIX) {
    if (prefix.length === 0 || /[{}\s]/.test(prefix)) {
      throw new RangeError(`redis key prefix must be non-empty, without braces or whitespace; got ${JSON.stringify(prefix)}`);
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
  /** Channel of a period key (nothing publishes on it today: waits end by timeout). */
  periodChannel(key: string): string {
    return `${this.tag('period', key)}:ch`;
  }

  // ── Execution records ──

  /** One execution record (JSON string with TTL). */
  execution(id: string): string {
    return `${this.prefix}:exec:{${escapeSegment(id)}}`;
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

  private tag(kind: string, key: string): string {
    return `${this.prefix}:{${kind}:${escapeSegment(key)}}`;
  }
}
