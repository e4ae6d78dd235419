/**
 * One execution: status and actions, what it waits for (a key, an async unit, an interrupt
 * with its resume buttons, or an event at a `.waitForEvent` step), its failure, the step graph, the input
 * (redacted fields hidden), steps with their attempts and newest progress, rollback failures,
 * linked executions and the trace. An unfinished execution's page follows its event stream
 * (`live-script.ts`).
 *
 * @module
 */
import { html } from 'hono/html';
import type { ReactorEvent } from '../../engine/model/events.js';
import type { ExecutionDetail, ExecutionSummary, StepView, WaitView } from '../../ops/types.js';
import type { ExecutionAction } from '../actions.js';
import { dagSvg } from './dag.js';
import { timelineSvg } from './timeline.js';
import { traceTable } from './trace-table.js';
import { badge, duration, errorBlock, json, time, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';
import { progressText } from './live-script.js';
import { TERMINAL_STATUSES } from '../../ports/store.js';

const link = (ctx: PageContext, id: string): Fragment =>
  html`<a class="mono" href="${ctx.base}/executions/${encodeURIComponent(id)}">${id}</a>`;

function waitingCard(ctx: PageContext, waiting: WaitView): Fragment {
  const w = waiting.waitingFor;
  if (w.primitive === 'sleep')
    return html`<div class="card waiting"><h2>Waiting</h2><p>Sleeping at step <code>${w.key}</code> until ${w.dueAt === undefined ? '—' : time(w.dueAt)} (a delayed job wakes it; <code>engine.wake</code> wakes it now).</p></div>`;
  const holders =
    w.primitive === 'async'
      ? html`<span class="muted">it resumes when the unit's record is terminal (its value, or its failure)</span>`
      : waiting.holders.length === 0
        ? html`<span class="muted">no holder right now (it resumes at its next attempt)</span>`
        : waiting.holders.map(
            (h) =>
              html`<div>held by ${h.executionId ? link(ctx, h.executionId) : html`<code>${h.owner}</code>`} ${h.reactor ? html`(${h.reactor})` : ''} at ${h.level === 'step' ? html`step <code>${h.step ?? ''}</code>` : 'reactor level'}</div>`,
          );
  const what =
    w.primitive === 'async'
      ? html`the async unit ${link(ctx, w.key)}`
      : html`${w.primitive} <code class="wait-key">${w.key}</code>`;
  return html`<div class="card waiting"><h2>Waiting</h2><p>Parked on ${what}${waiting.step ? html` at step <code>${waiting.step}</code>` : ''}; ${w.primitive === 'async' ? 'park' : 'contention attempt'} ${w.attempt}; fallback resume ${w.dueAt === undefined ? '—' : time(w.dueAt)} (a release wakes it earlier).</p>${holders}<p><a href="${ctx.base}/coordination">coordination view →</a></p></div>`;
}

function pausedCard(ctx: PageContext, e: ExecutionDetail, canResume: boolean): Fragment | string {
  if (e.pausedOn)
    return html`<div class="card paused" data-paused-on="failure"><h2>Paused on a failure</h2><p>Step <code>${e.pausedOn.step}</code> failed for good at ${time(e.pausedOn.at)}.</p>${errorBlock(e.pausedOn.error)}<p>It waits for an operator: retry the step, skip it with a value (where it is skippable), or roll the run back. It holds no lock, semaphore or rate slot meanwhile.</p></div>`;
  const interrupts = (e.interrupts ?? []).filter((i) => i.event === undefined);
  if (interrupts.length === 0) return '';
  const self = `${ctx.base}/executions/${encodeURIComponent(e.id)}`;
  const rows = interrupts.map(
    (i) =>
      html`<tr data-interrupt="${i.step}"><td><code>${i.step}</code></td><td>${i.correlationId === undefined ? html`<span class="muted">—</span>` : html`<code>${i.correlationId}</code>`}</td><td>${time(i.pausedAt)}</td><td>${i.timeoutAt === undefined ? 'none' : time(i.timeoutAt)}</td><td>${i.invalidAttempts}${i.maxAttempts === undefined ? '' : i.maxAttempts === 0 ? ' (unlimited)' : ` of ${i.maxAttempts}`}</td><td>${canResume ? html`<a class="button" data-action="resume" data-step="${i.step}" href="${self}/actions/resume?step=${encodeURIComponent(i.step)}">Resume…</a>` : ''}</td></tr>`,
  );
  return html`<div class="card paused"><h2>Paused</h2><p>Waiting for a resume at ${interrupts.length === 1 ? 'this interrupt' : `${interrupts.length} interrupts (each is resumed on its own)`}. It holds no lock, semaphore or rate slot meanwhile.</p><table class="interrupts"><thead><tr><th>Interrupt step</th><th>Correlation id</th><th>Paused at</th><th>Timeout</th><th>Invalid payloads</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The `.waitForEvent` steps a paused execution waits at: a sent event resumes them, not the resume action. */
function eventWaitsCard(e: ExecutionDetail): Fragment | string {
  const waits = (e.interrupts ?? []).flatMap((i) => (i.event === undefined ? [] : [{ ...i, event: i.event }]));
  if (e.pausedOn || waits.length === 0) return '';
  const rows = waits.map(
    (w) =>
      html`<tr data-event-wait="${w.step}"><td><code>${w.step}</code></td><td><code>${w.event.name}</code></td><td>${w.event.matchKey === '' ? html`<span class="muted">none (its predicate decides)</span>` : html`<code>${w.event.matchKey}</code>`}</td><td>${time(w.pausedAt)}</td><td>${w.timeoutAt === undefined ? 'none' : time(w.timeoutAt)}</td></tr>`,
  );
  return html`<div class="card paused" data-paused-on="event"><h2>Waiting for ${waits.length === 1 ? html`event <code>${waits[0]!.event.name}</code>` : `${waits.length} events`}</h2><p>A sent event that matches resumes ${waits.length === 1 ? 'the wait' : 'each wait on its own'} (<code>engine.send</code>); a resume does not. It holds no lock, semaphore or rate slot meanwhile.</p><table class="event-waits"><thead><tr><th>Step</th><th>Event</th><th>Match key</th><th>Paused at</th><th>Timeout</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function attemptsCell(step: StepView, paused: boolean): Fragment | string {
  if (step.attempts.length === 0) return html`<span class="muted">${step.record.attempts} attempt(s)</span>`;
  return html`${step.attempts.map((a) => html`<div data-attempt="${String(a.attempt)}" data-outcome="${a.outcome}">#${a.attempt} ${badge(paused && a.outcome === 'running' ? 'paused' : a.outcome)}${a.outcome === 'worker_lost' ? html` <span class="muted">started, worker lost: the body may have run</span>` : a.outcome === 'may_have_run' ? html` <span class="muted">worker lost: the body may have run</span>` : a.outcome === 'interrupted' ? html` <span class="muted">worker shut down: the body ran, in part or in full</span>` : ''}${a.worker === undefined ? '' : html` <span class="worker" title="worker">${a.worker}</span>`} ${a.startedAt === undefined ? '' : time(a.startedAt)}${a.endedAt !== undefined && a.startedAt !== undefined ? ` · ${duration(a.endedAt - a.startedAt)}` : ''}${a.delayMs === undefined ? '' : ` · retry in ${duration(a.delayMs)}`}${a.error ? errorBlock(a.error) : ''}</div>`)}`;
}

/** A step's status as shown: an interrupt still waiting for a resume is `paused` (its record says `running`). */
function shownStatus(step: StepView, waiting: readonly string[]): string {
  return step.record.status === 'running' && waiting.includes(step.path) ? 'paused' : step.record.status;
}

/** A step's result; a sleep's times as dates (its record keeps ms since the epoch). */
function resultCell(step: StepView): Fragment | string {
  if (step.sleep !== undefined)
    return step.sleep.wokeAt === undefined
      ? html`<span class="sleep">sleeps until <time datetime="${step.sleep.wakeAt}">${step.sleep.wakeAt}</time></span>`
      : json(step.sleep);
  return step.record.result === undefined ? '' : json(step.record.result);
}

/** The step's newest progress report, beside its status (the live script updates it as reports arrive). */
function progressCell(step: StepView, progress: ExecutionDetail['progress']): Fragment | string {
  const report = progress?.[step.path];
  if (report === undefined) return '';
  return html`<div class="progress" data-progress="${step.path}" title="attempt ${String(report.attempt)}, ${time(report.at)}">${progressText(report.data)}</div>`;
}

function stepsTable(
  ctx: PageContext,
  steps: readonly StepView[],
  waiting: readonly string[] = [],
  progress: ExecutionDetail['progress'] = undefined,
): Fragment {
  if (steps.length === 0) return html`<p class="empty">No step has run.</p>`;
  return html`<table class="steps"><thead><tr><th>Step</th><th>Status</th><th>Attempts</th><th>Result / error</th></tr></thead><tbody>${steps.map(
    (s) =>
      html`<tr data-step="${s.path}"><td><code>${s.path}</code>${s.record.unitId === undefined ? '' : html`<br><span class="muted">unit</span> ${link(ctx, s.record.unitId)}`}</td><td>${badge(shownStatus(s, waiting))}${s.rolledBack ? html` → ${badge(s.rolledBack)}` : ''}${progressCell(s, progress)}</td><td>${attemptsCell(s, shownStatus(s, waiting) === 'paused')}</td><td>${s.record.error ? errorBlock(s.record.error) : resultCell(s)}</td></tr>`,
  )}</tbody></table>`;
}

/** The time that ends the timeline's open bars: now, unless the trace runs on another clock (a test's manual clock). */
function timelineNow(trace: readonly ReactorEvent[]): number {
  const last = trace[trace.length - 1]?.at ?? 0;
  const now = Date.now();
  return now >= last && now - last < 7 * 24 * 3_600_000 ? now : last;
}

/** An async unit or child reactor (`<dispatcherId>~<step>`) is named by the step that dispatched it. */
function unitLabel(e: ExecutionSummary): Fragment | string {
  if (e.parentId === undefined || !e.id.startsWith(`${e.parentId}~`)) return '';
  return html` <span class="muted unit">async unit of step <code>${e.id.slice(e.parentId.length + 1)}</code></span>`;
}

/** What a parked or paused linked execution waits for. */
function waitNote(ctx: PageContext, e: ExecutionSummary): Fragment | string {
  if (e.waitingFor)
    return html` <span class="muted">waits for ${e.waitingFor.primitive === 'async' ? html`async unit ${link(ctx, e.waitingFor.key)}` : html`${e.waitingFor.primitive} <code>${e.waitingFor.key}</code>`}</span>`;
  if (e.interrupts && e.interrupts.length > 0)
    return html` <span class="muted">${e.interrupts.map((i) => (i.event === undefined ? html`at interrupt <code>${i.step}</code> ` : html`waits for event <code>${i.event.name}</code> at <code>${i.step}</code> `))}</span>`;
  return '';
}

function linked(ctx: PageContext, title: string, list: readonly ExecutionSummary[]): Fragment | string {
  if (list.length === 0) return '';
  return html`<h2>${title}</h2><table><tbody>${list.map((e) => html`<tr data-child="${e.id}"><td>${link(ctx, e.id)}${unitLabel(e)}</td><td>${e.reactor}</td><td>${badge(e.status)}${waitNote(ctx, e)}</td><td>${time(e.createdAt)}</td></tr>`)}</tbody></table>`;
}

function outcome(e: ExecutionDetail): Fragment | string {
  const parts: (Fragment | string)[] = [];
  if (e.error)
    parts.push(
      html`<p>${e.failedStep ? html`Failed at step <code>${e.failedStep}</code>:` : 'Failed:'}</p>${errorBlock(e.error)}`,
    );
  if (e.haltReason !== undefined)
    parts.push(html`<p>Halted: ${e.haltReason}</p>${e.haltData === undefined ? '' : json(e.haltData)}`);
  if (e.cancelReason !== undefined) parts.push(html`<p>Cancelled: ${e.cancelReason}</p>`);
  if (e.value !== undefined) parts.push(html`<p>Value:</p>${json(e.value)}`);
  return parts.length === 0 ? '' : html`<div class="card outcome"><h2>Outcome</h2>${parts}</div>`;
}

/** Whether the execution will not change again on its own (a terminal status). */
const finished = (e: ExecutionDetail): boolean => e.status !== 'queued' && TERMINAL_STATUSES.has(e.status);

/** The detail page. `actions` are those that apply (none in read-only mode). */
export function executionPage(
  ctx: PageContext,
  e: ExecutionDetail,
  actions: readonly ExecutionAction[],
  notice: string | undefined,
): Fragment {
  const buttons = actions.map(
    (a) =>
      html`<a class="button${a.danger ? ' danger' : ''}" data-action="${a.name}" href="${ctx.base}/executions/${encodeURIComponent(e.id)}/actions/${a.name}">${a.label}…</a>`,
  );
  const input = e.inputHidden
    ? html`<p class="muted">Hidden: the reactor is not registered with this dashboard and no redacted copy was recorded.</p>`
    : html`${json(e.input)}${e.redacted.length === 0 ? '' : html`<p class="muted">Redacted: ${e.redacted.join(', ')}</p>`}`;
  const body = html`${notice ? html`<div class="notice">${notice}</div>` : ''}
<h1 data-execution-status="${e.status}" data-terminal="${String(finished(e))}">${e.reactor} <span class="mono">${e.id}</span> ${badge(e.status)}</h1>
<p class="muted">created ${time(e.createdAt)} · updated ${time(e.updatedAt)}${e.parentId ? html` · parent ${link(ctx, e.parentId)}` : ''}${e.retryOf ? html` · retries ${link(ctx, e.retryOf)}` : ''}${e.idempotencyKey ? html` · idempotency key <code>${e.idempotencyKey}</code>` : ''}${e.tags ? html` · tags ${Object.entries(e.tags).map(([key, value]) => html`<a class="tag" data-tag-key="${key}" href="${ctx.base}/executions?tag=${encodeURIComponent(`${key}=${value}`)}"><code>${key}=${value}</code></a> `)}` : ''}</p>
${buttons.length === 0 ? '' : html`<p class="actions">${buttons}</p>`}
${e.waiting ? waitingCard(ctx, e.waiting) : ''}
${pausedCard(
  ctx,
  e,
  actions.some((a) => a.name === 'resume'),
)}
${eventWaitsCard(e)}
${outcome(e)}
<h2>Step graph</h2><div class="card">${dagSvg(e.graph)}</div>
<h2>Timeline</h2><div class="card timeline-card">${timelineSvg(e.trace, timelineNow(e.trace), { href: (id) => `${ctx.base}/executions/${encodeURIComponent(id)}` })}</div>
<div class="grid"><div><h2>Input</h2>${input}</div>${e.rollbackFailures.length === 0 ? '' : html`<div><h2>Rollback failures</h2><table class="rollback"><thead><tr><th>Step</th><th>Kind</th><th>Reason</th><th>Message</th></tr></thead><tbody>${e.rollbackFailures.map((f) => html`<tr><td><code>${f.step}</code></td><td>${f.kind}</td><td>${f.reason}${f.key ? html` <code>${f.key}</code>` : ''}</td><td>${f.message}</td></tr>`)}</tbody></table></div>`}</div>
<h2>Steps</h2><div data-steps>${stepsTable(
    ctx,
    e.steps,
    (e.interrupts ?? []).map((i) => i.step),
    e.progress,
  )}</div>
${linked(ctx, 'Child executions', e.links.children)}${linked(ctx, 'Retries', e.links.retries)}
<h2>Trace</h2>${traceTable(e.trace)}`;
  const stream = finished(e) ? {} : { stream: `${ctx.base}/executions/${encodeURIComponent(e.id)}/stream` };
  return page(ctx, { title: `${e.reactor} ${e.id}`, nav: 'executions', ...stream }, body);
}
