/**
 * The durability check: reads the Redis settings that decide what survives a restart of the
 * server (`appendonly`, `appendfsync`, `save`, `maxmemory-policy`) and says what they mean for
 * executions, queued jobs and coordination state. A server whose `CONFIG` command is disabled or
 * renamed is reported as unchecked, never as an error.
 *
 * @example
 * ```ts
 * const report = await checkDurability(redis);
 * if (!report.durable) for (const warning of report.warnings) console.warn(warning);
 * ```
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import { DurabilityError } from '../../errors.js';

/** What a connection must offer for {@link checkDurability}: ioredis's `call` (a `Redis` fits). */
export interface DurabilityConnection {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/**
 * How the server persists what it acknowledged:
 * - `aof_always`: append-only file, fsync at every write: nothing acknowledged is lost, even by a crash;
 * - `aof_everysec`: append-only file, fsync every second: a clean restart loses nothing, a crash up to ~1 s of writes;
 * - `aof_no`: append-only file flushed when the operating system decides (`appendfsync no`): a crash can lose ~30 s;
 * - `snapshots`: RDB snapshots only: a clean restart (which saves) loses nothing, a crash loses every write since the last snapshot;
 * - `none`: neither: any restart loses everything;
 * - `unknown`: the settings could not be read.
 */
export type PersistenceMode = 'aof_always' | 'aof_everysec' | 'aof_no' | 'snapshots' | 'none' | 'unknown';

/** The settings as the server reported them (`undefined`: not reported, or not readable). */
export interface DurabilitySettings {
  /** `yes` when the append-only file (AOF) is on. */
  readonly appendonly: string | undefined;
  /** When the AOF is flushed to disk: `always`, `everysec` or `no`. */
  readonly appendfsync: string | undefined;
  /** The RDB snapshot schedule (`''`: no snapshots). */
  readonly save: string | undefined;
  /** What Redis does when it reaches `maxmemory`: `noeviction` refuses writes, any other policy evicts keys. */
  readonly maxmemoryPolicy: string | undefined;
  /** The memory limit in bytes (`'0'`: none); any policy but `noeviction` evicts once it is reached. */
  readonly maxmemory: string | undefined;
}

/** What {@link checkDurability} found. */
export interface DurabilityReport {
  /** False when the settings could not be read (`CONFIG` disabled, renamed or not permitted; no answer): see `reason`. */
  readonly checked: boolean;
  /** Why the settings could not be read (the server's error); absent when `checked`. */
  readonly reason?: string;
  /** The settings as read (all `undefined` when not `checked`). */
  readonly settings: DurabilitySettings;
  /** How the server persists what it acknowledged (see {@link PersistenceMode}). */
  readonly persistence: PersistenceMode;
  /** True when keys can be evicted under memory pressure (`maxmemory-policy` other than `noeviction`); undefined when unknown. */
  readonly evicts: boolean | undefined;
  /** What survives a restart of this server, in one sentence. */
  readonly survives: string;
  /**
   * True when executions, jobs and coordination state survive a restart and are never evicted:
   * AOF with `appendfsync always` or `everysec`, and `maxmemory-policy noeviction`. What
   * `requireDurability` demands.
   */
  readonly durable: boolean;
  /** One line per problem found (each says which setting to change); empty when `durable`. */
  readonly warnings: readonly string[];
}

const SETTINGS = ['appendonly', 'appendfsync', 'save', 'maxmemory-policy', 'maxmemory'] as const;

const SURVIVES: Readonly<Record<PersistenceMode, string>> = {
  aof_always: 'everything Redis acknowledged survives a restart or a crash (AOF, appendfsync always)',
  aof_everysec:
    'a clean restart keeps everything; a crash loses up to ~1 s of acknowledged writes (AOF, appendfsync everysec)',
  aof_no:
    'a clean restart keeps everything; a crash loses the writes the operating system had not flushed, typically up to ~30 s (AOF, appendfsync no)',
  snapshots:
    'a clean restart keeps everything (Redis saves a snapshot when it shuts down); a crash loses every write since the last snapshot (RDB snapshots only)',
  none: 'nothing survives a restart: every execution record, queued job and coordination state is lost (no AOF, no RDB snapshots)',
  unknown: 'unknown: the persistence settings could not be read',
};

/**
 * Reads the durability settings of the server behind `redis` with one `CONFIG GET` and judges
 * them. Never rejects: a refused or unanswered `CONFIG GET` gives a report with `checked: false`.
 *
 * @example
 * ```ts
 * const report = await checkDurability(backend.redis);
 * console.log(report.persistence, report.survives);
 * ```
 */
export async function checkDurability(redis: DurabilityConnection): Promise<DurabilityReport> {
  let reply: unknown;
  try {
    reply = await redis.call('CONFIG', 'GET', ...SETTINGS);
  } catch (error) {
    return judge(undefined, error instanceof Error ? error.message : String(error));
  }
  if (!Array.isArray(reply)) return judge(undefined, `CONFIG GET answered ${JSON.stringify(reply)}`);
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2) values.set(String(reply[i]).toLowerCase(), String(reply[i + 1]));
  return judge({
    appendonly: values.get('appendonly'),
    appendfsync: values.get('appendfsync'),
    save: values.get('save'),
    maxmemoryPolicy: values.get('maxmemory-policy'),
    maxmemory: values.get('maxmemory'),
  });
}

