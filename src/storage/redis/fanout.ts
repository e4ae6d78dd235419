/**
 * The Redis fan-out ledger: one hash per map (`keys.fanOut`), changed only by the `fanout-*`
 * scripts, so settlements from any number of workers are counted once and claim distinct
 * elements.
 *
 * @module
 */
import { layoutOf, type RedisConnection } from './connection.js';
import type {
  ElementSettlement,
  ElementView,
  FanOutLedger,
  FanOutOpen,
  LedgerSnapshot,
  SettleReply,
  UndoneReply,
} from '../../ports/fanout.js';
import { RedisKeys } from './keys.js';
import { ledgerSnapshot, phaseOf, SETTLEMENT_CODES, statusOfCode, unknownLedger } from '../fanout-codes.js';
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
    return this.#run(mapId, scripts.fanoutSettle, [index, SETTLEMENT_CODES[outcome], this.#ttlMs]);
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
        throw unknownLedger(mapId, script.name);
      }
      throw error;
    }
  }

  async element(mapId: string, index: number): Promise<ElementView | undefined> {
    const r = await this.#run(mapId, scripts.fanoutElement, [index]);
    if (r.length === 0) return undefined;
    return {
      phase: phaseOf(r[0]),
      stopped: r[1] === '1',
      status: statusOfCode(r[2]),
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
  return ledgerSnapshot({
    total,
    next: num('next'),
    settled: num('settled'),
    failed: num('failed'),
    stopped: fields.get('stopped') === '1',
    phase: fields.get('phase'),
    statuses: Array.from({ length: total }, (_, i) => statusOfCode(fields.get(`s:${i}`))),
  });
}
