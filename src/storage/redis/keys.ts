/**
 * The only place Redis key and channel names are built.
 *
 * Every coordination primitive instance lives in one cluster slot: its keys share one hash tag,
 * e.g. `rx:{lock:orders-42}` and `rx:{lock:orders-42}:fence`. User-supplied segments are escaped
 * (`%` → `%25`, `{` → `%7B`, `}` → `%7D`) so a key can never end a hash tag early or collide
 * with another key's layout.
 *
 * Two layouts (docs/decisions/090). `single` (the default, for one server): an execution's
 * record has its own hash tag and the indexes that span executions share `{idx}`. `cluster` (on
 * a Redis Cluster): every key one script touches shares one slot — an execution's record, its
 * map parts, its liveness lock and cancel marker, and its entries in the indexes all carry the
 * tag of its slot group `{x<n>}` ({@link CLUSTER_SLOT_GROUPS} groups, `n` a hash of the id), so
 * the indexes are kept per group and listing merges the groups.
 *
 * @module
 */

import type { PrimitiveKind } from '../../ports/coordinator.js';
import { EXECUTION_STATUSES, type ExecutionTags } from '../../ports/store.js';

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

/** The key layout: `single` for one server, `cluster` for a Redis Cluster (docs/decisions/090). */
export type KeyLayout = 'single' | 'cluster';

/** How many slot groups the `cluster` layout spreads executions (and their index shards) over. */
export const CLUSTER_SLOT_GROUPS = 16;

/** The slot group of an execution id: a 32-bit FNV-1a hash of it, modulo {@link CLUSTER_SLOT_GROUPS}. */
export function slotGroupOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % CLUSTER_SLOT_GROUPS;
}

/** Coordination keys the engine builds for one execution (its liveness lock, its cancel marker): the execution id they belong to. */
function executionOfEngineKey(kind: string, key: string): string | undefined {
  const head = kind === 'lock' ? 'execution:' : kind === 'period' ? 'cancel:' : undefined;
  return head !== undefined && key.startsWith(head) ? key.slice(head.length) : undefined;
}

