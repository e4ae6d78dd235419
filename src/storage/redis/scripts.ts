/**
 * The descriptor of every Lua script in `lua/`, with the decoder of its reply. The registry
 * test checks that each `.lua` file has exactly one descriptor here and that the KEYS of its
 * header match `numberOfKeys`.
 *
 * @module
 */
import type { Claim } from '../../ports/interrupt-claims.js';
import type { IdempotencyClaim } from '../../ports/store.js';
import type { OrderedEnterResult, SemaphoreAcquireResult } from '../../ports/coordinator.js';
import { defineScript, replyArray, replyNumber, replyString, type ScriptDescriptor } from './script.js';

/** Holder fields as stored in a lock hash (`''` = absent). */
export interface StoredHolder {
  readonly owner: string;
  readonly executionId: string;
  readonly reactor: string;
  readonly step: string;
}

/** Decoded reply of `lock-acquire`. */
export type LockAcquireReply =
  | { readonly acquired: true; readonly token: string; readonly nesting: number }
  | { readonly acquired: false; readonly ttlMs: number; readonly holder: StoredHolder; readonly registered: boolean };

/**
 * Decoded reply of `lock-release`: `granted` (the new token) when the key went to the process
 * queued first for it; `requeued` when the releasing process queued up again behind the others
 * (decision 059).
 */
export interface LockReleaseReply {
  readonly released: boolean;
  readonly nesting: number;
  readonly granted?: string;
  readonly requeued?: boolean;
}

/** Decoded reply of `job-enter`: the record JSON (undefined when absent) and the cancel marker, or the holder. */
export type JobEnterReply =
  | { readonly acquired: true; readonly cancelRequested: boolean; readonly recordJson: string | undefined }
  | { readonly acquired: false; readonly ttlMs: number; readonly holder: StoredHolder };

/** Decoded reply of `lock-state` when held. */
export interface LockStateReply {
  readonly holder: StoredHolder;
  readonly nesting: number;
  readonly token: string;
  readonly ttlMs: number;
}

/** Decoded reply of `semaphore-state`. */
export interface SemaphoreStateReply {
  readonly limit: number | undefined;
  readonly leases: readonly {
    readonly owner: string;
    readonly nesting: number;
    readonly holderJson: string;
    readonly ttlMs: number;
  }[];
}

/** Decoded reply of `rate-take`; `index` is 0-based. */
export type RateTakeReply =
  | { readonly allowed: true; readonly charged?: false }
  | { readonly allowed: false; readonly index: number; readonly count: number; readonly retryAfterMs: number };

/** Decoded reply of `lock-transfer`: handed to the receiver (with its token), or a plain release result. */
export type LockTransferReply =
  | { readonly handedOver: true; readonly token: string }
  | { readonly handedOver: false; readonly released: boolean; readonly nesting: number };

/** Counters of an ordered lock as the scripts report them (0 = none). */
export interface OrderedCounters {
  readonly epoch: number;
  readonly issued: number;
  readonly lastCompleted: number;
  readonly inFlight: number;
  readonly firstFailed: number;
}

const flag = (reply: unknown): boolean => replyNumber(reply) === 1;

const releaseReply = (reply: unknown): { readonly released: boolean; readonly nesting: number } => {
  const [released, nesting] = replyArray(reply);
  return { released: flag(released), nesting: replyNumber(nesting) };
};

const orderedCounters = (reply: unknown): OrderedCounters => {
  const [epoch, issued, lastCompleted, inFlight, firstFailed] = replyArray(reply).map(replyNumber);
  return {
    epoch: epoch ?? 0,
    issued: issued ?? 0,
    lastCompleted: lastCompleted ?? 0,
    inFlight: inFlight ?? 0,
    firstFailed: firstFailed ?? 0,
  };
};

const storedHolder = (owner: unknown, executionId: unknown, reactor: unknown, step: unknown): StoredHolder => ({
  owner: replyString(owner),
  executionId: replyString(executionId ?? ''),
  reactor: replyString(reactor ?? ''),
  step: replyString(step ?? ''),
});

