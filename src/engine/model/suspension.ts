/**
 * Why an execution stops without finishing: a {@link Suspension}, one kind per way of waiting,
 * carried by a node's `yield` and a graph's `yielded` outcome. Every driver of an execution
 * handles a suspension through a {@link SuspensionHandlers} map, so a new kind does not compile
 * until each of them says what it does with it (docs/decisions/110).
 *
 * @module
 */
import type { InterruptWait } from '../../ports/store.js';
import type { AsyncPendingError } from './async/pending.js';
import type { FanOutPark } from './fanout/wait.js';

/** A sleep step the execution waits at: its path and its wake time (engine clock, ms). */
export interface SleepWait {
  readonly step: string;
  readonly wakeAt: number;
}

/**
 * How an execution is suspended:
 * - `retry`: a step wants another attempt after `delayMs` (inline, a hand-off to a worker is a
 *   `retry` of 0 ms);
 * - `contention`: a step's coordination was refused (a busy key, a rate limit); the execution
 *   parks until the release wakes it;
 * - `awaitUnit`: a reader waits for an async unit; the execution parks on the unit;
 * - `fanOut`: a fan-out map's elements run (or are undone) as jobs; the execution parks on them;
 * - `pause`: interrupt steps wait for their resumes;
 * - `failurePause`: a top-level step failed for good under `onFailure: 'pause'`; the execution
 *   waits `paused` for an operator, nothing rolled back (docs/decisions/100);
 * - `sleep`: a sleep step waits until its wake time (`delayMs` from now in a worker; 0 inline,
 *   where it hands off).
 */
export type Suspension =
  | { readonly kind: 'retry'; readonly delayMs: number }
  | { readonly kind: 'contention'; readonly error: Error }
  | { readonly kind: 'awaitUnit'; readonly error: AsyncPendingError }
  | { readonly kind: 'fanOut'; readonly park: FanOutPark }
  | { readonly kind: 'pause'; readonly waits: readonly InterruptWait[] }
  | { readonly kind: 'failurePause'; readonly step: string; readonly error: Error }
  | { readonly kind: 'sleep'; readonly wait: SleepWait; readonly delayMs: number };

/** One handler per member of a `kind`-tagged union `U`, each given its own member; missing one does not compile. */
export type HandlerMap<U extends { readonly kind: string }, R> = {
  readonly [K in U['kind']]: (suspension: Extract<U, { readonly kind: K }>) => R;
};

/** What a driver does with each kind of {@link Suspension}. */
export type SuspensionHandlers<R> = HandlerMap<Suspension, R>;

/** Calls the handler of `suspension`'s kind. */
export function onSuspension<R>(suspension: Suspension, handlers: SuspensionHandlers<R>): R {
  return (handlers[suspension.kind] as (s: Suspension) => R)(suspension);
}

/** A step that failed for good under `onFailure: 'pause'`: the suspension a root frame ends with instead of a rollback. */
export type FailureWait = Extract<Suspension, { readonly kind: 'failurePause' }>;

/** A suspension and the step it comes from. */
export interface Suspended {
  readonly step: string;
  readonly suspension: Suspension;
}

/** The rank of each kind when several steps of a frame suspend: a pause wins over parks, a park over delayed work. */
const RANK: { readonly [K in Suspension['kind']]: number } = {
  failurePause: 3, // only a root frame ends with it, instead of rolling back
  pause: 2,
  contention: 1,
  awaitUnit: 1,
  fanOut: 1,
  retry: 0,
  sleep: 0,
};

/** How long a suspension asks to wait before the execution runs again (0 for a park or a pause). */
export function delayOf(suspension: Suspension): number {
  return suspension.kind === 'retry' || suspension.kind === 'sleep' ? suspension.delayMs : 0;
}

/**
 * The suspension a frame ends with when `next` arrives after `current`: pauses join (every
 * interrupt waits; the first one's step names them), a higher rank wins, and within one rank
 * the soonest delay wins (the first on a tie).
 */
export function firstSuspension(current: Suspended | undefined, next: Suspended): Suspended {
  if (current === undefined) return next;
  const [was, now] = [current.suspension, next.suspension];
  if (was.kind === 'pause' && now.kind === 'pause')
    return { step: current.step, suspension: { kind: 'pause', waits: [...was.waits, ...now.waits] } };
  if (RANK[now.kind] !== RANK[was.kind]) return RANK[now.kind] > RANK[was.kind] ? next : current;
  return delayOf(now) < delayOf(was) ? next : current;
}
