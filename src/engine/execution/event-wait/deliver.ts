/**
 * Resuming `.waitForEvent` steps with a sent event (decision 149): `deliverEvent` resumes one
 * registered wait — the record re-read, the match checked (name, receipt at or after the wait's
 * `since`, match key, `match`), the resume claimed (one winner among concurrent deliveries), the
 * payload written under the execution's liveness lock, the run handed to a worker (inline in
 * this process without a queue) — and `recheckParked` closes the window between a wait's
 * registration and its park: once the park is written it reads the event log for events received
 * since the registration and delivers the first that matches.
 *
 * @module
 */
import { findEventWait } from '../../../dsl/wait-for-event-nodes.js';
import type { AnyReactorDefinition, WaitForEventNode } from '../../../dsl/definition.js';
import type { Logger } from '../../../dsl/context.js';
import { messageOf } from '../../../errors.js';
import type { EventLog, StoredEvent } from '../../../ports/event-log.js';
import { matchKeyOf, type EventWaits } from '../../../ports/event-waits.js';
import type { InterruptClaims } from '../../../ports/interrupt-claims.js';
import { TERMINAL_STATUSES, type ExecutionRecord, type InterruptWait } from '../../../ports/store.js';
import { versionFor } from '../../model/versions.js';
import type { EventNotices } from '../../model/event-notices.js';
import {
  continueInline,
  prepareWorker,
  withLiveness,
  type Announce,
  type ContinueDeps,
} from '../interrupt/continue.js';
import { discardTimeoutJobs } from '../interrupt/pause.js';

/** How long a won resume claim stops other deliveries before the payload is in the record. */
const CLAIM_TTL_MS = 60_000;
/** Tries of a delivery whose execution's liveness lock stays busy (its own job finishing, another resume running). */
const BUSY_TRIES = 30;
/** Events one page of the re-check reads. */
const RECHECK_PAGE = 100;
/** Reads of the record, 100 ms apart, the re-check waits for a park to reach the store. */
const PARK_TRIES = 50;

/** What delivering events to waits needs from the engine. */
export interface DeliverDeps extends ContinueDeps {
  readonly claims: InterruptClaims | undefined;
  readonly registry: ReadonlyMap<string, AnyReactorDefinition>;
  readonly versions?: ReadonlyMap<string, AnyReactorDefinition>;
  readonly index: EventWaits | undefined;
  readonly log: EventLog | undefined;
  readonly logger: Logger;
  /** Tracks work that goes on after the call returns (an inline continuation without a queue). */
  readonly detach: (work: Promise<unknown>) => void;
  /** Where an `event.resumed` notice goes. */
  readonly notices?: EventNotices | undefined;
}

/**
 * What a delivery did: `resumed` the wait; `taken` (another delivery won its claim); `not-parked`
 * (the execution has not written its park yet: its re-check will see the event); `no-match`
 * (the event does not match the wait, arrived before it, or after its timeout); `not-waiting` (the
 * execution no longer waits there: its registration is dropped); `busy` (its liveness lock stayed
 * busy throughout).
 */
export type DeliveryOutcome = 'resumed' | 'taken' | 'not-parked' | 'no-match' | 'not-waiting' | 'busy';

/** One registered wait: the execution and the step path. */
export interface WaitTarget {
  readonly executionId: string;
  readonly step: string;
  /** The match key it is registered under, when known (a lookup's): a stale registration is dropped by it. */
  readonly matchKey?: string | undefined;
}

/** True when `event` matches `wait` of `node`: its name, received at or after the wait's `since`, its match key, then `match`. */
export function eventMatches(
  node: WaitForEventNode,
  wait: InterruptWait,
  event: StoredEvent,
  logger?: Logger,
): boolean {
  const state = wait.event;
  if (state === undefined || event.name !== state.name || event.receivedAt < state.since) return false;
  if (matchKeyOf(node.wait.matchOn, event.payload) !== state.matchKey) return false;
  const match = node.wait.match as ((event: unknown, args: unknown) => unknown) | undefined;
  if (match === undefined) return true;
  try {
    return match(event.payload, state.args) === true;
  } catch (error) {
    logger?.warn(
      { step: wait.step, eventId: event.id, error: messageOf(error) },
      `waitForEvent "${wait.step}": match threw; the event does not match`,
    );
    return false;
  }
}

