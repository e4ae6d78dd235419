/**
 * The Redis Store: each execution record is one JSON string with a TTL; index ZSETs (all, per
 * reactor, per status, per tag key=value; score = `createdAt`) serve `list`. The scripts that
 * write a record keep them: a status change moves the record between status indexes in the same
 * step. Index entries whose record expired are dropped when `list` meets them (and among an
 * index's oldest entries at a listing's first page); the index keys themselves expire when
 * nothing was indexed in them for a TTL (docs/decisions/103).
 *
 * @module
 */
import type { RedisConnection } from './connection.js';
import { LeaseLostError, RecordVersionError } from '../../errors.js';
import type { Claim, InterruptClaims } from '../../ports/interrupt-claims.js';
import type { JobEnterRequest, JobEnterResult, JobLeases } from '../../ports/job-lease.js';
import {
  RECORD_VERSION,
  type ExecutionFilter,
  type ExecutionRecord,
  type IdempotencyClaim,
  type Store,
} from '../../ports/store.js';
import { toHolder } from './coordinator/holder.js';
import { layoutOf } from './connection.js';
import { RedisKeys } from './keys.js';
import { runCommand, runScript, settleAfterOutage } from './script.js';
import { scripts, type JobEnterReply } from './scripts.js';
import {
  DEFAULT_LIST_PAGE,
  decodeListCursor,
  encodeListCursor,
  hasTags,
  isAfter,
  newestFirst,
  type ListPosition,
} from '../list-cursor.js';
import {
  DEFAULT_MAX_MAP_STATE_BYTES,
  joinRecord,
  splitRecord,
  type MapPartWrite,
  type SplitRecord,
} from '../map-parts.js';
import { forgetOldest } from '../../ports/bounded-memo.js';
import { positiveInteger } from '../positive-integer.js';
import { limitedRecordJson } from '../record-json.js';

/** Default TTL of execution records and idempotency claims: 7 days. */
export const DEFAULT_RECORD_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * The TTL `recordTtlMs: Infinity` stands for on Redis: 100 years, so records are kept (every
 * script keeps one TTL rule; docs/decisions/104).
 */
export const RETAIN_FOREVER_TTL_MS = 100 * 365 * 24 * 60 * 60 * 1000;

/** The Redis TTL of a `recordTtlMs` option: the value, or {@link RETAIN_FOREVER_TTL_MS} for `Infinity`. */
export function redisRecordTtl(recordTtlMs: number | undefined): number {
  return recordTtlMs === Infinity ? RETAIN_FOREVER_TTL_MS : (recordTtlMs ?? DEFAULT_RECORD_TTL_MS);
}
/** Default size limit of one serialized record: 512 KiB. */
export const DEFAULT_MAX_RECORD_BYTES = 512 * 1024;
/**
 * On a cluster, how old an idempotency claim without its winner's record must be before another
 * execution takes it over (docs/decisions/091): the winner writes its record one round trip
 * after its claim, so only a winner that died in between leaves one this old.
 */
export const CLAIM_REPAIR_MS = 10_000;

/** A record found by a listing, with its index score (its `createdAt`). */
interface Listed {
  readonly record: ExecutionRecord;
  readonly createdAt: number;
  readonly id: string;
}

const SCAN_BATCH = 100;
/** How many of an index's entries older than one TTL a listing checks (and drops when their record is gone), per index read. */
const PRUNE_BATCH = 100;

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  readonly redis: RedisConnection;
  /** Key prefix (default `rx`); ignored when `keys` is given. */
  readonly prefix?: string;
  /** A shared key builder. */
  readonly keys?: RedisKeys;
  /**
   * TTL of records and idempotency claims, refreshed on every save, in ms: a positive integer, or
   * `Infinity` to keep records ({@link RETAIN_FOREVER_TTL_MS}). Default 7 days.
   */
  readonly recordTtlMs?: number;
  /** Largest serialized record accepted, in bytes. Default 512 KiB. */
  readonly maxRecordBytes?: number;
  /** Largest serialized element states of one large map (kept apart from the record), in bytes. Default 64 MiB. */
  readonly maxMapStateBytes?: number;
}

