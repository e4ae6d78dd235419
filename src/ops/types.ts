/**
 * The views the read model returns: plain JSON-safe data, shared by the dashboard's pages, its
 * JSON API and the `ts-reactor` operations commands.
 *
 * @module
 */
import type { ErrorJSON } from '../errors.js';
import type { ReactorEvent } from '../engine/model/events.js';
import type {
  ExecutionStatus,
  FailurePause,
  RollbackFailure,
  StatusName,
  StepProgress,
  StepRecord,
  VersionWait,
  WaitingFor,
} from '../ports/store.js';

/** A query over executions: filters and a page. */
export interface ExecutionQuery {
  readonly reactor?: string;
  readonly status?: StatusName | ExecutionStatus;
  /** Created at or after (ms). */
  readonly from?: number;
  /** Created before (ms). */
  readonly to?: number;
  /** Only executions carrying every one of these tags. */
  readonly tags?: Readonly<Record<string, string>>;
  /** Page size (1–500, default 50). */
  readonly limit?: number;
  /** Opaque cursor of the next page. */
  readonly cursor?: string;
}

/** A search of executions (`ReadModel.search`): `q` with the list's reactor and status filters. */
export interface ExecutionSearch {
  /** An execution id, an idempotency key, an interrupt correlation id, or text of the input (1–200 characters). */
  readonly q: string;
  readonly reactor?: string;
  readonly status?: StatusName | ExecutionStatus;
}

/** What a search hit matched: its id, its idempotency key, one of its correlation ids, or its (redacted) input's text. */
export type SearchMatch = 'id' | 'idempotency_key' | 'correlation_id' | 'input';

/** One search hit: the list line and what matched. */
export interface SearchHit extends ExecutionSummary {
  readonly match: SearchMatch;
}

/** The hits of a search (at most 100): exact lookups first, then matches among the newest `window` records. */
export interface SearchResult {
  readonly q: string;
  readonly items: readonly SearchHit[];
  /** How many of the newest records were read for matches. */
  readonly scanned: number;
  /** The most records a search reads (`ReadModelOptions.searchWindow`). */
  readonly window: number;
}

/** One line of the executions list. */
export interface ExecutionSummary {
  readonly id: string;
  readonly reactor: string;
  /** The definition it runs with: its fingerprint and author-set version (absent on records from before versioned definitions). */
  readonly fingerprint?: string;
  readonly version?: string;
  /** Set while no worker that met it had that definition: it waits for one that has it (docs/deploys.md). */
  readonly waitingForVersion?: VersionWait;
  /** Its status as users see it: `queued` for a stored `pending` (decision 107). */
  readonly status: StatusName;
  /** Its tags (absent: none). */
  readonly tags?: Readonly<Record<string, string>>;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly failedStep?: string;
  readonly error?: ErrorJSON;
  /** Set while parked: the key it waits for. */
  readonly waitingFor?: WaitingFor;
  /** Set while a delayed start waits for its time (engine clock, ms): nothing runs before it. */
  readonly startAt?: number;
  /** The priority of its jobs (1 most urgent), when it was started with one. */
  readonly priority?: number;
  readonly parentId?: string;
  readonly retryOf?: string;
  /** Set while paused: the interrupts it waits at (answer one with the `resume` action). */
  readonly interrupts?: readonly InterruptView[];
  /** Set while paused on a step's failure (`onFailure: 'pause'`): the step, its error, when (act with `retry-step`, `skip-step`, `rollback`). */
  readonly pausedOn?: FailurePause;
}

/** An interrupt a paused execution waits at, or a `.waitForEvent` step it waits at (`event` set). */
export interface InterruptView {
  /** The interrupt step's path (`approve`, `review.approve` inside a composed reactor). */
  readonly step: string;
  readonly correlationId?: string;
  readonly pausedAt: number;
  /** When its timeout passes (engine clock, ms), if it has one. */
  readonly timeoutAt?: number;
  /** Invalid payloads counted so far. */
  readonly invalidAttempts: number;
  /** Invalid payloads accepted before the run fails (0 = unlimited); absent when the reactor is not registered here. */
  readonly maxAttempts?: number;
  /**
   * Set when the wait is a `.waitForEvent` step's, not an interrupt's: the event it waits for and
   * its match key (the `matchOn` values as JSON, `''` without). A sent event resumes it; `engine.resume` does not.
   */
  readonly event?: { readonly name: string; readonly matchKey: string };
}

