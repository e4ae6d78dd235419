/**
 * What ts-reactor measures, in one table, and how each event becomes an observation. Both
 * exports read it: OpenTelemetry metrics ({@link otelMetrics} in `metrics.ts`) and the
 * Prometheus endpoint (`prometheus.ts`). Names are Prometheus-style (`ts_reactor_…`); an
 * OpenTelemetry meter gets the same names.
 *
 * @module
 */
import { forgetOldest } from '../ports/bounded-memo.js';
import type { ReactorEvent } from '../ports/events.js';
import type { ScheduleEvent } from '../schedules/events.js';

/** One metric: its kind, name, help text, unit and label names. */
export interface MetricSpec {
  readonly kind: 'counter' | 'histogram' | 'gauge';
  readonly name: string;
  readonly help: string;
  readonly unit?: 's';
  readonly labels: readonly string[];
}

/** Every metric, by key. */
export const METRICS = {
  executionsStarted: {
    kind: 'counter',
    name: 'ts_reactor_executions_started',
    help: 'Executions accepted (an inline run started, or a background execution queued), by reactor',
    labels: ['reactor'],
  },
  executionsFinished: {
    kind: 'counter',
    name: 'ts_reactor_executions_finished',
    help: 'Executions that ended, by reactor and status (completed, failed, halted, cancelled)',
    labels: ['reactor', 'status'],
  },
  stepAttempts: {
    kind: 'counter',
    name: 'ts_reactor_step_attempts',
    help: "Step attempts started, by reactor and step (a map's elements as one: `items[]`)",
    labels: ['reactor', 'step'],
  },
  stepDuration: {
    kind: 'histogram',
    name: 'ts_reactor_step_duration_seconds',
    help: 'Duration of step attempts, by reactor, step and outcome (succeeded, failed, retrying, timed_out)',
    unit: 's',
    labels: ['reactor', 'step', 'outcome'],
  },
  attemptsLost: {
    kind: 'counter',
    name: 'ts_reactor_step_attempts_lost',
    help: 'Step attempts a lost worker may have run, recorded by the job that took over, by reactor, step and outcome (worker_lost: started, never settled; may_have_run: could have started since the last checkpoint; interrupted: stopped by the shutdown of its worker)',
    labels: ['reactor', 'step', 'outcome'],
  },
  coordinationWait: {
    kind: 'histogram',
    name: 'ts_reactor_coordination_wait_seconds',
    help: 'Time a contended acquisition waited before it gave up or parked, by primitive',
    unit: 's',
    labels: ['primitive'],
  },
  coordinationContended: {
    kind: 'counter',
    name: 'ts_reactor_coordination_contended',
    help: 'Acquisitions that found their key busy, by primitive',
    labels: ['primitive'],
  },
  parks: {
    kind: 'counter',
    name: 'ts_reactor_parks',
    help: 'Executions parked on a busy key, by primitive',
    labels: ['primitive'],
  },
  leaseLosses: {
    kind: 'counter',
    name: 'ts_reactor_job_stops',
    help: 'Worker jobs that stopped without writing their outcome, by reason (lease_lost, worker_shutdown, store_unavailable)',
    labels: ['reason'],
  },
  sweepRecoveries: {
    kind: 'counter',
    name: 'ts_reactor_sweep_recoveries',
    help: 'Stranded executions the recovery sweep re-enqueued or ended, by action',
    labels: ['action'],
  },
  scheduleTicks: {
    kind: 'counter',
    name: 'ts_reactor_schedule_ticks',
    help: 'Schedule ticks handled, by schedule, reactor and outcome (ticked: its execution started; missed; failed: nothing started)',
    labels: ['schedule', 'reactor', 'outcome'],
  },
  queueJobs: {
    kind: 'gauge',
    name: 'ts_reactor_queue_jobs',
    help: 'Jobs in the queue, by state (waiting, active, delayed, prioritized, paused, failed)',
    labels: ['state'],
  },
  queueOldestAge: {
    kind: 'gauge',
    name: 'ts_reactor_queue_oldest_waiting_seconds',
    help: 'How long the oldest runnable job has waited to run (0 when none waits)',
    unit: 's',
    labels: [],
  },
  executionsByStatus: {
    kind: 'gauge',
    name: 'ts_reactor_executions',
    help: 'Unfinished executions by status (queued, running, parked, sleeping, paused, paused_on_failure, rolling_back; sleeping: parked on a sleep step; paused_on_failure: paused on a step failure for an operator)',
    labels: ['status'],
  },
  wakeUpsDegraded: {
    kind: 'gauge',
    name: 'ts_reactor_wakeups_degraded',
    help: "Whether this process's release notifications are degraded (1: a pub/sub subscription unconfirmed for longer than its bound; parked executions poll sooner), else 0",
    labels: [],
  },
} as const satisfies Readonly<Record<string, MetricSpec>>;

/** A metric's key in {@link METRICS}. */
export type MetricKey = keyof typeof METRICS;

/** Label values of one observation. */
export type Labels = Readonly<Record<string, string>>;