/**
 * {@link Store} over Redis (ioredis). It also answers {@link JobLeases} in one script each: the
 * liveness lock it takes and releases is the coordinator's lock (same keys, same hash), so a
 * backend whose store and coordinator share a connection and a prefix passes it to the engine.
 */
export class RedisStore implements Store, InterruptClaims, JobLeases {
  /** The connection (never closed by the store). */
  readonly redis: RedisConnection;
  /** The key builder. */
  readonly keys: RedisKeys;
  /** TTL of records and claims in ms. */
  readonly recordTtlMs: number;
  /** Size limit of one record in bytes. */
  readonly maxRecordBytes: number;
  /** Size limit of one large map's element states (kept apart from the record) in bytes. */
  readonly maxMapStateBytes: number;

  constructor(options: RedisStoreOptions) {
    this.redis = options.redis;
    this.keys = options.keys ?? new RedisKeys(options.prefix, layoutOf(options.redis));
    this.recordTtlMs = redisRecordTtl(options.recordTtlMs);
    this.maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.maxMapStateBytes = options.maxMapStateBytes ?? DEFAULT_MAX_MAP_STATE_BYTES;
    positiveInteger('maxMapStateBytes', this.maxMapStateBytes);
    if (!Number.isSafeInteger(this.recordTtlMs) || this.recordTtlMs < 1)
      throw new RangeError(`recordTtlMs must be a positive integer or Infinity; got ${this.recordTtlMs}`);
    positiveInteger('maxRecordBytes', this.maxRecordBytes);
  }

  /** Records this process indexed recently, with the status they were indexed under (bounded). */
  readonly #indexed = new Map<string, string>();

  async save(record: ExecutionRecord): Promise<void> {
    const { json, parts } = this.#split(record);
    await this.#writeParts(record.id, parts);
    const ttl = this.recordTtlMs;
    if (this.#indexed.get(record.id) === record.status) {
      // A checkpoint within one status: the indexes already hold it; one command, no transaction.
      await runCommand('store-save', () => this.redis.set(this.keys.execution(record.id), json, 'PX', ttl), this.redis);
      return;
    }
    const { indexes, tags, left } = this.#indexKeys(record);
    // One script, not a MULTI of many commands: one command to build, send and parse.
    await runScript(
      this.redis,
      scripts.recordSave,
      [this.keys.execution(record.id), ...indexes, ...tags, ...left],
      [json, ttl, record.createdAt, record.id, tags.length],
    );
    this.#remember(record);
  }

  async enterJob(request: JobEnterRequest): Promise<JobEnterResult> {
    const { lease } = request;
    positiveInteger('ttlMs', lease.ttlMs);
    const { holder } = lease;
    const keys = [
      this.keys.lock(lease.key),
      this.keys.lockFence(lease.key),
      this.keys.execution(request.executionId),
      this.keys.period(request.cancel.key, request.cancel.bucket),
    ];
    const args = [holder.owner, lease.ttlMs, holder.executionId ?? '', holder.reactor ?? '', holder.step ?? ''];
    let reply: JobEnterReply;
    try {
      reply = await runScript(this.redis, scripts.jobEnter, keys, args);
    } catch (error) {
      reply = await this.#enterAfterOutage(error, keys, args, holder.owner);
    }
    if (reply.acquired) {
      const record = reply.recordJson === undefined ? undefined : await this.#joinParts(parseRecord(reply.recordJson));
      // Read under the lease just taken: the status the record is indexed under, until this job writes.
      if (record !== undefined) this.#remember(record);
      return { acquired: true, cancelRequested: reply.cancelRequested, record };
    }
    return { acquired: false, holder: toHolder(reply.holder), ttlMs: reply.ttlMs };
  }