/** The tail of a tag index key: `tag:<key>=<value>`, both escaped. */
function tagTail(key: string, value: string): string {
  return `tag:${escapeSegment(key)}=${escapeSegment(value)}`;
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
  /** The key layout (docs/decisions/090). */
  readonly layout: KeyLayout;

  constructor(prefix: string = DEFAULT_PREFIX, layout: KeyLayout = 'single') {
    if (prefix.length === 0 || /[{}\s]/.test(prefix)) {
      throw new RangeError(
        `redis key prefix must be non-empty, without braces or whitespace; got ${JSON.stringify(prefix)}`,
      );
    }
    this.prefix = prefix;
    this.layout = layout;
  }

  // ── Wait list ──

  /**
   * Wait list of `key` (`WaitList`, `wait-list.ts`): ZSET job id → arrival number (FIFO). One key
   * with its own hash tag, so it sits in one cluster slot in either layout.
   */
  waitList(key: string): string {
    return `${this.prefix}:{wait:${escapeSegment(key)}}`;
  }

  // ── Event log ──

  /**
   * A kept event (`EventLog`, `event-log.ts`): hash of its name, payload, time, receipt time and
   * effects; expires with the retention. Every key of the event log shares the hash tag
   * `{events}`, so `event-append` touches one slot in either layout.
   */
  event(id: string): string {
    return `${this.prefix}:{events}:e:${escapeSegment(id)}`;
  }
  /** Every kept event: ZSET id → receipt time (ms). */
  eventIndex(): string {
    return `${this.prefix}:{events}:all`;
  }
  /** The kept events of one name: ZSET id → receipt time (ms). */
  eventNameIndex(name: string): string {
    return `${this.prefix}:{events}:name:${escapeSegment(name)}`;
  }

  // ── Event waits ──

  /**
   * The registrations under one (event, match key) of the event-wait index (`EventWaits`,
   * `event-waits.ts`): ZSET member → 0, read in member order. It and {@link eventWaitTimes} share
   * the hash tag of their (event, match key), so each transition is one slot in either layout and
   * keys spread over the cluster.
   */
  eventWaitMembers(event: string, matchKey: string): string {
    return `${this.#eventWaitTag(event, matchKey)}:m`;
  }
  /** The times of the registrations of {@link eventWaitMembers}: HASH member → since (ms). */
  eventWaitTimes(event: string, matchKey: string): string {
    return `${this.#eventWaitTag(event, matchKey)}:t`;
  }
  /** `{ew:<length of the name>:<name>:<match key>}`: the length keeps every (name, key) pair apart. */
  #eventWaitTag(event: string, matchKey: string): string {
    const name = escapeSegment(event);
    return `${this.prefix}:{ew:${name.length}:${name}:${escapeSegment(matchKey)}}`;
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
    return this.layout === 'cluster'
      ? `${this.group(id)}:exec:${escapeSegment(id)}`
      : `${this.prefix}:exec:{${escapeSegment(id)}}`;
  }
  /** The event stream of one execution (`engine.watch`; a Redis stream, same hash tag as its record). */
  executionStream(id: string): string {
    return `${this.execution(id)}:events`;
  }
  /** The element states of one large map of an execution, kept apart from its record (same hash tag). */
  executionMapPart(id: string, path: string): string {
    return `${this.execution(id)}:map:${escapeSegment(path)}`;
  }
  /** The three index entries a save of `id` writes: every record, its reactor's, its status's (ZSETs id → createdAt; in its slot group on a cluster). */
  executionIndexesOf(id: string, reactor: string, status: string): readonly [string, string, string] {
    const head = this.#indexHead(id);
    return [`${head}:exec`, `${head}:reactor:${escapeSegment(reactor)}`, `${head}:status:${escapeSegment(status)}`];
  }
  /**
   * The index entries a save of `id` writes besides {@link RedisKeys.executionIndexesOf}: one per
   * tag (`…:idx:tag:<key>=<value>`, ZSETs id → createdAt, in the id's slot group on a cluster),
   * in key order. A tag key never holds `=` (docs/limits.md), so the name is unambiguous.
   */
  executionTagIndexesOf(id: string, tags: ExecutionTags | undefined): readonly string[] {
    if (tags === undefined) return [];
    const head = this.#indexHead(id);
    return Object.keys(tags)
      .sort()
      .map((key) => `${head}:${tagTail(key, tags[key] ?? '')}`);
  }
  /** The status indexes a save of `id` with `status` takes it out of: every other status's (it is in one only). */
  executionStatusIndexesBesides(id: string, status: string): readonly string[] {
    const head = this.#indexHead(id);
    return EXECUTION_STATUSES.filter((s) => s !== status).map((s) => `${head}:status:${escapeSegment(s)}`);
  }
  /** The index of one status that a save of `id` takes it out of, when the status it leaves is known. */
  executionStatusIndexOf(id: string, status: string): string {
    return `${this.#indexHead(id)}:status:${escapeSegment(status)}`;
  }
  /**
   * The index keys a listing reads: one, or one per slot group on a cluster — the most selective
   * the filter allows: its first tag (in key order), else its reactor, else its status, else all.
   */
  executionIndexShards(filter: {
    readonly reactor?: string;
    readonly status?: string;
    readonly tags?: ExecutionTags;
  }): readonly string[] {
    const tag = filter.tags === undefined ? undefined : Object.keys(filter.tags).sort()[0];
    const tail =
      tag !== undefined
        ? tagTail(tag, filter.tags?.[tag] ?? '')
        : filter.reactor !== undefined
          ? `reactor:${escapeSegment(filter.reactor)}`
          : filter.status !== undefined
            ? `status:${escapeSegment(filter.status)}`
            : 'exec';
    if (this.layout === 'single') return [`${this.prefix}:{idx}:${tail}`];
    return Array.from({ length: CLUSTER_SLOT_GROUPS }, (_, n) => `${this.prefix}:{x${String(n)}}:idx:${tail}`);
  }
  /** Index of the records carrying tag `key` = `value` (the `single` layout's). */
  executionIndexByTag(key: string, value: string): string {
    return `${this.prefix}:{idx}:${tagTail(key, value)}`;
  }
  /** Index of every record: ZSET id → createdAt (the `single` layout's; see {@link RedisKeys.executionIndexShards}). */
  executionIndex(): string {
    return `${this.prefix}:{idx}:exec`;
  }
  /** Index of one reactor's records (the `single` layout's). */
  executionIndexByReactor(reactor: string): string {
    return `${this.prefix}:{idx}:reactor:${escapeSegment(reactor)}`;
  }
  /** Index of the records last saved with a status, entries checked when read (the `single` layout's). */
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

  /**
   * Every SCAN MATCH pattern of the state keys of `kind`: {@link RedisKeys.scanPattern}, and on
   * the `cluster` layout also the one of the liveness locks and cancel markers kept in an
   * execution's slot group.
   */
  scanPatterns(kind: PrimitiveKind, glob: string): readonly string[] {
    const own = this.scanPattern(kind, glob);
    if (this.layout === 'single' || (kind !== 'lock' && kind !== 'period')) return [own];
    return [own, `${globLiteral(this.prefix)}:{x*}${own.slice(globLiteral(this.prefix).length + 1)}`];
  }

  /** Parses a state key of `kind` back into its user key (and window or bucket); `undefined` for any other key. */
  parseScanned(kind: PrimitiveKind, redisKey: string): ScannedKey | undefined {
    const group = `${this.prefix}:{x`;
    if (this.layout === 'cluster' && redisKey.startsWith(group)) {
      const end = redisKey.indexOf('}', group.length);
      return end < 0 ? undefined : this.parseScanned(kind, `${this.prefix}:${redisKey.slice(end + 1)}`);
    }
    const start = `${this.prefix}:{${TAGS[kind]}:`;
    const close = redisKey.indexOf('}', start.length);
    if (!redisKey.startsWith(start) || close < 0) return undefined;
    const key = unescapeSegment(redisKey.slice(start.length, close));
    const rest = redisKey.slice(close + 1);
    if (kind === 'rate') return /^:\d+$/.test(rest) ? { key, periodMs: Number(rest.slice(1)) } : undefined;
    if (kind === 'period') return rest.startsWith(':') ? { key, bucket: unescapeSegment(rest.slice(1)) } : undefined;
    return rest === '' ? { key } : undefined;
  }

  /** Where the index keys holding `id` live: `<prefix>:{idx}`, or its slot group's `<prefix>:{x<n>}:idx` on a cluster. */
  #indexHead(id: string): string {
    return this.layout === 'cluster' ? `${this.group(id)}:idx` : `${this.prefix}:{idx}`;
  }

  /** `<prefix>:{x<n>}`: the slot group of an execution (the `cluster` layout). */
  private group(id: string): string {
    return `${this.prefix}:{x${String(slotGroupOf(id))}}`;
  }

  private tag(kind: string, key: string): string {
    const own = `{${kind}:${escapeSegment(key)}}`;
    if (this.layout === 'cluster') {
      // An execution's liveness lock and cancel marker go to its slot group, ahead of their own (second, not hashed) braces.
      const execution = executionOfEngineKey(kind, key);
      if (execution !== undefined) return `${this.group(execution)}${own}`;
    }
    return `${this.prefix}:${own}`;
  }
}