/** A page of executions. */
export interface ExecutionPage {
  readonly items: readonly ExecutionSummary[];
  /** Present when there is a next page. */
  readonly cursor?: string;
}

/** One attempt of a step, from the step's attempt log and the trace. */
export interface AttemptView {
  readonly attempt: number;
  /** The worker that ran it (`<host>-<pid>/<engine id>`), where known. */
  readonly worker?: string;
  readonly startedAt?: number;
  readonly endedAt?: number;
  /**
   * How it ended; `worker_lost`: it started and its worker was lost before it settled (its body
   * may have run in full, in part or not at all); `may_have_run`: its worker was lost and the
   * body may have run since the last checkpoint (docs/background.md#attempts); `interrupted`: its
   * worker's shutdown stopped it and handed the job back (the body ran, in part or in full).
   */
  readonly outcome:
    | 'running'
    | 'succeeded'
    | 'failed'
    | 'retrying'
    | 'skipped'
    | 'halted'
    | 'worker_lost'
    | 'may_have_run'
    | 'interrupted';
  readonly error?: ErrorJSON;
  /** The backoff before the next attempt (outcome `retrying`). */
  readonly delayMs?: number;
}

/** One step of an execution: its record and its attempts. */
export interface StepView {
  /** Step path: `charge`, `pay.charge` (compose), `items[2]` (map element). */
  readonly path: string;
  readonly record: StepRecord;
  readonly attempts: readonly AttemptView[];
  /** Set when the trace shows the step was rolled back (its record keeps the earlier status). */
  readonly rolledBack?: 'undone' | 'compensated';
  /** A sleep step: its times, as ISO 8601 dates (the record keeps them as ms since the epoch). */
  readonly sleep?: SleepView;
}

/** A sleep step's times as shown: when it wakes, and once it woke, when and whether early (`engine.wake`). */
export interface SleepView {
  /** Its wake time (ISO 8601). */
  readonly wakeAt: string;
  /** When it woke (ISO 8601); absent while it sleeps. */
  readonly wokeAt?: string;
  /** It woke before its wake time (`engine.wake`). */
  readonly early?: boolean;
}

/** A node of the step graph. */
export interface GraphNodeView {
  readonly name: string;
  readonly kind: 'step' | 'compose' | 'map';
  /** The step's status, `pending` when not reached. */
  readonly status: StepRecord['status'] | 'pending' | 'parked' | 'paused';
  readonly returns: boolean;
  /** Column (longest dependency path from a root). */
  readonly layer: number;
  /** Row within the column. */
  readonly row: number;
}

/** The step graph of an execution. */
export interface GraphView {
  readonly nodes: readonly GraphNodeView[];
  /** `result`: the step reads the other's result; `waitFor`: ordering only. */
  readonly edges: readonly { readonly from: string; readonly to: string; readonly kind: 'result' | 'waitFor' }[];
  /** False when the reactor is not registered with the read model: nodes come from the record, without edges. */
  readonly fromDefinition: boolean;
  /** Which definition it was drawn from (absent when the reactor's name is not registered). */
  readonly source?: GraphSource;
}

/**
 * Which definition a graph was drawn from: `own`, the one the execution runs with (its record's
 * fingerprint), even when a later version is registered; `current`, the name's current one (a
 * record from before versioned definitions); `migrating`, a later one that continues it
 * (`migrateFrom`), its steps under their new names; `unregistered`, none: the execution's
 * definition (`fingerprint`, `version`) is not registered here, so the boxes come from the record.
 */
export interface GraphSource {
  readonly kind: 'own' | 'current' | 'migrating' | 'unregistered';
  readonly fingerprint: string;
  readonly version?: string;
}