  /**
   * A job-enter whose reply may have been lost: its owner (one delivery of a job) is unique, so
   * when the lease is held by it, the lost call took it — the record and the cancel marker are
   * read again; otherwise the call is sent again (a second send would count one more level).
   */
  #enterAfterOutage(
    error: unknown,
    keys: readonly string[],
    args: readonly (string | number)[],
    owner: string,
  ): Promise<JobEnterReply> {
    const [lockKey = '', , recordKey = '', cancelKey = ''] = keys;
    return settleAfterOutage(
      this.redis,
      'job-enter',
      error,
      async () => {
        const state = await runScript(this.redis, scripts.lockState, [lockKey], []);
        if (state?.holder.owner !== owner) return undefined;
        const [json, cancel] = await runCommand('job-enter', () =>
          Promise.all([this.redis.get(recordKey), this.redis.exists(cancelKey)]),
        );
        return { acquired: true, cancelRequested: cancel === 1, recordJson: json ?? undefined };
      },
      () => runScript(this.redis, scripts.jobEnter, keys, args),
    );
  }

  async saveAndRelease(record: ExecutionRecord, key: string, owner: string): Promise<void> {
    const { json, parts } = this.#split(record);
    await this.#writeParts(record.id, parts, { key, owner });
    const { indexes, tags, left } = this.#indexKeys(record);
    const keys = [this.keys.execution(record.id), ...indexes, this.keys.lock(key), ...tags, ...left];
    const reply = await runScript(this.redis, scripts.jobLeave, keys, [
      json,
      this.recordTtlMs,
      record.createdAt,
      record.id,
      owner,
      this.keys.lockChannel(key),
      tags.length,
    ]);
    if (!reply.written) throw new LeaseLostError(record.id, 'taken_over');
    this.#remember(record);
  }

  async saveFenced(record: ExecutionRecord, key: string, owner: string): Promise<void> {
    const { json, parts } = this.#split(record);
    await this.#writeParts(record.id, parts, { key, owner });
    const indexed = this.#indexed.get(record.id) === record.status;
    const { indexes, tags, left } = this.#indexKeys(record);
    const keys = [this.keys.execution(record.id), ...indexes, this.keys.lock(key), ...tags, ...left];
    const written = await runScript(this.redis, scripts.recordSaveFenced, keys, [
      json,
      this.recordTtlMs,
      record.createdAt,
      record.id,
      owner,
      indexed ? '0' : '1',
      tags.length,
    ]);
    if (!written) throw new LeaseLostError(record.id, 'taken_over');
    if (!indexed) this.#remember(record);
  }

  /**
   * The index keys a save of `record` writes: every record's, its reactor's and its status's;
   * one per tag; and the status indexes it leaves (the scripts take them in this order): the one
   * of the status this process last wrote or read it under under the liveness lease, else every
   * other one. A stale memo can leave an extra entry in an old status index, never miss the
   * current one; a listing checks each record's status and skips it.
   */
  #indexKeys(record: Pick<ExecutionRecord, 'id' | 'reactor' | 'status' | 'tags'>): {
    readonly indexes: readonly string[];
    readonly tags: readonly string[];
    readonly left: readonly string[];
  } {
    return {
      indexes: this.keys.executionIndexesOf(record.id, record.reactor, record.status),
      tags: this.keys.executionTagIndexesOf(record.id, record.tags),
      left: this.#leftIndexes(record.id, record.status),
    };
  }

  #leftIndexes(id: string, status: string): readonly string[] {
    const before = this.#indexed.get(id);
    if (before === undefined) return this.keys.executionStatusIndexesBesides(id, status);
    return before === status ? [] : [this.keys.executionStatusIndexOf(id, before)];
  }

  /** Revisions of large maps' element states this process wrote, by `id\u0000path` (a bounded memo, oldest dropped first). */
  readonly #partRevs = new Map<string, number>();

  /** The record's JSON and its large maps' states, each refused when larger than its limit. */
  #split(record: ExecutionRecord): SplitRecord {
    if (record.mapStates === undefined && record.mapParts === undefined)
      return { json: this.#serialize(record), parts: [] };
    return splitRecord(
      record,
      { maxRecordBytes: this.maxRecordBytes, maxMapStateBytes: this.maxMapStateBytes },
      (path) => this.#partRevs.get(`${record.id}\u0000${path}`),
    );
  }

  /**
   * Writes the large maps' states before the record that names them (a crash between the two
   * leaves newer element states under an older record: more progress, never less); with `fence`,
   * only while its owner holds the liveness lease.
   */
  async #writeParts(
    id: string,
    parts: readonly MapPartWrite[],
    fence?: { readonly key: string; readonly owner: string },
  ): Promise<void> {
    if (parts.length === 0) return;
    const keys = [
      fence === undefined ? this.keys.execution(id) : this.keys.lock(fence.key),
      ...parts.map((p) => this.keys.executionMapPart(id, p.path)),
    ];
    const args = [this.recordTtlMs, fence?.owner ?? '', ...parts.map((p) => p.json ?? '')];
    const written = await runScript(this.redis, scripts.recordPartsSave, keys, args);
    if (!written) throw new LeaseLostError(id, 'taken_over');
    for (const part of parts) {
      const memo = `${id}\u0000${part.path}`;
      this.#partRevs.delete(memo);
      this.#partRevs.set(memo, part.rev);
      forgetOldest(this.#partRevs, 10_000);
    }
  }

  /** `record` with its large maps' states read back (one more round trip, only for a record that has them). */
  async #joinParts(record: ExecutionRecord): Promise<ExecutionRecord> {
    const paths = record.mapParts;
    if (paths === undefined || paths.length === 0) return record;
    const jsons = await runCommand(
      'store-get',
      () => this.redis.mget(...paths.map((path) => this.keys.executionMapPart(record.id, path))),
      this.redis,
    );
    const byPath = new Map(paths.map((path, i) => [path, jsons[i] ?? undefined]));
    return joinRecord(record, (path) => byPath.get(path) ?? undefined);
  }

  /** The record's JSON, refused when larger than the limit. */
  #serialize(record: ExecutionRecord): string {
    return limitedRecordJson(record, this.maxRecordBytes);
  }

  /** Notes that the indexes hold `record` under its status (a bounded memo, oldest dropped first). */
  #remember(record: ExecutionRecord): void {
    this.#indexed.delete(record.id);
    this.#indexed.set(record.id, record.status);
    forgetOldest(this.#indexed, 10_000);
  }

  async get(id: string): Promise<ExecutionRecord | undefined> {
    const json = await runCommand('store-get', () => this.redis.get(this.keys.execution(id)), this.redis);
    return json === null ? undefined : this.#joinParts(parseRecord(json));
  }

  async list(
    filter: ExecutionFilter = {},
  ): Promise<{ readonly records: readonly ExecutionRecord[]; readonly cursor?: string }> {
    const limit = positiveInteger('list limit', filter.limit ?? DEFAULT_LIST_PAGE);
    const after = filter.cursor === undefined ? undefined : decodeListCursor(filter.cursor);
    // One index on a single server; on a cluster one per slot group, each read as far as one page, then merged.
    const shards = this.keys.executionIndexShards(filter);
    const pages = await Promise.all(shards.map((index) => this.#listIndex(index, filter, after, limit)));
    const found = pages.length === 1 ? (pages[0] ?? []) : pages.flat().sort(newestFirst);

    const page = found.slice(0, limit);
    const last = page[page.length - 1];
    const records = page.map((f) => f.record);
    return found.length > limit && last !== undefined ? { records, cursor: encodeListCursor(last) } : { records };
  }

  /**
   * Up to `limit + 1` records of one index key after `after`, newest first, that match the whole
   * filter (the index answers one part of it; the rest is checked on the record). Entries whose
   * record is gone (expired) are dropped from the index; then the oldest entries older than one
   * TTL are checked and dropped the same way, {@link PRUNE_BATCH} at most (docs/decisions/103).
   */
  async #listIndex(
    index: string,
    filter: ExecutionFilter,
    after: ListPosition | undefined,
    limit: number,
  ): Promise<Listed[]> {
    // Keyset: from the cursor's score down (its ties by id are skipped below), so newer records never shift a page.
    const max =
      after !== undefined
        ? filter.createdTo !== undefined && filter.createdTo <= after.createdAt
          ? `(${filter.createdTo}`
          : String(after.createdAt)
        : filter.createdTo !== undefined
          ? `(${filter.createdTo}`
          : '+inf';
    const min = filter.createdFrom === undefined ? '-inf' : String(filter.createdFrom);
    const found: Listed[] = [];
    const stale: string[] = [];
    let offset = 0;
    while (found.length <= limit) {
      const flat = await runCommand(
        'store-list',
        () => this.redis.zrevrangebyscore(index, max, min, 'WITHSCORES', 'LIMIT', offset, SCAN_BATCH),
        this.redis,
      );
      if (flat.length === 0) break;
      offset += flat.length / 2;
      const entries: { id: string; createdAt: number }[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const id = flat[i] ?? '';
        const createdAt = Number(flat[i + 1]);
        if (isAfter(createdAt, id, after)) entries.push({ id, createdAt });
      }
      if (entries.length === 0) continue;
      // One index key's entries live in its slot group, so one MGET reads their records on a cluster too.
      const jsons = await runCommand(
        'store-list',
        () => this.redis.mget(...entries.map((e) => this.keys.execution(e.id))),
        this.redis,
      );
      entries.forEach((entry, i) => {
        const json = jsons[i];
        if (json === null || json === undefined) return void stale.push(entry.id); // expired
        const record = parseRecord(json);
        // A status index follows status changes in the scripts that make them; the check is for a change between the two reads.
        const matches =
          (filter.reactor === undefined || record.reactor === filter.reactor) &&
          (filter.status === undefined || record.status === filter.status) &&
          hasTags(record.tags, filter.tags);
        if (matches && found.length <= limit) found.push({ record, createdAt: entry.createdAt, id: entry.id });
      });
    }
    if (stale.length > 0) await runCommand('store-list', () => this.redis.zrem(index, ...stale), this.redis);
    if (after === undefined) await this.#prune(index); // once per listing, at its first page
    return found;
  }

  /**
   * Drops from `index` the entries of records that expired, among its oldest ones created more
   * than one TTL ago ({@link PRUNE_BATCH} at most): a record saved within its TTL is still there,
   * so only these can be gone. Keeps an index that is written to but never read to its end from
   * growing without bound.
   */
  async #prune(index: string): Promise<void> {
    const horizon = Date.now() - this.recordTtlMs;
    if (horizon <= 0) return;
    const ids = await runCommand(
      'store-list',
      () => this.redis.zrangebyscore(index, '-inf', `(${horizon}`, 'LIMIT', 0, PRUNE_BATCH),
      this.redis,
    );
    if (ids.length === 0) return;
    const exists = await runCommand(
      'store-list',
      () => Promise.all(ids.map((id) => this.redis.exists(this.keys.execution(id)))),
      this.redis,
    );
    const gone = ids.filter((_, i) => exists[i] === 0);
    if (gone.length > 0) await runCommand('store-list', () => this.redis.zrem(index, ...gone), this.redis);
  }

  async claimIdempotency(
    reactor: string,
    key: string,
    executionId: string,
    pending?: ExecutionRecord,
  ): Promise<IdempotencyClaim> {
    const json = pending === undefined ? '' : this.#serialize(pending);
    if (this.keys.layout === 'cluster') return this.#claimApart(reactor, key, executionId, pending, json);
    const { indexes, tags, left } = this.#indexKeys({
      id: executionId,
      reactor: pending?.reactor ?? reactor,
      status: pending?.status ?? 'pending',
      ...(pending?.tags === undefined ? {} : { tags: pending.tags }),
    });
    const keys = [this.keys.idempotency(reactor, key), this.keys.execution(executionId), ...indexes, ...tags, ...left];
    return runScript(this.redis, scripts.idempotencyClaim, keys, [
      executionId,
      this.recordTtlMs,
      json,
      pending?.createdAt ?? 0,
      tags.length,
    ]);
  }

  /**
   * The cluster's idempotency claim (docs/decisions/091): the claim and the record live in two
   * slots, so the claim is taken first and the first record written right after it. A claim whose
   * winner has no record {@link CLAIM_REPAIR_MS} after it was taken (its process died in between)
   * is taken over from that winner, once.
   */
  async #claimApart(
    reactor: string,
    key: string,
    executionId: string,
    pending: ExecutionRecord | undefined,
    json: string,
  ): Promise<IdempotencyClaim> {
    const claimKey = this.keys.idempotency(reactor, key);
    const claim = (replace: string): Promise<Claim> =>
      runScript(this.redis, scripts.correlationClaim, [claimKey], [executionId, this.recordTtlMs, replace]);
    let reply = await claim('');
    if (!reply.claimed && (await this.#claimOrphaned(claimKey, reply.holder))) reply = await claim(reply.holder);
    if (!reply.claimed) return { claimed: false, executionId: reply.holder };
    if (pending !== undefined) {
      const { indexes, tags, left } = this.#indexKeys(pending);
      await runScript(
        this.redis,
        scripts.recordCreate,
        [this.keys.execution(executionId), ...indexes, ...tags, ...left],
        [json, this.recordTtlMs, pending.createdAt, executionId, tags.length],
      );
    }
    return { claimed: true };
  }

  /** Whether `holder`'s claim under `claimKey` is older than {@link CLAIM_REPAIR_MS} and its record was never written. */
  async #claimOrphaned(claimKey: string, holder: string): Promise<boolean> {
    const [left, exists] = await runCommand('idempotency-claim', () =>
      Promise.all([this.redis.pttl(claimKey), this.redis.exists(this.keys.execution(holder))]),
    );
    return exists === 0 && left > 0 && this.recordTtlMs - left >= CLAIM_REPAIR_MS;
  }

  async idempotencyHolder(reactor: string, key: string): Promise<string | undefined> {
    const holder = await runCommand(
      'idempotency-get',
      () => this.redis.get(this.keys.idempotency(reactor, key)),
      this.redis,
    );
    return holder ?? undefined;
  }

  claimCorrelation(
    correlationId: string,
    executionId: string,
    options: { readonly replace?: string } = {},
  ): Promise<Claim> {
    return runScript(
      this.redis,
      scripts.correlationClaim,
      [this.keys.correlation(correlationId)],
      [executionId, this.recordTtlMs, options.replace ?? ''],
    );
  }

  async correlation(correlationId: string): Promise<string | undefined> {
    return (
      (await runCommand('correlation-get', () => this.redis.get(this.keys.correlation(correlationId)), this.redis)) ??
      undefined
    );
  }

  async claimResume(executionId: string, step: string, claimant: string, ttlMs: number): Promise<Claim> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
      throw new RangeError(`claimResume: ttlMs must be a positive integer, got ${String(ttlMs)}`);
    const key = this.keys.resumeClaim(executionId, step);
    let set: string | null;
    try {
      set = await runCommand('resume-claim', () => this.redis.set(key, claimant, 'PX', ttlMs, 'NX'));
    } catch (error) {
      // SET NX sent again after a lost reply would find the claim taken by the lost call: read the claim first.
      const read = async (): Promise<Claim | undefined> => {
        const holder = await runCommand('resume-claim', () => this.redis.get(key));
        return holder === null ? undefined : holder === claimant ? { claimed: true } : { claimed: false, holder };
      };
      return settleAfterOutage(this.redis, 'resume-claim', error, read, async () =>
        (await runCommand('resume-claim', () => this.redis.set(key, claimant, 'PX', ttlMs, 'NX'))) === 'OK'
          ? { claimed: true }
          : ((await read()) ?? { claimed: false, holder: '' }),
      );
    }
    if (set === 'OK') return { claimed: true };
    return { claimed: false, holder: (await runCommand('resume-claim', () => this.redis.get(key), this.redis)) ?? '' };
  }

  async releaseResume(executionId: string, step: string, claimant: string): Promise<void> {
    await runScript(this.redis, scripts.resumeUnclaim, [this.keys.resumeClaim(executionId, step)], [claimant]);
  }
}

/** Parses a stored record, checking its schema version. */
function parseRecord(json: string): ExecutionRecord {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new RecordVersionError('unparseable', RECORD_VERSION);
  }
  const version = typeof value === 'object' && value !== null ? (value as { v?: unknown }).v : undefined;
  if (version !== RECORD_VERSION) throw new RecordVersionError(version, RECORD_VERSION);
  return value as ExecutionRecord;
}
