/**
 * {@link EventWaits} over Redis: per (event, match key), a ZSET of members (kind, execution id,
 * ref) read in member order and a HASH of their times, both under the hash tag of that pair
 * (`RedisKeys.eventWaitMembers`, `eventWaitTimes`), so each transition is one script on one slot
 * in either layout, and a lookup reads one pair's keys, never another's. `add` is
 * `event-wait-add.lua` (the server's `TIME` is `since`), `remove` is `event-wait-remove.lua`,
 * `lookup` is `event-wait-lookup.lua` (decision 148).
 *
 * @module
 */
import type { RedisConnection } from './connection.js';
import {
  checkEventWaitCursor,
  checkEventWaitLimit,
  eventWaitMember,
  EVENT_WAIT_SEPARATOR,
  type EventWait,
  type EventWaitEntry,
  type EventWaitKey,
  type EventWaitKind,
  type EventWaitLookup,
  type EventWaitPage,
  type EventWaits,
} from '../../ports/event-waits.js';
import type { RedisKeys } from './keys.js';
import { runScript } from './script.js';
import { scripts } from './scripts.js';
import { ScriptError } from './script-error.js';

/** The character after {@link EVENT_WAIT_SEPARATOR}: the exclusive bound past a kind's members. */
const PAST_SEPARATOR = String.fromCharCode(EVENT_WAIT_SEPARATOR.charCodeAt(0) + 1);

/** Options of {@link RedisEventWaits}. */
export interface RedisEventWaitsOptions {
  /** The connection (never closed by the index). */
  readonly redis: RedisConnection;
  /** The keys (prefix and layout) of the backend. */
  readonly keys: RedisKeys;
}

/** The event-wait index in Redis, shared by every process on the same prefix. */
export class RedisEventWaits implements EventWaits {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;

  constructor(options: RedisEventWaitsOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys;
  }

  async add(entry: EventWaitEntry): Promise<EventWait> {
    const since = await runScript(this.#redis, scripts.eventWaitAdd, this.#keysOf(entry), [eventWaitMember(entry)]);
    return {
      event: entry.event,
      matchKey: entry.matchKey,
      kind: entry.kind,
      executionId: entry.executionId,
      ref: entry.ref,
      since,
    };
  }

  async remove(entry: EventWaitEntry): Promise<boolean> {
    return runScript(this.#redis, scripts.eventWaitRemove, this.#keysOf(entry), [eventWaitMember(entry)]);
  }

  async lookup(key: EventWaitKey, kind: EventWaitKind, page: EventWaitLookup): Promise<EventWaitPage> {
    checkEventWaitLimit(page.limit);
    checkEventWaitCursor(kind, page.after);
    const min = page.after === undefined ? `[${kind}${EVENT_WAIT_SEPARATOR}` : `(${page.after}`;
    const flat = await runScript(this.#redis, scripts.eventWaitLookup, this.#keysOf(key), [
      min,
      `(${kind}${PAST_SEPARATOR}`,
      page.limit + 1,
    ]);
    const waits: EventWait[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const member = String(flat[i]);
      const [, executionId, ref] = member.split(EVENT_WAIT_SEPARATOR);
      if (executionId === undefined || ref === undefined)
        throw new ScriptError(
          'event-wait-lookup',
          'reply',
          `a member that is not kind, execution id and ref: ${member}`,
        );
      waits.push({ event: key.event, matchKey: key.matchKey, kind, executionId, ref, since: Number(flat[i + 1]) });
    }
    const taken = waits.slice(0, page.limit);
    const last = taken[taken.length - 1];
    return waits.length > page.limit && last !== undefined
      ? { waits: taken, cursor: eventWaitMember(last) }
      : { waits: taken };
  }

  /** The two keys of an (event, match key), in the order every script takes them. */
  #keysOf(key: EventWaitKey): string[] {
    return [this.#keys.eventWaitMembers(key.event, key.matchKey), this.#keys.eventWaitTimes(key.event, key.matchKey)];
  }
}
