import { FanOutError } from '../../errors.js';
import type {
  ElementLedgerStatus,
  ElementSettlement,
  ElementView,
  FanOutLedger,
  FanOutOpen,
  LedgerSnapshot,
  SettleReply,
  UndoneReply,
} from '../../ports/fanout.js';

interface Ledger {
  readonly total: number;
  readonly batchSize: number;
  readonly atomic: boolean;
  next: number;
  settled: number;
  failed: number;
  stopped: boolean;
  wakeJob: string | undefined;
  phase: 'collect' | 'rollback';
  /** Rollback: at or above every completed element, where the scan for the next to undo starts (as `top` in Redis). */
  top: number;
  readonly statuses: ElementLedgerStatus[];
  /** The element each settlement claimed (-1: none), so a redelivered settlement claims the same. */
  readonly claims: Map<number, number>;
}

/**
 * The embedded fan-out ledger: the same transitions as the Redis scripts, in this process. Each
 * method's work is one synchronous step, so concurrent callers see them atomically.
 */
export class MemoryFanOutLedger implements FanOutLedger {
  readonly #ledgers = new Map<string, Ledger>();

  async open(mapId: string, options: FanOutOpen): Promise<{ readonly next: number; readonly created: boolean }> {
    const found = this.#ledgers.get(mapId);
    if (found) return { next: found.next, created: false };
    const next = Math.min(options.batchSize, options.total);
    const ledger: Ledger = {
      ...options,
      next,
      settled: 0,
      failed: 0,
      stopped: false,
      wakeJob: undefined,
      phase: 'collect',
      top: -1,
      statuses: Array.from({ length: options.total }, () => 'pending'),
      claims: new Map(),
    };
    this.#ledgers.set(mapId, ledger);
    return { next, created: true };
  }

  async settle(mapId: string, index: number, outcome: ElementSettlement): Promise<SettleReply> {
    const l = this.#get(mapId, index);
    const known = l.claims.get(index);
    if (known !== undefined)
      return { first: false, claim: known, done: isDone(l), wakeJob: l.wakeJob, rollback: l.phase === 'rollback' };
    l.statuses[index] = outcome;
    l.settled++;
    if (outcome === 'failed') {
      l.failed++;
      if (l.atomic) l.stopped = true;
    }
    if (l.phase === 'rollback' && outcome === 'completed') l.top = Math.max(l.top, index); // a cancel while it ran
    const claim = !l.stopped && l.phase === 'collect' && l.next < l.total ? l.next++ : -1;
    l.claims.set(index, claim);
    return { first: true, claim, done: isDone(l), wakeJob: l.wakeJob, rollback: l.phase === 'rollback' };
  }

  async register(mapId: string, wakeJob: string, phase: 'collect' | 'rollback'): Promise<LedgerSnapshot> {
    const l = this.#get(mapId);
    l.wakeJob = wakeJob === '' ? undefined : wakeJob;
    if (phase === 'rollback' && l.phase !== 'rollback') {
      l.phase = 'rollback';
      l.top = l.next - 1;
    }
    return snapshotOf(l);
  }

  async undone(mapId: string, index: number): Promise<UndoneReply> {
    const l = this.#get(mapId, index);
    if (l.statuses[index] === 'completed') l.statuses[index] = 'undone';
    const next = target(l);
    if (l.phase === 'rollback') l.top = next;
    return { target: next, wakeJob: l.wakeJob };
  }

  async snapshot(mapId: string): Promise<LedgerSnapshot | undefined> {
    const l = this.#ledgers.get(mapId);
    return l ? snapshotOf(l) : undefined;
  }

  async element(mapId: string, index: number): Promise<ElementView | undefined> {
    const l = this.#ledgers.get(mapId);
    if (!l) return undefined;
    return {
      phase: l.phase,
      stopped: l.stopped,
      status: l.statuses[index] ?? 'pending',
      target: l.phase === 'rollback' ? target(l) : -1,
    };
  }

  #get(mapId: string, index?: number): Ledger {
    const l = this.#ledgers.get(mapId);
    if (!l)
      throw new FanOutError('fan_out_unknown', `fan-out map ${mapId} has no ledger (never opened, or expired)`, {
        mapId,
      });
    if (index !== undefined && (!Number.isInteger(index) || index < 0 || index >= l.total)) {
      throw new FanOutError('fan_out_unknown', `fan-out map ${mapId} has no element ${index} (it has ${l.total})`, {
        mapId,
        index,
      });
    }
    return l;
  }
}

function isDone(l: Ledger): boolean {
  return l.settled === l.next && (l.stopped || l.next === l.total);
}

/** The highest completed element: from `top` in the rollback phase (each index scanned once per rollback), else from the end. */
function target(l: Ledger): number {
  if (l.phase !== 'rollback') return l.statuses.lastIndexOf('completed');
  return l.top < 0 ? -1 : l.statuses.lastIndexOf('completed', l.top);
}

function snapshotOf(l: Ledger): LedgerSnapshot {
  return {
    total: l.total,
    next: l.next,
    settled: l.settled,
    failed: l.failed,
    stopped: l.stopped,
    done: isDone(l),
    phase: l.phase,
    target: target(l),
    statuses: [...l.statuses],
  };
}
