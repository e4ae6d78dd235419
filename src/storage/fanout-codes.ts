/**
 * What the fan-out ledgers kept by a server (Redis, PostgreSQL) share: the one-letter code each
 * element's settlement is stored as, the status a stored code reads as, the error of a call on
 * an unknown map or element, and a snapshot from the stored counters.
 *
 * @module
 */
import { FanOutError } from '../errors.js';
import type { ElementLedgerStatus, ElementSettlement, LedgerSnapshot } from '../ports/fanout.js';

/** The stored code of each settlement. */
export const SETTLEMENT_CODES: Readonly<Record<ElementSettlement, string>> = {
  completed: 'c',
  failed: 'f',
  skipped: 's',
  not_started: 'n',
};

const STATUSES: Readonly<Record<string, ElementLedgerStatus>> = {
  c: 'completed',
  f: 'failed',
  s: 'skipped',
  n: 'not_started',
  u: 'undone',
};

/** The status a stored code reads as: `pending` for none (an element not settled yet). */
export function statusOfCode(code: string | null | undefined): ElementLedgerStatus {
  return STATUSES[code ?? ''] ?? 'pending';
}

/** The phase a stored phase reads as: `rollback`, else `collect`. */
export function phaseOf(stored: string | null | undefined): 'collect' | 'rollback' {
  return stored === 'rollback' ? 'rollback' : 'collect';
}

/** The error of a call (`operation`) on a map without a ledger, or on an element out of range. */
export function unknownLedger(mapId: string, operation: string): FanOutError {
  return new FanOutError('fan_out_unknown', `fan-out map ${mapId}: ${operation} found no ledger, or no such element`, {
    mapId,
  });
}

/** The stored counters of a ledger, and one status per element. */
export interface StoredLedger {
  readonly total: number;
  readonly next: number;
  readonly settled: number;
  readonly failed: number;
  readonly stopped: boolean;
  readonly phase: string | null | undefined;
  readonly statuses: ElementLedgerStatus[];
}

/** A ledger's snapshot: done once every dispatched element settled and nothing more will be dispatched. */
export function ledgerSnapshot(stored: StoredLedger): LedgerSnapshot {
  const { total, next, settled, stopped, statuses } = stored;
  return {
    total,
    next,
    settled,
    failed: stored.failed,
    stopped,
    done: settled === next && (stopped || next === total),
    phase: phaseOf(stored.phase),
    target: statuses.lastIndexOf('completed'),
    statuses,
  };
}
