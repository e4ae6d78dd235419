/**
 * Cancelling on an event (`reactor.cancelOn`, docs/events.md#cancelling-on-an-event,
 * docs/decisions/151, 152). An execution of a reactor that declares `cancelOn` files one
 * registration of kind `cancel` per declaration in the `EventWaits` index when it is accepted,
 * under the event's name and the match key of its input's `matchOn` values, its `ref` the
 * reactor's name; its terminal record removes them. An accepted event is looked up by its name and the match keys its payload gives
 * for the `matchOn` lists the registered definitions declare for that name — never by reading
 * executions — and each execution found is checked (not finished, its reactor declares the
 * event and the payload gives the key under that reactor's `matchOn`, `match` says true) and
 * cancelled with the reason {@link eventCancelReason}: an inline run of this process is aborted (it stops at its next step
 * boundary and rolls back, as `engine.cancel` does, without the sender waiting for it); any other
 * goes through `engine.cancel`'s path — rolled back now when queued, parked, sleeping or paused,
 * a cancel request when it runs in a worker or another process. Each cancel is recorded on the
 * event (`EventLog.addEffect(id, 'cancelled', executionId)`) and told as an `event.cancelled`
 * notice.
 *
 * @module
 */
import type { CancelOnSpec } from '../../dsl/cancel-on.js';
import type { Logger } from '../../dsl/context.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { CancelledError, ExecutionNotFoundError, ExecutionStateError, ReactorError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { EventLog, StoredEvent } from '../../ports/event-log.js';
import { matchKeyOf, type EventWaitEntry, type EventWaits } from '../../ports/event-waits.js';
import { TERMINAL_STATUSES, type ExecutionRecord, type Store } from '../../ports/store.js';
import { cancelExecution, requestCancel, type OperationsDeps } from '../execution/operations.js';
import type { EventNotices } from '../model/event-notices.js';
import type { AsyncBackground } from '../run/async/port.js';
import type { DetachedWork } from '../jobs/detached-work.js';
import type { ReactorRegistry } from './registry.js';

/** The start of every reason an event's cancel gives: `cancelled by event <name> <id>`. */
export const EVENT_CANCEL_PREFIX = 'cancelled by event ';

/** Registrations read per page of a lookup. */
const LOOKUP_PAGE = 500;

/**
 * The reason an execution cancelled by an event ends with: `cancelled by event <name> <id>`. An
 * event name holds no white space, so the name is the first word after the prefix and the id
 * the rest ({@link parseEventCancelReason}).
 */
export function eventCancelReason(name: string, eventId: string): string {
  return `${EVENT_CANCEL_PREFIX}${name} ${eventId}`;
}

/** The event named in a reason made by {@link eventCancelReason}, or undefined for any other reason. */
export function parseEventCancelReason(
  reason: string | undefined,
): { readonly name: string; readonly eventId: string } | undefined {
  if (reason === undefined || !reason.startsWith(EVENT_CANCEL_PREFIX)) return undefined;
  const rest = reason.slice(EVENT_CANCEL_PREFIX.length);
  const space = rest.indexOf(' ');
  if (space <= 0 || space === rest.length - 1) return undefined;
  return { name: rest.slice(0, space), eventId: rest.slice(space + 1) };
}

/** What cancelling on events needs of the engine. */
export interface EventCancelDeps {
  /** The index; undefined: starting a reactor that declares `cancelOn` fails with `events_unsupported`. */
  readonly waits: EventWaits | undefined;
  readonly registry: ReactorRegistry;
  readonly store: Store;
  /** `engine.cancel`'s deps (its `live` map holds this engine's inline runs). */
  readonly operations: () => OperationsDeps;
  readonly notices: EventNotices;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where the removals of ended executions' registrations are tracked until they settle (`engine.idle()`). */
  readonly detached: DetachedWork;
}

/** One execution an event may cancel: its reactor, the key it was found under, and when it was filed (the backend's clock). */
interface Candidate {
  readonly executionId: string;
  readonly reactor: string;
  readonly matchKey: string;
  readonly since: number;
}

