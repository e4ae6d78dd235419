import { RecordVersionError } from '../../errors.js';
import { DEFAULT_MAX_MAP_STATE_BYTES, joinRecord, splitRecord } from '../map-parts.js';
import {
  DEFAULT_LIST_PAGE,
  decodeListCursor,
  encodeListCursor,
  hasTags,
  isAfter,
  newestFirst,
} from '../list-cursor.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { Claim, InterruptClaims } from '../../ports/interrupt-claims.js';
import {
  RECORD_VERSION,
  type ExecutionTags,
  type ExecutionFilter,
  type ExecutionRecord,
  type IdempotencyClaim,
  type Store,
} from '../../ports/store.js';

/** One stored record: its JSON and what `list` filters and sorts on. */
interface StoredRecord {
  readonly json: string;
  readonly id: string;
  readonly createdAt: number;
  readonly tags: ExecutionTags | undefined;
  readonly reactor: string;
  readonly status: string;
  readonly expiresAt: number;
  /** The element states of its large maps, by map path (kept apart from `json`). */
  readonly parts?: ReadonlyMap<string, { readonly rev: number; readonly json: string }>;
}

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Clock for record expiry. Default: the system clock. */
  readonly clock?: Clock;
  /**
   * How long a record (and its idempotency claim) is kept after its last save, in ms: a positive
   * integer, or `Infinity` to keep every record for the life of the process. Default 24 h.
   */
  readonly recordTtlMs?: number;
  /** Largest serialized record accepted, in bytes. Default 512 KiB. */
  readonly maxRecordBytes?: number;
  /** Largest serialized element states of one large map (kept apart from the record), in bytes. Default 64 MiB. */
  readonly maxMapStateBytes?: number;
}

/**
 * The embedded store: execution records kept as JSON strings in this process, so what is
 * stored is exactly what the Redis store would store (JSON-safe, size-checked, versioned).
 */
export class MemoryStore implements Store, InterruptClaims {
  /** Its records live in this process: no other process reads them. */
  readonly processLocal: boolean = true;
  readonly #records = new Map<string, StoredRecord>();
  readonly #claims = new Map<string, { executionId: string; expiresAt: number }>();
  /** Resume claims: short leases (the holder is the claimant), apart from the day-long claims above. */
  readonly #resumeClaims = new Map<string, { executionId: string; expiresAt: number }>();
  readonly #maxBytes: number;
  readonly #maxMapStateBytes: number;

  /** The largest record `save` accepts, in bytes. */
  get maxRecordBytes(): number {
    return this.#maxBytes;
  }
  readonly #clock: Clock;
  readonly #ttlMs: number;

  /** How long a record is kept after its last save, in ms (`Infinity`: for the life of the process). */
  get recordTtlMs(): number {
    return this.#ttlMs;
  }
  #writes = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxBytes = options.maxRecordBytes ?? 512 * 1024;
    this.#maxMapStateBytes = options.maxMapStateBytes ?? DEFAULT_MAX_MAP_STATE_BYTES;
    this.#clock = options.clock ?? systemClock;
    this.#ttlMs = options.recordTtlMs ?? 86_400_000;
    if (this.#ttlMs !== Infinity && (!Number.isSafeInteger(this.#ttlMs) || this.#ttlMs < 1))
      throw new RangeError(`recordTtlMs must be a positive integer or Infinity; got ${String(this.#ttlMs)}`);
  }