/** Where observations go (an OpenTelemetry meter, a Prometheus registry). */
export interface MetricSink {
  add(metric: MetricKey, value: number, labels: Labels): void;
  record(metric: MetricKey, value: number, labels: Labels): void;
}

/**
 * Values the gauges read when scraped: the queue's job counts, the oldest waiting job's age, the
 * retained executions by status. Each is optional; a source that throws is skipped for that scrape.
 */
export interface GaugeSources {
  readonly queueJobs?: () => Promise<Readonly<Record<string, number>>>;
  readonly queueOldestWaitingMs?: () => Promise<number | undefined>;
  readonly executionsByStatus?: () => Promise<Readonly<Record<string, number>>>;
  /** Whether the process's wake-ups are degraded, e.g. `() => runtime.health().subscriptions.degraded === true` of a Redis runtime. */
  readonly wakeUpsDegraded?: () => boolean;
}

const FINISHED: Readonly<Record<string, string>> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.halted': 'halted',
  'run.cancelled': 'cancelled',
};

/** The events that end a step attempt, with the outcome label they give its duration. */
const ATTEMPT_ENDS: Readonly<Record<string, string>> = {
  'step.succeeded': 'succeeded',
  'step.failed': 'failed',
  'step.retrying': 'retrying',
  'step.timed_out': 'timed_out',
};

/** Most attempts kept open at once (a step start whose end never came is dropped, oldest first). */
const OPEN_LIMIT = 100_000;

/** Turns events into observations on `sink`. One per export; it keeps the open attempts' start times. */
export class EventMetrics {
  readonly #sink: MetricSink;
  readonly #open = new Map<string, number>();
  readonly #started = new Set<string>();

  constructor(sink: MetricSink) {
    this.#sink = sink;
  }

  /** Observes one event. */
  observe(event: ReactorEvent): void {
    const status = FINISHED[event.type];
    if (status !== undefined) {
      this.#started.delete(event.executionId);
      return this.#sink.add('executionsFinished', 1, { reactor: event.reactor, status });
    }
    if (event.type === 'run.started' || (event.type === 'run.queued' && event.reason === 'start'))
      return this.#accepted(event.executionId, event.reactor);
    if (event.type === 'step.started') {
      this.#sink.add('stepAttempts', 1, { reactor: event.reactor, step: stepLabel(event.step) });
      return this.#opened(`${event.executionId}\u0000${event.step}`, event.at);
    }
    const outcome = ATTEMPT_ENDS[event.type];
    if (outcome !== undefined && 'step' in event && typeof event.step === 'string')
      return this.#closed({ ...event, step: event.step }, outcome);
    if (event.type === 'coordination.contended') {
      this.#sink.add('coordinationContended', 1, { primitive: event.primitive });
      return this.#sink.record('coordinationWait', event.waitedMs / 1000, { primitive: event.primitive });
    }
    if (event.type === 'run.parked') return this.#sink.add('parks', 1, { primitive: event.primitive });
    if (event.type === 'run.stopped') return this.#sink.add('leaseLosses', 1, { reason: event.reason });
    if (event.type === 'run.recovered') return this.#sink.add('sweepRecoveries', 1, { action: event.action });
    if (event.type === 'step.attempt_lost')
      return this.#sink.add('attemptsLost', 1, {
        reactor: event.reactor,
        step: stepLabel(event.step),
        outcome: event.outcome,
      });
  }

  /** Observes one schedule event: a tick started (`ticked`), missed (by their count) or `failed`. */
  observeSchedule(event: ScheduleEvent): void {
    const labels = { schedule: event.scheduleId, reactor: event.reactor };
    if (event.type === 'schedule.ticked' && !event.replay)
      this.#sink.add('scheduleTicks', 1, { ...labels, outcome: 'ticked' });
    else if (event.type === 'schedule.missed')
      this.#sink.add('scheduleTicks', event.count, { ...labels, outcome: 'missed' });
    else if (event.type === 'schedule.failed') this.#sink.add('scheduleTicks', 1, { ...labels, outcome: 'failed' });
  }

  /** An execution counted once, whether it started inline, was queued, or both (a hand-off). */
  #accepted(executionId: string, reactor: string): void {
    if (this.#started.has(executionId)) return;
    this.#started.add(executionId);
    forgetOldest(this.#started, OPEN_LIMIT);
    this.#sink.add('executionsStarted', 1, { reactor });
  }

  #opened(key: string, at: number): void {
    this.#open.set(key, at);
    forgetOldest(this.#open, OPEN_LIMIT);
  }

  #closed(
    event: { readonly executionId: string; readonly reactor: string; readonly step: string; readonly at: number },
    outcome: string,
  ): void {
    const key = `${event.executionId}\u0000${event.step}`;
    const startedAt = this.#open.get(key);
    if (startedAt === undefined) return;
    this.#open.delete(key);
    this.#sink.record('stepDuration', Math.max(0, event.at - startedAt) / 1000, {
      reactor: event.reactor,
      step: stepLabel(event.step),
      outcome,
    });
  }
}

/** A step path as a label: a map's elements share one (`items[]`), so labels stay few. */
export function stepLabel(path: string): string {
  return path.replace(/\[\d+\]/g, '[]');
}
