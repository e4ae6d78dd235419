/**
 * The exclusive lock of the Postgres coordinator: reentrant holds with fencing tokens, in table
 * `coord_locks`, through `coord_lock_*`.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type {
  HolderInfo,
  LockAcquireRequest,
  LockAcquireResult,
  LockReleaseResult,
  LockState,
} from '../../../ports/coordinator.js';
import { forgetOldest } from '../../../ports/bounded-memo.js';
import { assertInteger, LostReply, toNumber, type CoordinationCalls } from './calls.js';

interface AcquireRow {
  readonly acquired: boolean;
  readonly token: string | null;
  readonly nesting: number | null;
  readonly holder_owner: string | null;
  readonly holder_execution_id: string | null;
  readonly holder_reactor: string | null;
  readonly holder_step: string | null;
  readonly ttl_ms: string | null;
}

interface StateRow {
  readonly owner: string;
  readonly execution_id: string | null;
  readonly reactor: string | null;
  readonly step: string | null;
  readonly nesting: number;
  readonly token: string;
  readonly ttl_ms: string;
}

/** Holds this process took, by key and owner, as far as it knows: bounded, oldest forgotten first. */
const KNOWN_LIMIT = 10_000;

/**
 * How long a refused acquire's mark surely lasts, from when it was sent: `coord_lock_acquire`
 * leaves a refused key wanted at least 30 s ahead of its clock; 5 s are kept for a clock that
 * runs apart from this process's.
 */
const REFUSAL_MARK_MS = 25_000;
/** The least a waiter's own mark (`coord_lock_want`) lasts, in ms. */
const WANT_MS = 60_000;
/** The longest a waiter's own mark lasts (a wait without a timeout is marked for this long). */
const WANT_MAX_MS = 86_400_000;
/** What is kept off a mark's length for a clock that runs apart from this process's, in ms. */
const MARK_SLACK_MS = 5_000;

/**
 * The lock calls. A hold expires at its deadline on the database clock; the fencing token is
 * `greatest(last + 1, clock µs)`, kept with the key's row so it grows across holders and
 * restarts. An acquire or a release is counted (a second call adds or removes one more level):
 * when its connection is lost after it was sent, the lock's state, read once Postgres answers,
 * says whether it took effect — compared with the token and nesting this process last knew of
 * the hold — and only a call that did not is sent again (docs/decisions/132).
 */
