/**
 * The FanOutLedger port: the shared, atomic bookkeeping of one fan-out map (a map whose elements
 * run as their own jobs). Each element's state lives on its own execution record; the ledger
 * holds only what must change atomically across workers: which elements were dispatched, how
 * each settled, the dispatch cursor, the atomic stop, the job that wakes the parent, and the
 * rollback cursor. Implementations: the memory ledger (embedded default), the Redis ledger
 * (one Lua script per transition) and the Postgres ledger (one SQL function per transition). All
 * pass the same contract suite.
 *
 * @module
 */

/** How an element settled, as the ledger records it. */
export type ElementSettlement =
  /** The body succeeded: the element's undo runs on rollback. */
  | 'completed'
  /** The body failed for good (compensated in its own job). */
  | 'failed'
  /** The body ran but returned skip or halt: nothing to undo. */
  | 'skipped'
  /** Never started: an atomic map stopped before the element's job began. */
  | 'not_started';

/** An element's state in the ledger: a settlement, `undone` after rollback, or `pending` (dispatched or not yet). */
export type ElementLedgerStatus = ElementSettlement | 'undone' | 'pending';

/** Options of {@link FanOutLedger.open}. */
export interface FanOutOpen {
  readonly total: number;
  /** At most this many elements in flight at once. */
  readonly batchSize: number;
  /** Stop dispatching at the first failure. */
  readonly atomic: boolean;
}

/** Answer of {@link FanOutLedger.settle}. */
export interface SettleReply {
  /** False when this index had settled before (a redelivery): nothing was counted again. */
  readonly first: boolean;
  /** The element this settlement frees a slot for (dispatch it), or -1. Stable across redeliveries. */
  readonly claim: number;
  /** Every dispatched element has settled and nothing more will be dispatched. */
  readonly done: boolean;
  /** The parent's wake job registered last, if any. */
  readonly wakeJob: string | undefined;
  /** The map is being rolled back already (the run was cancelled while this element ran). */
  readonly rollback: boolean;
}

/** What one element's job reads: {@link FanOutLedger.element}. */
export interface ElementView {
  readonly phase: 'collect' | 'rollback';
  readonly stopped: boolean;
  readonly status: ElementLedgerStatus;
  /** In the rollback phase, the highest completed element left (the one to undo now), or -1; -1 while collecting. */
  readonly target: number;
}

/** A ledger's counters. */
export interface LedgerSnapshot {
  readonly total: number;
  /** Elements dispatched so far (indexes `0 .. next-1`). */
  readonly next: number;
  readonly settled: number;
  readonly failed: number;
  /** An atomic map stopped dispatching after a failure. */
  readonly stopped: boolean;
  /** Every dispatched element settled and nothing more will be dispatched. */
  readonly done: boolean;
  /** `rollback` once the parent asked for the completed elements to be undone. */
  readonly phase: 'collect' | 'rollback';
  /** The highest completed element not undone yet (the next to undo), or -1. */
  readonly target: number;
  /** One entry per element. */
  readonly statuses: readonly ElementLedgerStatus[];
}

/** Answer of {@link FanOutLedger.undone}. */
export interface UndoneReply {
  /** The next element to undo (highest completed index left), or -1 when rollback is over. */
  readonly target: number;
  readonly wakeJob: string | undefined;
}

/** Atomic bookkeeping of fan-out maps, keyed by map id (`<parentExecutionId>/<mapStep>`). */
export interface FanOutLedger {
  /**
   * Creates the ledger of a map (idempotent: a second call changes nothing) and returns how many
   * elements are dispatched: the first `min(batchSize, total)` on creation.
   */
  open(mapId: string, options: FanOutOpen): Promise<{ readonly next: number; readonly created: boolean }>;
  /** Records how element `index` settled, once; claims the next element to dispatch. */
  settle(mapId: string, index: number, outcome: ElementSettlement): Promise<SettleReply>;
  /**
   * Registers the parent's wake job (the delayed job a settlement promotes) and, with phase
   * `rollback`, starts the rollback. Returns the counters as of the registration.
   */
  register(mapId: string, wakeJob: string, phase: 'collect' | 'rollback'): Promise<LedgerSnapshot>;
  /** Marks a completed element undone (once) and returns the next one to undo. */
  undone(mapId: string, index: number): Promise<UndoneReply>;
  /** The ledger of a map; `undefined` when it was never opened (or expired). */
  snapshot(mapId: string): Promise<LedgerSnapshot | undefined>;
  /** What element `index`'s job needs, in one cheap read; `undefined` when the ledger does not exist. */
  element(mapId: string, index: number): Promise<ElementView | undefined>;
}