/** Resumes the wait `target` with `event` when it matches; see {@link DeliveryOutcome}. */
export async function deliverEvent(
  deps: DeliverDeps,
  target: WaitTarget,
  event: StoredEvent,
): Promise<DeliveryOutcome> {
  const { executionId, step } = target;
  for (let attempt = 1; ; attempt++) {
    const found = await locate(deps, target, event.name);
    if (found.kind !== 'found') {
      if (found.kind === 'not-waiting') await unregister(deps, target, event, found.matchKey);
      return found.kind;
    }
    const { reactor, wait, node } = found;
    if (!eventMatches(node, wait, event, deps.logger)) return 'no-match';
    if (wait.timeoutAt !== undefined && deps.clock.now() >= wait.timeoutAt) return 'no-match'; // its timeout acts
    const claims = deps.claims!;
    const claimant = `${executionId}:${event.id}:${crypto.randomUUID()}`;
    const claim = await claims.claimResume(executionId, step, claimant, CLAIM_TTL_MS);
    if (!claim.claimed) return 'taken';
    const announce: Announce = (state, mode) =>
      state.emit({ type: 'wait.resumed', step, event: event.name, eventId: event.id, mode });
    let written = false;
    let released = false;
    // Given back before the liveness lock: a job can park the execution only once the claim is free,
    // so the re-check after that park never finds this delivery's claim in its way.
    const giveBack = async (): Promise<void> => {
      released = true;
      await claims.releaseResume(executionId, step, claimant).catch(() => undefined);
    };
    let outcome;
    try {
      outcome = await withLiveness(deps, executionId, async () => {
        const fresh = await deps.store.get(executionId);
        const current = fresh?.interrupts?.find((w) => w.step === step);
        if (!fresh || TERMINAL_STATUSES.has(fresh.status) || !current?.event || current.resumedAt !== undefined) {
          await giveBack();
          return { gone: true } as const;
        }
        // Still open, but the run goes on (another wait of it was resumed): its next park re-checks the log.
        if (fresh.status !== 'paused' || fresh.pausedOn) {
          await giveBack();
          return { running: true } as const;
        }
        const now = deps.clock.now();
        const resumed: ExecutionRecord = {
          ...fresh,
          interrupts: (fresh.interrupts ?? []).map((w) =>
            w === current
              ? { ...w, payload: event.payload, resumedAt: now, event: { ...current.event!, eventId: event.id } }
              : w,
          ),
        };
        if (deps.queue) {
          const worker = await prepareWorker(deps, reactor, resumed, step, 'resume', announce);
          written = true;
          return { worker } as const;
        }
        await deps.store.save({ ...resumed, status: 'running', updatedAt: now }); // the payload is durable before anything runs
        written = true;
        return { next: resumed } as const;
      });
    } finally {
      if (!written && !released) await claims.releaseResume(executionId, step, claimant).catch(() => undefined);
    }
    if (outcome === undefined) {
      if (attempt >= BUSY_TRIES) {
        deps.logger.warn(
          { executionId, step, eventId: event.id },
          `waitForEvent "${step}": the execution stayed busy; event ${event.id} was not delivered to it`,
        );
        return 'busy';
      }
      await deps.clock.sleep(Math.min(50 * attempt, 500));
      continue;
    }
    if ('gone' in outcome) return 'not-waiting';
    if ('running' in outcome) return 'not-parked';
    await unregister(deps, target, event, wait.event!.matchKey);
    await discardTimeoutJobs(deps.queue, executionId, [wait]); // its timeout is moot (decision 160)
    await deps.log?.addEffect(event.id, 'resumed', executionId).catch(() => undefined);
    deps.notices?.emit({
      type: 'event.resumed',
      eventId: event.id,
      name: event.name,
      executionId,
      step,
      at: deps.clock.now(),
    });
    if ('worker' in outcome)
      await outcome.worker.enqueue(); // off the liveness lock, so a worker can take it at once
    else deps.detach(continueInline(deps, reactor, outcome.next, step, announce));
    return 'resumed';
  }
}

type Located =
  | {
      readonly kind: 'found';
      readonly reactor: AnyReactorDefinition;
      readonly wait: InterruptWait;
      readonly node: WaitForEventNode;
    }
  | { readonly kind: 'not-waiting'; readonly matchKey: string | undefined }
  | { readonly kind: 'not-parked' };

