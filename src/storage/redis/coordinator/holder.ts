/**
 * A holder as Redis stores it, back to the port's `HolderInfo`.
 *
 * @module
 */
import type { HolderInfo } from '../../../ports/coordinator.js';
import type { StoredHolder } from '../scripts.js';

/** A lock holder as stored (`''` = absent) → the port's shape. */
export function toHolder(stored: StoredHolder): HolderInfo {
  return {
    owner: stored.owner,
    ...(stored.executionId === '' ? {} : { executionId: stored.executionId }),
    ...(stored.reactor === '' ? {} : { reactor: stored.reactor }),
    ...(stored.step === '' ? {} : { step: stored.step }),
  };
}

/** A semaphore holder's JSON (`i:<owner>`) → the port's shape; anything unreadable leaves the owner alone. */
export function parseHolder(json: string, owner: string): HolderInfo {
  try {
    const value = JSON.parse(json) as Partial<HolderInfo> | null;
    if (value === null || typeof value !== 'object') return { owner };
    return {
      owner,
      ...(typeof value.executionId === 'string' ? { executionId: value.executionId } : {}),
      ...(typeof value.reactor === 'string' ? { reactor: value.reactor } : {}),
      ...(typeof value.step === 'string' ? { step: value.step } : {}),
    };
  } catch {
    return { owner };
  }
}