/**
 * How long a registration whose execution has no record is taken for one about to be written
 * (registered before its first record) rather than a leftover of an expired record.
 */
export const UNWRITTEN_GRACE_MS = 60_000;

/** The registrations and cancels of one engine. */
export class EventCancels {
  readonly #deps: EventCancelDeps;

  /** `deps`: the index, the registry, the store, `engine.cancel`'s deps and where notices go. */
  constructor(deps: EventCancelDeps) {
    this.#deps = deps;
  }

  /**
   * Files the registrations of an accepted execution of `reactor` (none when it declares no
   * `cancelOn`), before its first record is written: an event accepted from then on finds it.
   *
   * @throws ReactorError `events_unsupported` when it declares `cancelOn` and the engine has no index.
   */
  async register(reactor: AnyReactorDefinition, executionId: string, input: unknown): Promise<void> {
    if (reactor.cancelOn.length === 0) return;
    const waits = this.#deps.waits;
    if (waits === undefined)
      throw new ReactorError(
        'events_unsupported',
        `reactor "${reactor.name}" declares cancelOn, which needs an event-wait index: a runtime over a backend that has one, or createEngine({ eventWaits })`,
        { details: { operation: 'cancelOn' } },
      );
    await Promise.all(entriesOf(reactor.name, reactor.cancelOn, executionId, input).map((entry) => waits.add(entry)));
  }

