/**
 * {@link EventLog} over Redis: one hash per kept event (`RedisKeys.event`) and two index ZSETs
 * scored by receipt time (every event, and per name), all under the hash tag `{events}`, so each
 * transition is one script on one slot in either layout. `append` is `event-append.lua` (the
 * server's `TIME` is the receipt time; a kept id answers `duplicate`), `addEffect` is
 * `event-effect.lua`; `get` is one `HMGET`, `list` walks an index newest first and reads the
 * page's hashes in one pipeline, passing over ids whose hash expired (docs/decisions/142).
 *
 * @module
 */
import type { RedisConnection } from './connection.js';
import {
  EVENT_EFFECT_KINDS,
  type AppendOutcome,
  type EventEffectKind,
  type EventEffects,
  type EventFilter,
  type EventLog,
  type EventPage,
  type NewEvent,
  type StoredEvent,
} from '../../ports/event-log.js';
import { decodeListCursor, encodeListCursor, type ListPosition } from '../list-cursor.js';
import { positiveInteger } from '../positive-integer.js';
import type { RedisKeys } from './keys.js';
import { runCommand, runScript } from './script.js';
import { scripts } from './scripts.js';
import { ScriptError } from './script-error.js';

/** The hash field of each kind of effect. */
const FIELD: Readonly<Record<EventEffectKind, string>> = { started: 's', resumed: 'r', cancelled: 'c' };
/** The fields an event's hash is read with, in this order. */
const FIELDS = ['name', 'payload', 'ts', 'at', 's', 'r', 'c'] as const;

/** Options of {@link RedisEventLog}. */
export interface RedisEventLogOptions {
  /** The connection (never closed by the log). */
  readonly redis: RedisConnection;
  /** The keys (prefix and layout) of the backend. */
  readonly keys: RedisKeys;
  /** How long an event is kept after it was received, in ms (the records' Redis TTL). */
  readonly ttlMs: number;
}

/** The event log in Redis, shared by every process on the same prefix. */
export class RedisEventLog implements EventLog {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  /** How long an event is kept after it was received, in ms. */
  readonly ttlMs: number;

  /** @throws RangeError when `ttlMs` is not a positive integer. */
  constructor(options: RedisEventLogOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.ttlMs = positiveInteger('ttlMs', options.ttlMs);
  }

  async append(event: NewEvent): Promise<AppendOutcome> {
    const payload = JSON.stringify(event.payload);
    const keys = [this.#keys.event(event.id), this.#keys.eventIndex(), this.#keys.eventNameIndex(event.name)];
    const args = [event.id, event.name, payload, event.ts === undefined ? '' : event.ts, this.ttlMs];
    const reply = await runScript(this.#redis, scripts.eventAppend, keys, args);
    if (reply[0] === 1) {
      const at = Number(reply[1]);
      return {
        status: 'accepted',
        event: {
          id: event.id,
          name: event.name,
          payload: JSON.parse(payload),
          ts: event.ts ?? at,
          receivedAt: at,
          effects: effectsOf([]),
        },
      };
    }
    const kept = parseEvent(event.id, reply.slice(1));
    if (kept === undefined) throw new ScriptError('event-append', 'reply', 'a duplicate without its fields');
    return { status: 'duplicate', event: kept };
  }

  async get(id: string): Promise<StoredEvent | undefined> {
    const fields = await runCommand('event-get', () => this.#redis.hmget(this.#keys.event(id), ...FIELDS), this.#redis);
    return parseEvent(id, fields);
  }

  async addEffect(id: string, kind: EventEffectKind, executionId: string): Promise<boolean> {
    return runScript(this.#redis, scripts.eventEffect, [this.#keys.event(id)], [FIELD[kind], executionId]);
  }

  async list(filter: EventFilter): Promise<EventPage> {
    const index = filter.name === undefined ? this.#keys.eventIndex() : this.#keys.eventNameIndex(filter.name);
    const after = filter.cursor === undefined ? undefined : decodeListCursor(filter.cursor);
    const max = upperBound(filter.until, after);
    const min = filter.since === undefined ? '-inf' : String(filter.since);
    const events: StoredEvent[] = [];
    const batch = Math.min(Math.max(filter.limit + 1, 16), 1_000);
    for (let offset = 0; events.length <= filter.limit; offset += batch) {
      const flat = await runCommand(
        'event-list',
        () => this.#redis.zrevrangebyscore(index, max, min, 'WITHSCORES', 'LIMIT', offset, batch),
        this.#redis,
      );
      const ids: string[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const id = flat[i]!;
        if (after === undefined || Number(flat[i + 1]) < after.createdAt || id < after.id) ids.push(id);
      }
      events.push(...(await this.#read(ids)));
      if (flat.length < batch * 2) break;
    }
    const page = events.slice(0, filter.limit);
    const last = page[page.length - 1];
    return events.length > filter.limit && last !== undefined
      ? { events: page, cursor: encodeListCursor({ createdAt: last.receivedAt, id: last.id }) }
      : { events: page };
  }

  /** The kept events of `ids`, in that order (expired ones left out), read in one pipeline. */
  async #read(ids: readonly string[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const replies = await runCommand(
      'event-list',
      () => Promise.all(ids.map((id) => this.#redis.hmget(this.#keys.event(id), ...FIELDS))),
      this.#redis,
    );
    return replies.flatMap((fields, i) => parseEvent(ids[i]!, fields) ?? []);
  }
}

/** The highest score a page may hold: before `until` (exclusive), and not past the cursor's time (its ties are filtered by id). */
function upperBound(until: number | undefined, after: ListPosition | undefined): string {
  if (after !== undefined && (until === undefined || after.createdAt < until)) return String(after.createdAt);
  return until === undefined ? '+inf' : `(${String(until)}`;
}

/** An event from its hash fields (`FIELDS` order), or undefined when it is not kept. */
function parseEvent(id: string, fields: readonly unknown[]): StoredEvent | undefined {
  const [name, payload, ts, at, ...effects] = fields;
  if (typeof name !== 'string' || typeof payload !== 'string') return undefined;
  return {
    id,
    name,
    payload: JSON.parse(payload) as unknown,
    ts: Number(ts),
    receivedAt: Number(at),
    effects: effectsOf(effects),
  };
}

/** The effects from the `s`, `r`, `c` fields (JSON arrays of ids; absent when empty). */
function effectsOf(fields: readonly unknown[]): EventEffects {
  const lists = EVENT_EFFECT_KINDS.map((_, i) => {
    const text = fields[i];
    return typeof text === 'string' ? (JSON.parse(text) as string[]) : [];
  });
  return { started: lists[0] ?? [], resumed: lists[1] ?? [], cancelled: lists[2] ?? [] };
}