  /**
   * Drops expired records and claims. Both maps are kept in expiry order (an entry is re-inserted
   * when its expiry moves), so a sweep stops at the first live entry: O(expired), not O(all).
   */
  #sweep(now: number): void {
    for (const [id, e] of this.#records) {
      if (e.expiresAt > now) break;
      this.#records.delete(id);
    }
    for (const [id, c] of this.#claims) {
      if (c.expiresAt > now) break;
      this.#claims.delete(id);
    }
    for (const [id, c] of this.#resumeClaims) {
      if (c.expiresAt > now) break;
      this.#resumeClaims.delete(id);
    }
  }

  async save(record: ExecutionRecord): Promise<void> {
    const entry = this.#entry(record);
    this.#records.delete(record.id); // re-insert at the end: the map stays in expiry order
    this.#records.set(record.id, entry);
    if (++this.#writes % 1024 === 0) this.#sweep(this.#clock.now());
  }

  /**
   * The stored form of `record`, expiring a TTL from now, its large maps' states apart (kept from
   * the stored entry when unchanged); throws `RecordTooLargeError` over a limit, before anything is stored.
   */
  #entry(record: ExecutionRecord): StoredRecord {
    const stored = this.#records.get(record.id)?.parts;
    const { json, parts } = splitRecord(
      record,
      { maxRecordBytes: this.#maxBytes, maxMapStateBytes: this.#maxMapStateBytes },
      (path) => stored?.get(path)?.rev,
    );
    const entry = {
      json,
      id: record.id,
      createdAt: record.createdAt,
      tags: record.tags,
      reactor: record.reactor,
      status: record.status,
      expiresAt: this.#clock.now() + this.#ttlMs,
    };
    if (parts.length === 0 && stored === undefined) return entry;
    const kept = new Map(stored);
    for (const part of parts) if (part.json !== undefined) kept.set(part.path, { rev: part.rev, json: part.json });
    return { ...entry, parts: kept };
  }

  async get(id: string): Promise<ExecutionRecord | undefined> {
    const entry = this.#records.get(id);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#clock.now()) {
      this.#records.delete(id);
      return undefined;
    }
    return joinRecord(parseRecord(entry.json), (path) => entry.parts?.get(path)?.json);
  }

  async list(
    filter: ExecutionFilter = {},
  ): Promise<{ readonly records: readonly ExecutionRecord[]; readonly cursor?: string }> {
    const limit = filter.limit ?? DEFAULT_LIST_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`list limit must be a positive integer; got ${String(limit)}`);
    const after = filter.cursor === undefined ? undefined : decodeListCursor(filter.cursor);
    this.#sweep(this.#clock.now());
    // Keyset paging: only what sorts after the cursor, so records added meanwhile (newer) never shift a page.
    const matching = [...this.#records.values()]
      .filter(
        (e) =>
          isAfter(e.createdAt, e.id, after) &&
          (filter.reactor === undefined || e.reactor === filter.reactor) &&
          (filter.status === undefined || e.status === filter.status) &&
          hasTags(e.tags, filter.tags) &&
          inRange(e.createdAt, filter),
      )
      .sort(newestFirst);
    const page = matching.slice(0, limit);
    const records = page.map((e) => parseRecord(e.json));
    const last = page[page.length - 1];
    return matching.length > limit && last !== undefined ? { records, cursor: encodeListCursor(last) } : { records };
  }

  async claimIdempotency(
    reactor: string,
    key: string,
    executionId: string,
    pending?: ExecutionRecord,
  ): Promise<IdempotencyClaim> {
    const entry = pending === undefined ? undefined : this.#entry(pending);
    const id = `${reactor}\u0000${key}`;
    const now = this.#clock.now();
    const existing = this.#claims.get(id);
    const live = existing !== undefined && existing.expiresAt > now ? existing.executionId : undefined;
    if (live !== undefined && live !== executionId) return { claimed: false, executionId: live };
    if (live === undefined) {
      this.#claims.delete(id);
      this.#claims.set(id, { executionId, expiresAt: now + this.#ttlMs });
    }
    // The claim and the first record in one synchronous step, like the Redis script (docs/decisions/056).
    if (entry !== undefined) this.#saveIfAbsent(executionId, entry, now);
    return { claimed: true };
  }

  async idempotencyHolder(reactor: string, key: string): Promise<string | undefined> {
    const claim = this.#claims.get(`${reactor}\u0000${key}`);
    return claim !== undefined && claim.expiresAt > this.#clock.now() ? claim.executionId : undefined;
  }

  /** Stores `entry` as record `id` unless a live one exists (a claim's first record never overwrites a save). */
  #saveIfAbsent(id: string, entry: StoredRecord, now: number): void {
    const current = this.#records.get(id);
    if (current !== undefined && current.expiresAt > now) return;
    this.#records.delete(id);
    this.#records.set(id, entry);
  }

  async claimCorrelation(
    correlationId: string,
    executionId: string,
    options: { readonly replace?: string } = {},
  ): Promise<Claim> {
    return this.#claim(`\u0001correlation\u0000${correlationId}`, executionId, options.replace);
  }

  async correlation(correlationId: string): Promise<string | undefined> {
    return this.#live(`\u0001correlation\u0000${correlationId}`);
  }

  async claimResume(executionId: string, step: string, claimant: string, ttlMs: number): Promise<Claim> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
      throw new RangeError(`claimResume: ttlMs must be a positive integer, got ${String(ttlMs)}`);
    const id = `${executionId}\u0000${step}`;
    const now = this.#clock.now();
    const entry = this.#resumeClaims.get(id);
    if (entry !== undefined && entry.expiresAt > now) return { claimed: false, holder: entry.executionId };
    this.#resumeClaims.delete(id); // re-insert at the end: one lease length for all, so the map stays in expiry order
    this.#resumeClaims.set(id, { executionId: claimant, expiresAt: now + ttlMs });
    return { claimed: true };
  }

  async releaseResume(executionId: string, step: string, claimant: string): Promise<void> {
    const id = `${executionId}\u0000${step}`;
    if (this.#resumeClaims.get(id)?.executionId === claimant) this.#resumeClaims.delete(id);
  }

  #live(id: string): string | undefined {
    const entry = this.#claims.get(id);
    return entry !== undefined && entry.expiresAt > this.#clock.now() ? entry.executionId : undefined;
  }

  /** Set-if-absent (or held by `value` already, or by `replace`); one synchronous step, so atomic in this process. */
  #claim(id: string, value: string, replace: string | undefined): Claim {
    const holder = this.#live(id);
    if (holder !== undefined && holder !== value && holder !== replace) return { claimed: false, holder };
    this.#claims.delete(id);
    this.#claims.set(id, { executionId: value, expiresAt: this.#clock.now() + this.#ttlMs });
    return { claimed: true };
  }
}

/** True when `createdAt` lies in the filter's `[createdFrom, createdTo)` range. */
function inRange(createdAt: number, filter: ExecutionFilter): boolean {
  return (
    (filter.createdFrom === undefined || createdAt >= filter.createdFrom) &&
    (filter.createdTo === undefined || createdAt < filter.createdTo)
  );
}

/** Parses a stored record, checking its schema version. */
export function parseRecord(json: string): ExecutionRecord {
  const record = JSON.parse(json) as ExecutionRecord;
  if (record.v !== RECORD_VERSION) throw new RecordVersionError(record.v, RECORD_VERSION);
  return record;
}