export class PostgresLocks {
  readonly #calls: CoordinationCalls;
  /** `key \0 owner` → the hold's token and nesting after this process's last acquire or release of it. */
  readonly #known = new Map<string, { readonly token: string; readonly nesting: number }>();
  /** Key → until when (`performance.now()`) a mark of this process surely keeps it wanted: bounded like {@link PostgresLocks.#known}. */
  readonly #wanted = new Map<string, number>();
  /** The `coord_lock_want` calls in flight. */
  readonly #wanting = new Set<Promise<void>>();

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /** See `Coordinator.lockAcquire`: one call. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async acquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    assertInteger('ttlMs', request.ttlMs, 1);
    const { key, holder } = request;
    const memo = `${key}\u0000${holder.owner}`;
    const before = this.#known.get(memo);
    const sentAt = performance.now();
    const send = async (): Promise<LockAcquireResult> => {
      const row = await this.#calls.one<AcquireRow>(
        'lock-acquire',
        'lock_acquire',
        [
          key,
          holder.owner,
          holder.executionId ?? '',
          holder.reactor ?? '',
          holder.step ?? '',
          request.ttlMs,
          request.unfenced === true,
        ],
        { settles: true },
      );
      if (row.acquired) return { acquired: true, token: row.token ?? '0', nesting: row.nesting ?? 1 };
      return {
        acquired: false,
        holder: toHolder(row.holder_owner ?? '', row.holder_execution_id, row.holder_reactor, row.holder_step),
        ttlMs: toNumber(row.ttl_ms),
      };
    };
    let result: LockAcquireResult;
    try {
      result = await send();
    } catch (error) {
      if (!(error instanceof LostReply)) throw error;
      // Taken by the lost call: this owner holds the key with another token (a new hold) or one
      // more level than this process knew (a re-entry).
      const settle = async (): Promise<LockAcquireResult | undefined> => {
        const now = await this.state(key);
        if (now === undefined || now.holder.owner !== holder.owner) return undefined;
        if (before !== undefined && now.token === before.token && now.nesting <= before.nesting) return undefined;
        return { acquired: true, token: now.token, nesting: now.nesting };
      };
      result = await this.#calls.settleLost(error, settle, send);
    }
    if (result.acquired) this.#remember(memo, { token: result.token, nesting: result.nesting });
    else this.#markedUntil(key, sentAt + REFUSAL_MARK_MS);
    return result;
  }

  /**
   * A wait of `timeoutMs` from now for the release of `key` begins: makes sure that release
   * notifies. A release notifies only a wanted key; a refused acquire marks it so, and so does
   * this, in the background with `coord_lock_want`, unless a mark of this process (a refusal, an
   * earlier want) covers the wait already. A free key is not marked; one that was held (it has a
   * row) may have been released before the mark, unnotified, so `freed` is called then (the
   * waiter looks again). See {@link PostgresLocks.wanting}.
   */
  want(key: string, timeoutMs: number, freed: () => void): void {
    const now = performance.now();
    if ((this.#wanted.get(key) ?? -Infinity) >= now + timeoutMs) return;
    const ms = Number.isFinite(timeoutMs)
      ? Math.min(WANT_MAX_MS, Math.max(WANT_MS, Math.ceil(timeoutMs) + MARK_SLACK_MS))
      : WANT_MAX_MS;
    const call: Promise<void> = this.#calls
      .one<{ coord_lock_want: boolean | null }>('lock-want', 'lock_want', [key, ms])
      .then(
        (row) => {
          if (row.coord_lock_want === true) this.#markedUntil(key, now + ms - MARK_SLACK_MS);
          else if (row.coord_lock_want === false) freed();
        },
        // A mark is a hint: a waiter without one wakes at its timeout.
        () => undefined,
      )
      .finally(() => this.#wanting.delete(call));
    this.#wanting.add(call);
  }

  /** Resolves once the marks {@link PostgresLocks.want} sent so far are written (or failed). */
  async wanting(): Promise<void> {
    await Promise.all([...this.#wanting]);
  }

  /** Notes that `key` surely stays wanted until `until` (`performance.now()`), forgetting the oldest beyond {@link KNOWN_LIMIT}. */
  #markedUntil(key: string, until: number): void {
    const known = this.#wanted.get(key) ?? -Infinity;
    this.#wanted.delete(key);
    this.#wanted.set(key, Math.max(known, until));
    forgetOldest(this.#wanted, KNOWN_LIMIT);
  }

  /** See `Coordinator.lockRelease`: one call; the outermost release notifies the key's waiters. */
  async release(key: string, owner: string): Promise<LockReleaseResult> {
    const memo = `${key}\u0000${owner}`;
    const before = this.#known.get(memo);
    const send = async (): Promise<LockReleaseResult> => {
      const row = await this.#calls.one<{ released: boolean; nesting: number }>(
        'lock-release',
        'lock_release',
        [key, owner],
        { settles: true },
      );
      return { released: row.released, nesting: row.nesting };
    };
    let result: LockReleaseResult;
    try {
      result = await send();
    } catch (error) {
      if (!(error instanceof LostReply)) throw error;
      // Released by the lost call: this owner no longer holds the key, or holds it one level less.
      const settle = async (): Promise<LockReleaseResult | undefined> => {
        const now = await this.state(key);
        if (now === undefined || now.holder.owner !== owner) return { released: true, nesting: 0 };
        if (before !== undefined && now.token === before.token && now.nesting < before.nesting)
          return { released: true, nesting: now.nesting };
        return undefined;
      };
      result = await this.#calls.settleLost(error, settle, send);
    }
    if (result.nesting > 0 && before !== undefined)
      this.#remember(memo, { token: before.token, nesting: result.nesting });
    else this.#known.delete(memo);
    return result;
  }

  /** Notes a hold's token and nesting, forgetting the oldest beyond {@link KNOWN_LIMIT}. */
  #remember(memo: string, hold: { readonly token: string; readonly nesting: number }): void {
    this.#known.delete(memo);
    this.#known.set(memo, hold);
    forgetOldest(this.#known, KNOWN_LIMIT);
  }

  /** See `Coordinator.lockExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async extend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertInteger('ttlMs', ttlMs, 1);
    const row = await this.#calls.one<{ coord_lock_extend: boolean }>('lock-extend', 'lock_extend', [
      key,
      owner,
      ttlMs,
    ]);
    return row.coord_lock_extend;
  }

  /** See `Coordinator.lockState`: the live hold, `undefined` when free. */
  async state(key: string): Promise<LockState | undefined> {
    const [row] = await this.#calls.rows<StateRow>('lock-state', 'lock_state', [key]);
    if (row === undefined) return undefined;
    return {
      key,
      holder: toHolder(row.owner, row.execution_id, row.reactor, row.step),
      nesting: row.nesting,
      token: row.token,
      ttlMs: toNumber(row.ttl_ms),
    };
  }
}

/** A holder as stored (NULL = absent) → the port's shape. */
function toHolder(owner: string, executionId: string | null, reactor: string | null, step: string | null): HolderInfo {
  return {
    owner,
    ...(executionId === null ? {} : { executionId }),
    ...(reactor === null ? {} : { reactor }),
    ...(step === null ? {} : { step }),
  };
}
