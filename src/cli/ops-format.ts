/**
 * Plain-text rendering of the read model's views for the terminal.
 *
 * @module
 */
import type {
  AttemptView,
  CoordinationView,
  ExecutionDetail,
  ExecutionSummary,
  HolderView,
  InterruptView,
  OrderedView,
  SleepView,
  StepView,
  WaiterView,
} from '../ops/types.js';
import { eventWaitText, interruptText, linkedText } from './ops-format-links.js';
import type { VersionWait } from '../ports/store.js';
import { isoTime } from '../ops/time.js';

/** A UTC time to the second. */
export function when(ms: number | undefined): string {
  return ms === undefined ? '—' : isoTime(ms).slice(0, 19).replace('T', ' ');
}

/** A short duration. */
export function span(ms: number): string {
  return ms < 1_000
    ? `${Math.max(0, Math.round(ms))} ms`
    : ms < 120_000
      ? `${(ms / 1_000).toFixed(1)} s`
      : `${Math.round(ms / 60_000)} min`;
}

/** One line per execution. */
export function executionLine(e: ExecutionSummary): string {
  if (e.waitingForVersion)
    return `${e.id}  ${e.reactor.padEnd(16)} ${e.status.padEnd(12)} ${when(e.createdAt)}  ${versionWaitText(e.waitingForVersion)}`;
  const extra =
    e.status === 'parked' && e.waitingFor?.primitive === 'sleep'
      ? `sleeping at ${e.waitingFor.key} until ${isoTime(e.waitingFor.dueAt ?? 0)}`
      : e.status === 'parked' && e.waitingFor
        ? `waits for ${e.waitingFor.primitive} ${e.waitingFor.key}`
        : e.pausedOn
          ? `paused on the failure of ${e.pausedOn.step}: ${e.pausedOn.error.message}`
          : e.interrupts && e.interrupts.length > 0
            ? pausedAt(e.interrupts)
            : e.failedStep
              ? `failed at ${e.failedStep}: ${e.error?.message ?? ''}`
              : (e.error?.message ?? '');
  const tags =
    e.tags === undefined
      ? ''
      : Object.entries(e.tags)
          .map(([k, v]) => `${k}=${v}`)
          .join(',');
  return `${e.id}  ${e.reactor.padEnd(16)} ${e.status.padEnd(12)} ${when(e.createdAt)}  ${[extra, queuedText(e), tags].filter((part) => part !== '').join('  ')}`.trimEnd();
}

/** A queued execution's start time and priority, when it has them. */
function queuedText(e: ExecutionSummary): string {
  const startsAt = e.startAt === undefined ? '' : `starts at ${isoTime(e.startAt)}`;
  const priority = e.priority === undefined ? '' : `priority ${e.priority}`;
  return [startsAt, priority].filter((part) => part !== '').join(', ');
}

