/**
 * The Redis fan-out ledger: one hash per map (`keys.fanOut`), changed only by the `fanout-*`
 * scripts, so settlements from any number of workers are counted once and claim distinct
 * elements.
 *
 * @module
 */
import { layoutOf, type RedisConnection } from './connection.js';
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
import { RedisKeys } from './keys.js';
import { FanOutError } from '../../errors.js';
import { ScriptError } from './script-error.js';
import { runCommand, runScript, type ScriptArg, type ScriptDescriptor } from './script.js';
import { scripts } from './scripts.js';
import { DEFAULT_RECORD_TTL_MS } from './store.js';

/** Options of {@link RedisFanOutLedger}. */
export interface RedisFanOutLedgerOptions {
  readonly redis: RedisConnection;
  readonly keys?: RedisKeys;
  /** TTL of a ledger, refreshed on every write. Default: the records' (7 days). */
  readonly ttlMs?: number;
}

const CODES: Readonly<Record<ElementSettlement, string>> = {
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

/** Fan-out ledgers in Redis. */
export class RedisFanOutLedger implements FanOutLedger {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  readonly #ttlMs: number;

  constructor(options: RedisFanOutLedgerOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new RedisKeys(undefined, layoutOf(options.redis));
    this.#ttlMs = options.ttlMs ?? DEFAULT_RECORD_TTL_MS;
  }

  open(mapId: string, options: FanOutOpen): Promise<{ readonly next: number; readonly created: boolean }> {
    return this.#run(mapId, scripts.fanoutOpen, [
      options.total,
      options.batchSize,
      options.atomic ? 1 : 0,
      this.#ttlMs,
    ]);
  }

  settle(mapId: string, index: number, outcome: ElementSettlement): Promise<SettleReply> {
    return this.#run(mapId, scripts.fanoutSettle, [index, CODES[outcome], this.#ttlMs]);
  }

  async register(mapId: string, wakeJob: string, phase: 'collect' | 'rollback'): Promise<LedgerSnapshot> {
    return decodeLedger(await this.#run(mapId, scripts.fanoutRegister, [wakeJob, phase, this.#ttlMs]));
  }

  undone(mapId: string, index: number): Promise<UndoneReply> {
    return this.#run(mapId, scripts.fanoutUndone, [index, this.#ttlMs]);
  }

  /** Runs a ledger script; an unknown ledger or element is a {@link FanOutError}, as in memory. */
  async #run<R>(mapId: string, script: ScriptDescriptor<R>, args: readonly ScriptArg[]): Promise<R> {
    try {
      return await runScript(this.#redis, script, [this.#keys.fanOut(mapId)], args);
    } catch (error) {
      if (error instanceof ScriptError && error.details.reason === 'RX_FANOUT_UNKNOWN') {
        throw new FanOutError(
          'fan_out_unknown',
          `fan-out map ${mapId}: ${script.name} found no ledger, or no such element`,
          { mapId },
        );
      }
      throw error;
    }
  }

  async element(mapId: string, index: number): Promise<ElementView | undefined> {
    const r = await this.#run(mapId, scripts.fanoutElement, [index]);
    if (r.length === 0) return undefined;
    return {
      phase: r[0] === 'rollback' ? 'rollback' : 'collect',
      stopped: r[1] === '1',
      status: STATUSES[r[2] ?? ''] ?? 'pending',
      target: Number(r[3]),
    };
  }

  async snapshot(mapId: string): Promise<LedgerSnapshot | undefined> {
    const hash = await runCommand('fanout-snapshot', () => this.#redis.hgetall(this.#keys.fanOut(mapId)), this.#redis);
    return hash['total'] === undefined ? undefined : decodeLedger(Object.entries(hash).flat());
  }
}

/** Reads a flat HGETALL reply of a ledger hash. */
function decodeLedger(flat: readonly string[]): LedgerSnapshot {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
  const num = (name: string): number => Number(fields.get(name) ?? '0');
  const total = num('total');
  const statuses = Array.from(
    { length: total },
    (_, i): ElementLedgerStatus => STATUSES[fields.get(`s:${i}`) ?? ''] ?? 'pending',
  );
  const next = num('next');
  const settled = num('settled');
  const stopped = fields.get('stopped') === '1';
  return {
    total,
    next,
    settled,
    failed: num('failed'),
    stopped,
    done: settled === next && (stopped || next === total),
    phase: fields.get('phase') === 'rollback' ? 'rollback' : 'collect',
    target: statuses.lastIndexOf('completed'),
    statuses,
  };
}
