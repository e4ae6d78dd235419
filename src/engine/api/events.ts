/**
 * `engine.send`, `engine.sendMany` and `engine.listEvents`: events checked (name, id, time,
 * payload shape and size, the declaration's schema) before anything is stored, then appended to
 * the `EventLog` port once per id; a notice for each outcome (docs/decisions/142, 143).
 *
 * @module
 */
import { eventNameProblem, isEventDeclaration, type AnyEventDeclaration } from '../../dsl/event.js';
import { validateContract } from '../../dsl/contract.js';
import { EventInvalidError, EventPayloadError, ListFilterError, ReactorError } from '../../errors.js';
import type { EventLog, StoredEvent } from '../../ports/event-log.js';
import { inputShapeIssue } from '../model/input-shape.js';
import type { EventNotices } from '../model/event-notices.js';
import type { EventCancels } from './event-cancels.js';
import type { Clock } from '../../ports/clock.js';
import type { EventListPage, EventListQuery, SendEntry, SendOptions, SendResult } from './types.js';
import { startTriggered, type TriggerDeps } from './event-triggers.js';

/** The longest event id, in UTF-16 code units. */
export const MAX_EVENT_ID_LENGTH = 256;
/** The largest payload, in bytes of its JSON text (UTF-8). */
export const MAX_EVENT_PAYLOAD_BYTES = 256 * 1024;
/** The largest page of `engine.listEvents`. */
export const MAX_EVENT_LIST_LIMIT = 1_000;
/** The page of `engine.listEvents` without a `limit`. */
export const DEFAULT_EVENT_LIST_LIMIT = 50;

/** What sending needs of the engine. */
export interface EventDeps {
  /** The log; undefined: sending and listing fail with `events_unsupported`. */
  readonly events: EventLog | undefined;
  readonly notices: EventNotices;
  readonly clock: Clock;
  /** A new event id, for an event sent without one. */
  readonly newId: () => string;
  /** Starts on events (`.on`); absent: an event starts nothing. */
  readonly triggers?: TriggerDeps | undefined;
  /** The executions an accepted event cancels (`cancelOn`); undefined: none. */
  readonly cancels?: EventCancels | undefined;
  /** Resumes the executions waiting for an appended event (`execution/event-wait/match.ts`); absent: none are. */
  readonly resumeWaits?: ((event: StoredEvent) => Promise<unknown>) | undefined;
}

/** An event checked and ready to append. */
interface Checked {
  readonly id: string;
  readonly name: string;
  readonly payload: unknown;
  readonly ts: number | undefined;
}

/** `engine.send`: checks the event, then appends it once per id. */
export async function sendEvent(
  deps: EventDeps,
  target: AnyEventDeclaration | string,
  payload: unknown,
  options?: SendOptions,
): Promise<SendResult> {
  const log = needLog(deps, 'send');
  const checked = await checkEvent(deps, { event: target, payload, ...(options === undefined ? {} : { options }) });
  return append(deps, log, checked);
}

/** `engine.sendMany`: every entry checked first (one bad entry rejects the call, nothing stored), then each appended in order. */
export async function sendManyEvents(deps: EventDeps, entries: readonly SendEntry[]): Promise<SendResult[]> {
  const log = needLog(deps, 'sendMany');
  if (!Array.isArray(entries))
    throw new EventInvalidError({ field: 'entries', value: shown(entries) }, 'must be an array');
  const checked: Checked[] = [];
  for (const [i, entry] of entries.entries()) checked.push(await checkEvent(deps, entry as SendEntry, i));
  const results: SendResult[] = [];
  for (const event of checked) results.push(await append(deps, log, event));
  return results;
}

/** `engine.listEvents`: the query checked (`ListFilterError`), then one page of the log. */
export async function listEvents(deps: EventDeps, query: EventListQuery = {}): Promise<EventListPage> {
  const log = needLog(deps, 'listEvents');
  const fail = (field: string, value: unknown, problem: string): never => {
    throw new ListFilterError({ field, value: shown(value) }, problem);
  };
  if (typeof query !== 'object' || query === null) return fail('query', query, 'must be an object');
  const limit = query.limit ?? DEFAULT_EVENT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_EVENT_LIST_LIMIT)
    fail('limit', limit, `must be an integer from 1 to ${MAX_EVENT_LIST_LIMIT}`);
  if (query.name !== undefined && eventNameProblem(query.name) !== undefined)
    fail('name', query.name, 'must be an event name');
  if (query.cursor !== undefined && (typeof query.cursor !== 'string' || query.cursor.length === 0))
    fail('cursor', query.cursor, 'must be the cursor of a previous page');
  const since = timeOf(query.since, (problem) => fail('since', query.since, problem));
  const until = timeOf(query.until, (problem) => fail('until', query.until, problem));
  if (since !== undefined && until !== undefined && until <= since) fail('until', query.until, 'must be after since');
  const page = await log.list({ limit, name: query.name, since, until, cursor: query.cursor });
  return page.cursor === undefined ? { events: page.events } : { events: page.events, cursor: page.cursor };
}