/** An execution in full, as text. */
export function executionText(e: ExecutionDetail): string[] {
  const lines = [
    `execution ${e.id}`,
    `  reactor    ${e.reactor}`,
    `  status     ${e.status}`,
    `  created    ${when(e.createdAt)}`,
    `  updated    ${when(e.updatedAt)}`,
  ];
  if (e.parentId) lines.push(`  parent     ${e.parentId}`);
  if (e.retryOf) lines.push(`  retries    ${e.retryOf}`);
  if (e.tags)
    lines.push(
      `  tags       ${Object.entries(e.tags)
        .map(([key, value]) => `${key}=${value}`)
        .join(', ')}`,
    );
  lines.push(`  input      ${e.inputHidden ? '(hidden: reactor not known here)' : JSON.stringify(e.input)}`);
  if (e.waiting)
    lines.push(
      `  waits for  ${e.waiting.waitingFor.primitive} ${e.waiting.waitingFor.key}${e.waiting.step ? ` at step ${e.waiting.step}` : ''} (attempt ${e.waiting.waitingFor.attempt})${e.waiting.holders.map((h) => `; held by ${holder(h)}`).join('')}`,
    );
  if (e.pausedOn)
    lines.push(
      `  paused on  the failure of step ${e.pausedOn.step} at ${when(e.pausedOn.at)}: ${e.pausedOn.error.name}: ${e.pausedOn.error.message} (retry-step, skip-step, rollback)`,
    );
  const { interrupts, eventWaits } = waitsOf(e.interrupts ?? []);
  for (const i of interrupts)
    lines.push(
      `  interrupt  ${interruptText(i)}${i.maxAttempts === undefined ? '' : `; invalid payloads ${i.invalidAttempts}${i.maxAttempts === 0 ? '' : ` of ${i.maxAttempts}`}`}`,
    );
  for (const w of eventWaits) lines.push(`  waits for  event ${eventWaitText(w)}`);
  if (e.error)
    lines.push(`  error      ${e.error.name}: ${e.error.message}${e.failedStep ? ` (step ${e.failedStep})` : ''}`);
  for (let cause = e.error?.cause; cause; cause = cause.cause)
    lines.push(`    caused by ${cause.name}: ${cause.message}`);
  if (e.haltReason) lines.push(`  halted     ${e.haltReason}`);
  if (e.cancelReason) lines.push(`  cancelled  ${e.cancelReason}`);
  lines.push('  steps');
  for (const s of e.steps) {
    lines.push(
      `    ${s.path.padEnd(20)} ${stepStatus(s).padEnd(12)} attempts ${s.record.attempts}${s.record.error ? `  ${s.record.error.message}` : ''}`,
    );
    if (s.sleep !== undefined) lines.push(`      ${sleepText(s.sleep)}`);
    for (const a of s.attempts) lines.push(`      #${a.attempt} ${attemptText(a)}`);
  }
  for (const f of e.rollbackFailures)
    lines.push(`  rollback failure: ${f.kind} of ${f.step} ${f.reason}: ${f.message}`);
  lines.push(...linkedText(e));
  for (const r of e.links.retries) lines.push(`  retried as ${r.id} ${r.status}`);
  lines.push(traceLine(e.trace));
  return lines;
}

/** A sleep step's times as dates: `sleeps until …`, or `woke … (wake time …, early)`. */
export function sleepText(sleep: SleepView): string {
  if (sleep.wokeAt === undefined) return `sleeps until ${sleep.wakeAt}`;
  return `woke ${sleep.wokeAt} (wake time ${sleep.wakeAt}${sleep.early === true ? ', woken early' : ''})`;
}

/** One attempt as shown: its outcome (what a lost worker's attempt means), its worker. */
export function attemptText(a: AttemptView): string {
  const outcome =
    a.outcome === 'worker_lost'
      ? 'worker lost (started; the body may have run)'
      : a.outcome === 'may_have_run'
        ? 'may have run (worker lost)'
        : a.outcome === 'interrupted'
          ? 'interrupted (worker shut down; the body ran, in part or in full)'
          : a.outcome;
  return `${outcome}${a.worker === undefined ? '' : `  on ${a.worker}`}`;
}

/** A step's status as shown: `completed → undone` when the trace says it was rolled back. */
export function stepStatus(s: Pick<StepView, 'record' | 'rolledBack'>): string {
  return s.rolledBack === undefined ? s.record.status : `${s.record.status} → ${s.rolledBack}`;
}

/** `trace  751 events, last run.completed (1,250 earlier events summarized)`: a bounded trace says what it let go of. */
function traceLine(trace: ExecutionDetail['trace']): string {
  const last = trace.length === 0 ? '' : `, last ${trace.at(-1)?.type ?? ''}`;
  const summary = trace.find((t) => t.type === 'trace.summarized');
  const folded = summary?.type === 'trace.summarized' ? ` (${summary.dropped} earlier events summarized)` : '';
  return `  trace      ${trace.length} events${last}${folded}`;
}