/** Who holds a key, and where in the execution. */
export interface HolderView {
  readonly owner: string;
  readonly executionId?: string;
  readonly reactor?: string;
  /** The declaring step; absent for a reactor-level hold. */
  readonly step?: string;
  readonly level: 'step' | 'reactor';
}

/** A parked execution waiting on a key. */
export interface WaiterView {
  readonly executionId: string;
  readonly reactor: string;
  /** The step that met the contention, when the trace says. */
  readonly step?: string;
  readonly attempt: number;
  /** When the fallback job resumes it (if no release wakes it first). */
  readonly dueAt?: number;
  readonly since: number;
}

/** A live lock hold. */
export interface LockView extends HolderView {
  readonly key: string;
  readonly nesting: number;
  readonly ttlMs: number;
  /** Fencing token of the hold. */
  readonly token: string;
  readonly waiting: readonly WaiterView[];
  /** An engine-internal key (a worker's liveness lease on an execution, the recovery sweep's lock). */
  readonly internal: boolean;
}

/** A semaphore with live leases. */
export interface SemaphoreView {
  readonly key: string;
  readonly limit: number;
  readonly free: number;
  readonly holders: readonly (HolderView & { readonly nesting: number; readonly ttlMs: number })[];
  readonly waiting: readonly WaiterView[];
}

/** A rate-limit window with starts in it. */
export interface RateView {
  readonly key: string;
  readonly periodMs: number;
  readonly count: number;
  /** ms until the oldest start leaves the window. */
  readonly resetInMs: number;
  readonly waiting: readonly WaiterView[];
}

/** A marked period bucket. */
export interface PeriodView {
  readonly key: string;
  readonly bucket: string;
  readonly ttlMs: number;
  /** An engine-internal marker (a cancel request for an execution running in a worker). */
  readonly internal: boolean;
}

/** An ordered lock's cursor. */
export interface OrderedView {
  readonly key: string;
  readonly epoch: number;
  readonly issued: number;
  /** The position whose turn it is (`undefined` when drained). */
  readonly next: number | undefined;
  readonly lastCompleted: number;
  readonly inFlight: number | undefined;
  readonly firstFailed: number | undefined;
  readonly drained: boolean;
  readonly waiting: readonly WaiterView[];
}

/** The live coordination state. */
export interface CoordinationView {
  /** Backend time of the reading (ms). */
  readonly at: number;
  readonly locks: readonly LockView[];
  readonly semaphores: readonly SemaphoreView[];
  readonly rates: readonly RateView[];
  readonly periods: readonly PeriodView[];
  readonly ordered: readonly OrderedView[];
}

/** What a parked execution waits for, with who holds that key now. */
export interface WaitView {
  readonly waitingFor: WaitingFor;
  readonly step?: string;
  readonly holders: readonly HolderView[];
}

/** Everything about one execution. */
export interface ExecutionDetail extends ExecutionSummary {
  readonly rootId: string;
  /** The input with redacted fields replaced by `'[redacted]'`; `undefined` when it cannot be shown safely. */
  readonly input: unknown;
  /** Fields hidden from the input. */
  readonly redacted: readonly string[];
  /** True when the input is withheld (its reactor is unknown here and no redacted copy exists). */
  readonly inputHidden: boolean;
  readonly value?: unknown;
  readonly haltReason?: string;
  readonly haltData?: unknown;
  readonly cancelReason?: string;
  readonly idempotencyKey?: string;
  readonly steps: readonly StepView[];
  readonly graph: GraphView;
  readonly trace: readonly ReactorEvent[];
  readonly rollbackFailures: readonly RollbackFailure[];
  /** The newest progress report of each step that reported one (`ctx.progress`), by step path, as the record keeps it. */
  readonly progress?: Readonly<Record<string, StepProgress>>;
  readonly waiting?: WaitView;
  /** Executions linked to this one: its parent, what it retries, its children and its retries. */
  readonly links: {
    readonly children: readonly ExecutionSummary[];
    readonly retries: readonly ExecutionSummary[];
  };
}
