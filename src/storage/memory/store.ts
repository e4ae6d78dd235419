import { RecordTooLargeError, RecordVersionError } from '../../errors.js';
import { RECORD_VERSION, type ExecutionFilter, type ExecutionRecord, type IdempotencyClaim, type Store } from '../../engine/ports/store.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Largest serialized record accepted, in bytes. Default 512 KiB. */
  readonly maxRecordBytes?: number;
}

/**
 * The embedded store: execution records kept as JSON strings in this process, so what is
 * stored is exactly what the Redis store would store (JSON-safe, size-checked, versioned).
 */
export class MemoryStore implements Store {
  readonly #records = new Map<string, { json: string; createdAt: number; reactor: string; status: string }>();
  readonly #claims = new Map<string, string>();
  readonly #maxBytes: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxBytes = options.maxRecordBytes ?? 512 * 1024;
  }

  async save(record: ExecutionRecord): Promise<void> {
    const json = JSON.stringify(record);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.#maxBytes) throw new RecordTooLargeError(record.id, bytes, this.#maxBytes);
    this.#records.set(record.id, { json, createdAt: record.createdAt, reactor: record.reactor, status: record.status });
  }

  async get(id: string): Promise<ExecutionRecord | undefined> {
    const entry = this.#records.get(id);
    return entry === undefined ? undefined : parseRecord(entry.json);
  }

  async list(filter: ExecutionFilter = {}): Promise<{ readonly records: readonly ExecutionRecord[]; readonly cursor?: string }> {
    const limit = filter.limit ?? 50;
    const offset = filter.cursor === undefined ? 0 : Number(filter.cursor);
    const matching = [...this.#records.values()]
      .filter((e) => (filter.reactor === undefined || e.reactor === filter.reactor) && (filter.status === undefined || e.status === filter.status))
      .reverse()
      .sort((a, b) => b.createdAt - a.createdAt);
    const page = matching.slice(offset, offset + limit).map((e) => parseRecord(e.json));
    return offset + limit < matching.length ? { records: page, cursor: String(offset + limit) } : { records: page };
  }

  async claimIdempotency(reactor: string, key: string, executionId: string): Promise<IdempotencyClaim> {
    const id = `${reactor}\u0000${key}`;
    const existing = this.#claims.get(id);
    if (existing === executionId) return { claimed: true };
    if (existing !== undefined) return { claimed: false, executionId: existing };
    this.#claims.set(id, executionId);
    return { claimed: true };
  }
}

/** Parses a stored record, checking its schema version. */
export function parseRecord(json: string): ExecutionRecord {
  const record = JSON.parse(json) as ExecutionRecord;
  if (record.v !== RECORD_VERSION) throw new RecordVersionError(record.v, RECORD_VERSION);
  return record;
}