/**
 * Appends one checked event and tells about it, then hands the kept event on: an accepted one
 * cancels the executions it matches (`cancelOn`, decision 151: a duplicate cancels nothing); then
 * the reactors it starts (`event-triggers.ts`, decision 145) and the waits it resumes (decision
 * 149), for a duplicate too — those are idempotent, so a send whose process stopped between the
 * append and them is completed by sending it again. Each match is recorded with
 * `EventLog.addEffect`.
 */
async function append(deps: EventDeps, log: EventLog, event: Checked): Promise<SendResult> {
  const outcome = await log.append(event);
  const stored: StoredEvent = outcome.event;
  const at = deps.clock.now();
  if (outcome.status === 'accepted')
    deps.notices.emit({
      type: 'event.received',
      eventId: stored.id,
      name: stored.name,
      ts: stored.ts,
      receivedAt: stored.receivedAt,
      at,
    });
  else
    deps.notices.emit({
      type: 'event.duplicate',
      eventId: stored.id,
      name: stored.name,
      receivedAt: stored.receivedAt,
      at,
    });
  if (outcome.status === 'accepted') await deps.cancels?.cancelFor(log, stored);
  const triggered = await startTriggered(deps.triggers, log, stored);
  await deps.resumeWaits?.(stored);
  return {
    status: outcome.status,
    id: stored.id,
    name: stored.name,
    ts: stored.ts,
    receivedAt: stored.receivedAt,
    started: triggered.started,
    triggerFailures: triggered.failures,
  };
}

/** One event checked: name, options, payload shape and size, then the declaration's schema. */
async function checkEvent(deps: EventDeps, entry: SendEntry, index?: number): Promise<Checked> {
  const entryOf = index === undefined ? {} : { entry: index };
  const fail = (field: string, value: unknown, problem: string): never => {
    throw new EventInvalidError({ field, value: shown(value), ...entryOf }, problem);
  };
  if (typeof entry !== 'object' || entry === null) return fail('entry', entry, 'must be an object');
  const { event, options = {} } = entry;
  const declaration = isEventDeclaration(event) ? event : undefined;
  const name = declaration?.name ?? event;
  const nameProblem = eventNameProblem(name);
  if (nameProblem !== undefined) fail('name', name, `${nameProblem} (or an event declaration)`);
  if (typeof options !== 'object' || options === null) fail('options', options, 'must be an object');
  const { id, ts } = options;
  if (id !== undefined && (typeof id !== 'string' || id.length === 0 || id.length > MAX_EVENT_ID_LENGTH))
    fail('id', id, `must be a non-empty string of at most ${MAX_EVENT_ID_LENGTH} characters`);
  const time = timeOf(ts, (problem) => fail('ts', ts instanceof Date ? 'Invalid Date' : ts, problem));
  let payload = jsonPayload(entry.payload, fail);
  if (declaration !== undefined) {
    const outcome = await validateContract(declaration.contract, payload);
    if (!outcome.ok) throw new EventPayloadError({ event: declaration.name, ...entryOf }, outcome.issues);
    payload = outcome.value;
  }
  return { id: id ?? deps.newId(), name: name as string, payload, ts: time };
}

/** `payload` when it nests at most 100 levels, is JSON as it is, and is within the size limit; else `fail`. */
function jsonPayload(payload: unknown, fail: (field: string, value: unknown, problem: string) => never): unknown {
  const shape = inputShapeIssue(payload);
  if (shape !== undefined) return fail(shape.path === '' ? 'payload' : `payload.${shape.path}`, '…', shape.message);
  let text: string | undefined;
  try {
    text = JSON.stringify(payload, (_key, value: unknown) => {
      if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol')
        throw new TypeError(`a ${typeof value} is not JSON`);
      if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`${String(value)} is not JSON`);
      return value;
    });
  } catch (error) {
    return fail('payload', typeof payload, `must be JSON: ${(error as Error).message}`);
  }
  if (text === undefined) return fail('payload', typeof payload, 'must be JSON');
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_EVENT_PAYLOAD_BYTES)
    fail('payload', `${bytes} bytes`, `must be at most ${MAX_EVENT_PAYLOAD_BYTES} bytes as JSON`);
  return JSON.parse(text) as unknown;
}

/** A time as epoch ms: a valid `Date` or a finite number >= 0; undefined when absent. */
function timeOf(value: unknown, fail: (problem: string) => never): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || !Number.isInteger(ms))
    return fail('must be a valid Date or an integer epoch time in ms');
  return ms;
}

/** A rejected value as text: a number as it prints, anything else as JSON (or its type). */
function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

/** The log, or `events_unsupported`. */
function needLog(deps: EventDeps, operation: string): EventLog {
  if (deps.events !== undefined) return deps.events;
  throw new ReactorError(
    'events_unsupported',
    `engine.${operation} needs an event log: createEngine({ events }), or a runtime over a backend that has one`,
    { details: { operation } },
  );
}