/** Every script, by camel-cased name. */
export const scripts = {
  lockAcquire: defineScript('lock-acquire', 2, (reply): LockAcquireReply => {
    const r = replyArray(reply);
    if (flag(r[0])) return { acquired: true, token: replyString(r[1]), nesting: replyNumber(r[2]) };
    return {
      acquired: false,
      ttlMs: Math.max(replyNumber(r[1]), 0),
      holder: storedHolder(r[2], r[3], r[4], r[5]),
      registered: r[6] !== undefined && flag(r[6]),
    };
  }),
  lockRelease: defineScript('lock-release', 2, (reply): LockReleaseReply => {
    const r = replyArray(reply);
    if (replyNumber(r[0]) === 2)
      return { released: true, nesting: 0, granted: replyString(r[1]), requeued: flag(r[2]) };
    return { released: flag(r[0]), nesting: replyNumber(r[1]) };
  }),
  lockTransfer: defineScript('lock-transfer', 2, (reply): LockTransferReply => {
    const r = replyArray(reply);
    if (replyNumber(r[0]) === 2) return { handedOver: true, token: replyString(r[1]) };
    return { handedOver: false, released: flag(r[0]), nesting: replyNumber(r[1]) };
  }),
  lockExtend: defineScript('lock-extend', 1, flag),
  lockState: defineScript('lock-state', 1, (reply): LockStateReply | undefined => {
    const r = replyArray(reply);
    if (r.length === 0) return undefined;
    return {
      holder: storedHolder(r[0], r[1], r[2], r[3]),
      nesting: replyNumber(r[4]),
      token: replyString(r[5]),
      ttlMs: Math.max(replyNumber(r[6]), 0),
    };
  }),

  semaphoreAcquire: defineScript('semaphore-acquire', 2, (reply): SemaphoreAcquireResult => {
    const r = replyArray(reply).map(replyNumber);
    if (r[0] === 1) return { acquired: true, nesting: r[1] ?? 0, holders: r[2] ?? 0 };
    return { acquired: false, holders: r[1] ?? 0, limit: r[2] ?? 0, retryAfterMs: r[3] ?? 0 };
  }),
  semaphoreRelease: defineScript('semaphore-release', 2, releaseReply),
  semaphoreExtend: defineScript('semaphore-extend', 2, flag),
  semaphoreState: defineScript('semaphore-state', 2, (reply): SemaphoreStateReply => {
    const r = replyArray(reply);
    const limitText = replyString(r[0]);
    const leases: SemaphoreStateReply['leases'][number][] = [];
    for (let i = 1; i + 3 < r.length; i += 4) {
      leases.push({
        owner: replyString(r[i]),
        nesting: replyNumber(r[i + 1]),
        holderJson: replyString(r[i + 2]),
        ttlMs: Math.max(replyNumber(r[i + 3]), 0),
      });
    }
    return { limit: limitText === '' ? undefined : Number(limitText), leases };
  }),

  rateTake: defineScript('rate-take', 'variadic', (reply): RateTakeReply => {
    const r = replyArray(reply).map(replyNumber);
    if (r[0] === 1) return r[1] === 0 ? { allowed: true, charged: false } : { allowed: true };
    return { allowed: false, index: (r[1] ?? 1) - 1, count: r[2] ?? 0, retryAfterMs: r[3] ?? 0 };
  }),
  rateState: defineScript('rate-state', 1, (reply) => {
    const [count, resetInMs] = replyArray(reply).map(replyNumber);
    return { count: count ?? 0, resetInMs: Math.max(resetInMs ?? 0, 0) };
  }),

  periodMark: defineScript('period-mark', 1, flag),

  orderedTicket: defineScript('ordered-ticket', 1, (reply) => {
    const [nonce, epoch] = replyArray(reply).map(replyNumber);
    return { nonce: nonce ?? 0, epoch: epoch ?? 0 };
  }),
  orderedEnter: defineScript('ordered-enter', 1, (reply): OrderedEnterResult => {
    const r = replyArray(reply);
    const outcome = replyString(r[0]);
    switch (outcome) {
      case 'entered':
        return { outcome };
      case 'passed':
        return { outcome };
      case 'wait':
        return r[2] === undefined
          ? { outcome, head: replyNumber(r[1]) }
          : { outcome, head: replyNumber(r[1]), poisonedInMs: replyNumber(r[2]) };
      case 'chain_failed':
        return { outcome, firstFailed: replyNumber(r[1]) };
      case 'stale':
        return { outcome, epoch: replyNumber(r[1]) };
      default:
        throw new TypeError(`unknown outcome ${outcome}`);
    }
  }),
  orderedHeartbeat: defineScript('ordered-heartbeat', 1, flag),
  orderedComplete: defineScript('ordered-complete', 1, orderedCounters),
  orderedSkip: defineScript('ordered-skip', 1, orderedCounters),
  orderedReset: defineScript('ordered-reset', 1, orderedCounters),
  orderedState: defineScript('ordered-state', 1, orderedCounters),

  fanoutOpen: defineScript('fanout-open', 1, (reply) => {
    const [next, created] = replyArray(reply).map(replyNumber);
    return { next: next ?? 0, created: created === 1 };
  }),
  fanoutSettle: defineScript('fanout-settle', 1, (reply) => {
    const r = replyArray(reply);
    const wake = replyString(r[3] ?? '');
    return {
      first: flag(r[0]),
      claim: replyNumber(r[1]),
      done: flag(r[2]),
      wakeJob: wake === '' ? undefined : wake,
      rollback: replyString(r[4] ?? '') === 'rollback',
    };
  }),
  fanoutElement: defineScript('fanout-element', 1, (reply) =>
    replyArray(reply).map((v) => (typeof v === 'number' ? String(v) : replyString(v))),
  ),
  fanoutRegister: defineScript('fanout-register', 1, (reply) => replyArray(reply).map(replyString)),
  fanoutUndone: defineScript('fanout-undone', 1, (reply) => {
    const r = replyArray(reply);
    const wake = replyString(r[1] ?? '');
    return { target: replyNumber(r[0]), wakeJob: wake === '' ? undefined : wake };
  }),
  recordSave: defineScript('record-save', 'variadic', flag),
  recordCreate: defineScript('record-create', 'variadic', flag),
  jobEnter: defineScript('job-enter', 4, (reply): JobEnterReply => {
    const r = replyArray(reply);
    if (!flag(r[0]))
      return { acquired: false, ttlMs: Math.max(replyNumber(r[1]), 0), holder: storedHolder(r[2], r[3], r[4], r[5]) };
    return {
      acquired: true,
      cancelRequested: flag(r[3]),
      recordJson: r[4] === null || r[4] === undefined ? undefined : replyString(r[4]),
    };
  }),
  jobLeave: defineScript('job-leave', 'variadic', (reply): { readonly written: boolean; readonly nesting: number } => {
    const [written, nesting] = replyArray(reply).map(replyNumber);
    return { written: written === 1 || written === 2, nesting: nesting ?? 0 };
  }),
  recordSaveFenced: defineScript('record-save-fenced', 'variadic', flag),
  recordPartsSave: defineScript('record-parts-save', 'variadic', flag),

  idempotencyClaim: defineScript('idempotency-claim', 'variadic', (reply): IdempotencyClaim => {
    const r = replyArray(reply);
    if (flag(r[0])) return { claimed: true };
    return { claimed: false, executionId: replyString(r[1]) };
  }),
  correlationClaim: defineScript('correlation-claim', 1, (reply): Claim => {
    const r = replyArray(reply);
    if (flag(r[0])) return { claimed: true };
    return { claimed: false, holder: replyString(r[1]) };
  }),
  resumeUnclaim: defineScript('resume-unclaim', 1, flag),
  /** Used by the wait lists (`wait-list.ts`): true when appended. */
  waitListAdd: defineScript('wait-list-add', 1, flag),
  /** Used by the event log (`event-log.ts`): the raw reply, decoded there. */
  eventAppend: defineScript('event-append', 3, replyArray),
  /** Appends events to execution streams (KEYS: one stream per execution). */
  streamAppend: defineScript('stream-append', 'variadic', replyNumber),
  /** Used by the event log: true when the event is kept (the execution is in the list now). */
  eventEffect: defineScript('event-effect', 1, flag),
  /** Used by the event-wait index: the registration's first time (server ms). */
  eventWaitAdd: defineScript('event-wait-add', 2, replyNumber),
  /** Used by the event-wait index: true when the registration was filed. */
  eventWaitRemove: defineScript('event-wait-remove', 2, flag),
  /** Used by the event-wait index: member, since pairs of one page (flat). */
  eventWaitLookup: defineScript('event-wait-lookup', 2, replyArray),
} as const satisfies Record<string, ScriptDescriptor<unknown>>;