/** The report for settings read (or, with `settings` undefined, for settings that could not be read because of `reason`). */
function judge(settings: DurabilitySettings | undefined, reason?: string): DurabilityReport {
  if (settings === undefined) {
    const none: DurabilitySettings = {
      appendonly: undefined,
      appendfsync: undefined,
      save: undefined,
      maxmemoryPolicy: undefined,
      maxmemory: undefined,
    };
    const warning =
      `could not check the Redis durability settings (CONFIG GET failed: ${reason ?? 'no reason given'}); ` +
      'executions survive a Redis restart only with appendonly yes (appendfsync always or everysec), and are never evicted only with maxmemory-policy noeviction: check them on the server';
    return {
      checked: false,
      ...(reason === undefined ? {} : { reason }),
      settings: none,
      persistence: 'unknown',
      evicts: undefined,
      survives: SURVIVES.unknown,
      durable: false,
      warnings: [warning],
    };
  }
  const persistence = persistenceOf(settings);
  const evicts = settings.maxmemoryPolicy === undefined ? undefined : settings.maxmemoryPolicy !== 'noeviction';
  const warnings: string[] = [];
  const persistenceWarning = warnPersistence(persistence, settings);
  if (persistenceWarning !== undefined) warnings.push(persistenceWarning);
  if (evicts !== false) warnings.push(warnEviction(settings));
  const durable = (persistence === 'aof_always' || persistence === 'aof_everysec') && evicts === false;
  return { checked: true, settings, persistence, evicts, survives: SURVIVES[persistence], durable, warnings };
}

function persistenceOf(settings: DurabilitySettings): PersistenceMode {
  if (settings.appendonly === 'yes') {
    if (settings.appendfsync === 'always') return 'aof_always';
    if (settings.appendfsync === 'everysec') return 'aof_everysec';
    return settings.appendfsync === 'no' ? 'aof_no' : 'unknown';
  }
  if (settings.appendonly !== 'no' || settings.save === undefined) return 'unknown';
  return settings.save.trim() === '' ? 'none' : 'snapshots';
}

function warnPersistence(persistence: PersistenceMode, settings: DurabilitySettings): string | undefined {
  switch (persistence) {
    case 'aof_always':
    case 'aof_everysec':
      return undefined;
    case 'none':
      return 'Redis persistence is off (appendonly no, no RDB save schedule): a Redis restart loses every execution (started, running, parked), every queued job and all coordination state; set appendonly yes with appendfsync always (or everysec)';
    case 'snapshots':
      return `Redis persists RDB snapshots only (save "${settings.save ?? ''}"): a clean restart keeps everything, but a crash loses every execution started or advanced since the last snapshot; set appendonly yes with appendfsync always (or everysec)`;
    case 'aof_no':
      return 'Redis writes its append-only file with appendfsync no: a crash can lose the writes of the last ~30 s (the operating system decides when to flush); set appendfsync always (or everysec)';
    case 'unknown':
      return `Redis reported appendonly ${JSON.stringify(settings.appendonly)}, appendfsync ${JSON.stringify(settings.appendfsync)}, save ${JSON.stringify(settings.save)}: what survives a restart is unknown; set appendonly yes with appendfsync always (or everysec)`;
  }
}

function warnEviction(settings: DurabilitySettings): string {
  if (settings.maxmemoryPolicy === undefined)
    return 'Redis did not report its maxmemory-policy: keys may be evicted; set maxmemory-policy noeviction';
  const limit =
    settings.maxmemory === '0' ? ' (maxmemory 0: no limit yet, but keys are evicted as soon as one is set)' : '';
  return `Redis maxmemory-policy is ${settings.maxmemoryPolicy}${limit}: under memory pressure Redis evicts keys, among them execution records, queued jobs, held locks and fencing counters; set maxmemory-policy noeviction`;
}

/** The verdict of a {@link DurabilityError} for a Redis server that is not durable: its warnings, or its persistence mode. */
function notDurable(report: DurabilityReport): string {
  return `Redis is not durable: ${report.warnings.join('; ') || `persistence ${report.persistence}`}`;
}

/** Options of {@link durabilityAtStartUp}. */
export interface StartUpCheckOptions {
  /** Reject with {@link DurabilityError} unless the report is `durable`. */
  readonly required: boolean;
  /** Where the warnings (or, when `required`, the refusal) are logged. */
  readonly logger: Logger;
  /** True once the caller is closing: a check cut short by that is not reported. */
  readonly closing?: () => boolean;
}

/**
 * The start-up check of a Redis runtime: {@link checkDurability}, then one `warn` per warning
 * (a durable server gets one `debug` line), or with `required` one `error` line and a rejection
 * with {@link DurabilityError}. The returned promise is already observed: a rejection nobody
 * awaits is not an unhandled rejection.
 *
 * @example
 * ```ts
 * const ready = durabilityAtStartUp(backend.redis, { required: true, logger });
 * await ready; // rejects with DurabilityError when Redis is not durable
 * ```
 */
export function durabilityAtStartUp(
  redis: DurabilityConnection,
  options: StartUpCheckOptions,
): Promise<DurabilityReport> {
  const check = checkDurability(redis).then((report) => {
    const fields = {
      durability: {
        persistence: report.persistence,
        evicts: report.evicts,
        checked: report.checked,
        settings: report.settings,
      },
    };
    if (!report.checked && options.closing?.() === true) return report; // closed before the answer: nothing to tell
    if (report.durable) {
      options.logger.debug(fields, `Redis durability: ${report.survives}`);
      return report;
    }
    if (options.required) {
      const error = new DurabilityError(report, notDurable(report));
      options.logger.error({ ...fields, err: error }, `refusing to start: ${error.message}`);
      throw error;
    }
    for (const warning of report.warnings) options.logger.warn(fields, warning);
    return report;
  });
  check.catch(() => undefined);
  return check;
}
