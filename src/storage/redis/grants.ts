/**
 * Cross-process lock grants, this process's side (docs/decisions/059): which keys it has
 * waiters offering on, the registrations it sent (so a grant naming one can bound the
 * placeholder's lease by its send time), and the grants it has taken (so a grant seen twice, by
 * its notification and by a read at a subscription's confirmation, is handed on once).
 *
 * @module
 */

/** Owner prefix of the placeholder that holds a key granted to another process until it hands it on. */
export const GRANT_PLACEHOLDER = 'rx-grant:';
/** How long a process stays queued for a grant after its last registration, by default (decision 059). */
export const REGISTRATION_WINDOW_MS = 1_000;
/** Lease of a grant to a process's placeholder, counted from the grant (decision 059). */
export const CLAIM_TTL_MS = 2_000;

/** The grant bookkeeping of one coordinator. */
export class GrantBook {
  /** This process's id in grants; '' when it takes none (`lockHandOff: false`). */
  readonly pid: string;
  /** The owner name of this process's placeholder. */
  readonly placeholder: string;
  /** How long this process stays queued for a grant after its last registration (ms). */
  readonly windowMs: number;
  #seq = 0;
  readonly #registrations = new Map<string, { readonly key: string; readonly sentAt: number }>();
  readonly #offering = new Map<string, number>();
  readonly #taken = new Map<string, bigint>();

  /**
   * @param enabled - Whether this process takes grants at all (`lockHandOff`).
   * @param windowMs - How long it stays queued after its last registration (default {@link REGISTRATION_WINDOW_MS}).
   */
  constructor(enabled: boolean, windowMs = REGISTRATION_WINDOW_MS) {
    this.pid = enabled ? crypto.randomUUID().slice(0, 12) : '';
    this.placeholder = `${GRANT_PLACEHOLDER}${this.pid}`;
    this.windowMs = windowMs;
  }

  /** True when a waiter of this process offers to take `key` (it could take a grant now). */
  offering(key: string): boolean {
    return this.#offering.has(key);
  }

  /** Counts one offering waiter on `key`; returns its withdrawal (idempotent). */
  offer(key: string): () => void {
    this.#offering.set(key, (this.#offering.get(key) ?? 0) + 1);
    let withdrawn = false;
    return () => {
      if (withdrawn) return;
      withdrawn = true;
      const left = (this.#offering.get(key) ?? 1) - 1;
      if (left > 0) this.#offering.set(key, left);
      else this.#offering.delete(key);
    };
  }

  /** A registration id for a command sent at `sentAt` (this process's monotonic ms); '' when grants are off. */
  register(key: string, sentAt: number): string {
    if (this.pid === '') return '';
    for (const [id, r] of this.#registrations)
      if (sentAt - r.sentAt > this.windowMs + CLAIM_TTL_MS) this.#registrations.delete(id);
    const id = `${++this.#seq}`;
    this.#registrations.set(id, { key, sentAt });
    return id;
  }

  /** Forgets a registration Redis did not keep. */
  forget(id: string): void {
    this.#registrations.delete(id);
  }

  /**
   * Takes the grant of `key` with `token` once: returns the earliest time (monotonic ms) its
   * placeholder lease is known to have started — the named registration's send time, or
   * `-Infinity` when unknown — or `undefined` for a grant already taken.
   */
  take(key: string, registration: string, token: string): number | undefined {
    const value = BigInt(token);
    if ((this.#taken.get(key) ?? -1n) >= value) return undefined;
    this.#taken.set(key, value);
    const known = this.#registrations.get(registration);
    this.#registrations.delete(registration);
    return known?.key === key ? known.sentAt : -Infinity;
  }

  /** Drops what is kept for `key` once this process no longer listens on it. */
  drop(key: string): void {
    this.#taken.delete(key);
  }
}