/** The execution's open wait at `target.step` for `name`, if it is parked on it. */
async function locate(deps: DeliverDeps, target: WaitTarget, name: string): Promise<Located> {
  const gone = (matchKey?: string): Located => ({ kind: 'not-waiting', matchKey });
  if (deps.claims === undefined) {
    deps.logger.warn(
      { executionId: target.executionId },
      'an event cannot resume a wait on an engine without interrupt claims (createEngine({ interruptClaims }))',
    );
    return { kind: 'not-parked' };
  }
  const stored = await deps.store.get(target.executionId);
  if (!stored || TERMINAL_STATUSES.has(stored.status)) return gone(waitOf(stored, target.step)?.event?.matchKey);
  const registered = deps.registry.get(stored.reactor);
  if (!registered) {
    deps.logger.warn(
      { executionId: target.executionId, reactor: stored.reactor },
      `an event for execution ${target.executionId} cannot be delivered here: reactor "${stored.reactor}" is not registered with this engine`,
    );
    return { kind: 'not-parked' };
  }
  let reactor: AnyReactorDefinition;
  let record: ExecutionRecord;
  try {
    ({ reactor, record } = versionFor(stored, registered, deps.versions, 'waitForEvent'));
  } catch {
    return { kind: 'not-parked' }; // its definition is not here: a process that has it delivers
  }
  const wait = waitOf(record, target.step);
  // Not in the record yet: registered, its park not written (the re-check after the park delivers).
  if (!wait?.event || wait.event.name !== name) return { kind: 'not-parked' };
  if (wait.resumedAt !== undefined) return gone(wait.event.matchKey);
  if (record.status !== 'paused' || record.pausedOn) return { kind: 'not-parked' };
  const node = findEventWait(reactor, target.step);
  if (!node) return gone(wait.event.matchKey);
  return { kind: 'found', reactor, wait, node };
}

/**
 * Drops the registrations of `record`'s open event waits: called for every terminal record (an
 * execution cancelled, failed or finished while it waited), so the index keeps no leftovers of it.
 */
export async function dropEventWaits(index: EventWaits | undefined, record: ExecutionRecord): Promise<void> {
  if (index === undefined) return;
  for (const wait of record.interrupts ?? []) {
    if (wait.event === undefined || wait.resumedAt !== undefined) continue;
    await index.remove({
      event: wait.event.name,
      matchKey: wait.event.matchKey,
      kind: 'resume',
      executionId: record.id,
      ref: wait.step,
    });
  }
}

function hasOpenEventWait(record: ExecutionRecord): boolean {
  return (record.interrupts ?? []).some((w) => w.event !== undefined && w.resumedAt === undefined);
}

function waitOf(record: ExecutionRecord | undefined, step: string): InterruptWait | undefined {
  return record?.interrupts?.find((w) => w.step === step);
}

/** Drops the registration of `target` for `event` (when its match key is known). */
async function unregister(
  deps: DeliverDeps,
  target: WaitTarget,
  event: StoredEvent,
  matchKey: string | undefined,
): Promise<void> {
  const key = target.matchKey ?? matchKey;
  if (key === undefined || deps.index === undefined) return;
  await deps.index
    .remove({ event: event.name, matchKey: key, kind: 'resume', executionId: target.executionId, ref: target.step })
    .catch(() => undefined);
}

/**
 * The re-check after a park (decision 149): for each open event wait of the parked execution,
 * reads the events of its name received since its registration, oldest first, and delivers the
 * first that matches. An event sent between the registration and the park found the wait not
 * parked yet and left it to this.
 */
export async function recheckParked(deps: DeliverDeps, executionId: string): Promise<void> {
  if (deps.log === undefined) return;
  let record = await deps.store.get(executionId);
  // The park may reach the store a moment after the run state took it (a write that rides with
  // the lease's release): wait for it while the wait is open and the run not finished.
  for (let tries = 0; record && record.status !== 'paused' && tries < PARK_TRIES; tries++) {
    if (TERMINAL_STATUSES.has(record.status) || !hasOpenEventWait(record)) return;
    await deps.clock.sleep(100);
    record = await deps.store.get(executionId);
  }
  if (record?.status !== 'paused') return;
  const registered = deps.registry.get(record.reactor);
  if (!registered) return;
  const { reactor } = versionFor(record, registered, deps.versions, 'waitForEvent');
  for (const wait of record.interrupts ?? []) {
    if (wait.resumedAt !== undefined || wait.event === undefined) continue;
    const node = findEventWait(reactor, wait.step);
    if (!node) continue;
    const candidates: StoredEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await deps.log.list({ name: wait.event.name, since: wait.event.since, limit: RECHECK_PAGE, cursor });
      candidates.push(...page.events.filter((e) => eventMatches(node, wait, e, deps.logger)));
      cursor = page.cursor;
    } while (cursor !== undefined);
    // Newest first in the log: the oldest match is the one that arrived first.
    for (const event of candidates.reverse()) {
      const outcome = await deliverEvent(deps, { executionId, step: wait.step }, event);
      if (outcome !== 'no-match') break;
    }
  }
}