/**
 * For the list line: `paused at interrupt …` (each interrupt with its correlation id and timeout)
 * and `waiting for event …` (each `.waitForEvent` wait with its event, match key and timeout).
 */
function pausedAt(waits: readonly InterruptView[]): string {
  const { interrupts, eventWaits } = waitsOf(waits);
  return [
    interrupts.length === 0 ? '' : `paused at interrupt ${interrupts.map(interruptText).join(', ')}`,
    eventWaits.length === 0 ? '' : `waiting for event ${eventWaits.map(eventWaitText).join(', event ')}`,
  ]
    .filter((part) => part !== '')
    .join('; ');
}

type EventWaitView = InterruptView & { readonly event: NonNullable<InterruptView['event']> };

/** A paused execution's waits apart: its interrupts, and its waits for an event. */
function waitsOf(waits: readonly InterruptView[]): {
  readonly interrupts: readonly InterruptView[];
  readonly eventWaits: readonly EventWaitView[];
} {
  return {
    interrupts: waits.filter((w) => w.event === undefined),
    eventWaits: waits.filter((w): w is EventWaitView => w.event !== undefined),
  };
}

/** `id (reactor, step s)`; without a known reactor `id (step s)` or `id (reactor level)`. */
export function holder(h: HolderView): string {
  const level = h.level === 'step' ? `step ${h.step ?? '?'}` : 'reactor level';
  return `${h.executionId ?? h.owner} (${[h.reactor, level].filter((part) => part !== undefined && part !== '').join(', ')})`;
}

function waiting(list: readonly WaiterView[]): string[] {
  return list.map(
    (w) => `    waiting: ${w.executionId} (${w.reactor}${w.step ? `, step ${w.step}` : ''}, attempt ${w.attempt})`,
  );
}

/** An ordered lock's cursor. */
export function orderedLine(o: OrderedView): string {
  const dash = (n: number | undefined): string => (n === undefined ? '—' : String(n));
  return `ordered ${o.key}  next ${dash(o.next)}  last completed ${o.lastCompleted}  in flight ${dash(o.inFlight)}  first failed ${dash(o.firstFailed)}  issued ${o.issued}  epoch ${o.epoch}${o.drained ? '  (drained)' : ''}`;
}

/** The coordination view as text; engine-internal keys only with `internal`. */
export function coordinationText(view: CoordinationView, internal: boolean): string[] {
  const lines: string[] = [];
  for (const l of view.locks.filter((x) => internal || !x.internal))
    lines.push(
      `lock ${l.key}  held by ${holder(l)}  nesting ${l.nesting}  ttl ${span(l.ttlMs)}  token ${l.token}${l.internal ? '  (liveness)' : ''}`,
      ...waiting(l.waiting),
    );
  for (const s of view.semaphores) {
    lines.push(`semaphore ${s.key}  ${s.holders.length}/${s.limit} held, ${s.free} free`);
    for (const h of s.holders) lines.push(`    holder: ${holder(h)} nesting ${h.nesting} ttl ${span(h.ttlMs)}`);
    lines.push(...waiting(s.waiting));
  }
  for (const r of view.rates)
    lines.push(
      `rate ${r.key}  window ${span(r.periodMs)}  ${r.count} in window  oldest leaves in ${span(r.resetInMs)}`,
      ...waiting(r.waiting),
    );
  for (const p of view.periods.filter((x) => internal || !x.internal))
    lines.push(`period ${p.key}  bucket ${p.bucket}  expires in ${span(p.ttlMs)}`);
  for (const o of view.ordered) lines.push(orderedLine(o), ...waiting(o.waiting));
  return lines;
}

/** What an execution left for a worker with its definition waits for (docs/deploys.md). */
export function versionWaitText(wait: VersionWait): string {
  const named = wait.version === undefined ? wait.fingerprint : `${wait.version} (fingerprint ${wait.fingerprint})`;
  return `waiting for version ${named} since ${when(wait.since)}: no worker that met it has that definition`;
}