  /**
   * Removes the registrations of an execution that ended (its terminal record); without a wait
   * for the removal, which a failure only logs (a leftover is dropped when an event finds it).
   */
  settled(record: ExecutionRecord): void {
    const waits = this.#deps.waits;
    const specs = this.#deps.registry.byName.get(record.reactor)?.cancelOn;
    if (waits === undefined || specs === undefined || specs.length === 0) return;
    for (const entry of entriesOf(record.reactor, specs, record.id, record.input))
      this.#deps.detached.detach(
        waits.remove(entry).then(() => undefined),
        (error) =>
          this.#deps.logger.warn(
            { err: error, executionId: record.id, event: entry.event },
            'removing a cancelOn registration failed; the next matching event drops it',
          ),
      );
  }

  /**
   * Cancels the executions `event` matches (an accepted event: a duplicate cancels nothing). A
   * failure to cancel one is logged and does not stop the others; the event stays accepted.
   */
  async cancelFor(log: EventLog, event: StoredEvent): Promise<void> {
    const waits = this.#deps.waits;
    if (waits === undefined) return;
    for (const candidate of await this.#candidates(waits, event)) {
      try {
        await this.#cancelOne(waits, log, event, candidate);
      } catch (error) {
        this.#deps.logger.warn(
          { err: error, executionId: candidate.executionId, eventId: event.id, event: event.name },
          'cancelling an execution on an event failed',
        );
      }
    }
  }

  /** The registrations filed under the event's name and each match key its payload gives, each execution once. */
  async #candidates(waits: EventWaits, event: StoredEvent): Promise<Candidate[]> {
    const keys = new Set<string>();
    for (const reactor of this.#deps.registry.byFingerprint.values())
      for (const spec of reactor.cancelOn)
        if (spec.event === event.name) keys.add(matchKeyOf(spec.matchOn, event.payload));
    const found = new Map<string, Candidate>();
    for (const matchKey of keys) {
      let after: string | undefined;
      do {
        const page = await waits.lookup({ event: event.name, matchKey }, 'cancel', {
          limit: LOOKUP_PAGE,
          ...(after === undefined ? {} : { after }),
        });
        for (const wait of page.waits)
          if (!found.has(wait.executionId))
            found.set(wait.executionId, {
              executionId: wait.executionId,
              reactor: wait.ref,
              matchKey,
              since: wait.since,
            });
        after = page.cursor;
      } while (after !== undefined);
    }
    return [...found.values()];
  }

  async #cancelOne(waits: EventWaits, log: EventLog, event: StoredEvent, candidate: Candidate): Promise<void> {
    const { executionId, matchKey, reactor } = candidate;
    const record = await this.#deps.store.get(executionId);
    const entry: EventWaitEntry = { event: event.name, matchKey, kind: 'cancel', executionId, ref: reactor };
    // Finished, or without a record long after it registered (expired): a leftover, dropped on sight.
    const leftover =
      record === undefined
        ? event.receivedAt - candidate.since > UNWRITTEN_GRACE_MS
        : TERMINAL_STATUSES.has(record.status);
    if (leftover) {
      await waits.remove(entry);
      return;
    }
    const spec = this.#deps.registry.byName.get(reactor)?.cancelOn.find((s) => s.event === event.name);
    // Another reactor's declaration gave the same key, or this one no longer declares the event.
    if (spec === undefined || matchKeyOf(spec.matchOn, event.payload) !== matchKey) return;
    const reason = eventCancelReason(event.name, event.id);
    let outcome: 'cancelled' | 'requested' | undefined;
    if (record === undefined) {
      // Registered, its first record not written yet: it is being accepted (decision 152). Its
      // input cannot be read, so a declaration with `match` passes it over.
      if (spec.match !== undefined) return;
      outcome = await this.#cancelUnwritten(executionId, reason);
    } else {
      if (!matches(spec, event.payload, record.input)) return;
      outcome = await this.#cancel(executionId, reason);
    }
    if (outcome === undefined) return;
    await log.addEffect(event.id, 'cancelled', executionId);
    this.#deps.notices.emit({
      type: 'event.cancelled',
      eventId: event.id,
      name: event.name,
      executionId,
      reactor,
      outcome,
      at: this.#deps.clock.now(),
    });
  }

  /**
   * An execution registered but without a record yet: an inline run of this engine is aborted; any
   * other is asked through the cancel marker, which the worker that takes its first job reads.
   */
  async #cancelUnwritten(executionId: string, reason: string): Promise<'cancelled' | 'requested' | undefined> {
    const operations = this.#deps.operations();
    if (operations.live.has(executionId)) return this.#cancel(executionId, reason);
    if (operations.coordination.coordinator === undefined) return undefined;
    await requestCancel(operations, executionId, reason);
    return 'requested';
  }

  /**
   * Cancels one execution: an inline run of this engine aborted (never awaited: the sender may be
   * one of its steps), any other through `engine.cancel`'s path. Undefined when it finished first.
   */
  async #cancel(executionId: string, reason: string): Promise<'cancelled' | 'requested' | undefined> {
    const operations = this.#deps.operations();
    const inline = operations.live.get(executionId);
    if (inline) {
      if (inline.abort.signal.aborted) return undefined;
      inline.abort.abort(new CancelledError(executionId, reason));
      return 'requested';
    }
    try {
      const result = await cancelExecution(operations, executionId, reason);
      return result.status === 'cancelled' ? 'cancelled' : 'requested';
    } catch (error) {
      if (error instanceof ExecutionStateError || error instanceof ExecutionNotFoundError) return undefined;
      throw error;
    }
  }
}

/**
 * `background` whose `startChild` first files the `cancelOn` registrations of the `asyncReactor`
 * child it starts, before the child's record (decision 152). A redelivered dispatcher files them
 * again, which changes nothing.
 */
export function registeringChildren(background: AsyncBackground, cancels: EventCancels): AsyncBackground {
  return {
    store: background.store,
    queue: background.queue,
    coordinator: background.coordinator,
    startChild: async (child, start) => {
      await cancels.register(child, start.childId, start.input);
      return background.startChild(child, start);
    },
  };
}

/** The registrations of one execution: one per declaration, under the key its input gives, its ref the reactor's name. */
function entriesOf(
  reactor: string,
  specs: readonly CancelOnSpec[],
  executionId: string,
  input: unknown,
): EventWaitEntry[] {
  return specs.map((spec) => ({
    event: spec.event,
    matchKey: matchKeyOf(spec.matchOn, input),
    kind: 'cancel',
    executionId,
    ref: reactor,
  }));
}

/** The declaration's final check: no `match` matches; a `match` that throws does not. */
function matches(spec: CancelOnSpec, payload: unknown, input: unknown): boolean {
  if (spec.match === undefined) return true;
  try {
    return spec.match(payload, input) === true;
  } catch {
    return false;
  }
}
