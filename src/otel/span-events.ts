/**
 * Engine events onto open spans: retries, park and wake, coordination and rollback become span
 * events; a run's terminal event sets the outcome its span ends with.
 *
 * @module
 */
import type { Attributes } from '@opentelemetry/api';
import type { ReactorEvent } from '../engine/model/events.js';
import { ATTR } from './attributes.js';
import type { OpenSpan, OpenSpans } from './open-spans.js';

/** Run outcomes reported by events (the run span's `ts_reactor.run.outcome`). */
const RUN_OUTCOMES: Partial<Record<ReactorEvent['type'], string>> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.halted': 'halted',
  'run.cancelled': 'cancelled',
  'run.parked': 'parked',
  'run.paused': 'paused',
  'run.paused_on_failure': 'paused_on_failure',
};
const QUEUED_OUTCOMES: Record<string, string | undefined> = { start: 'queued', retry: 'retrying', park: 'parked' };

/** Where an event goes: its rollback span, its step span (or the nearest open ancestor), else the run frame. */
function target(open: OpenSpans, event: ReactorEvent): OpenSpan | undefined {
  const step = 'step' in event ? event.step : undefined;
  if (step === undefined) return open.frame(event.executionId);
  if (event.type === 'step.compensated' || event.type === 'step.compensate_failed')
    return open.nested('compensate', event.executionId, step) ?? open.frame(event.executionId);
  if (event.type === 'step.undone' || event.type === 'step.undo_failed')
    return open.nested('undo', event.executionId, step) ?? open.frame(event.executionId);
  return open.nested('step', event.executionId, step) ?? open.parentOf(event.executionId, step);
}

/** The attributes of an event's span event. */
function eventAttributes(event: ReactorEvent): Attributes {
  const attributes: Attributes = {};
  const e = event as unknown as Partial<Record<string, unknown>>;
  if (typeof e['step'] === 'string') attributes[ATTR.step] = e['step'];
  if (typeof e['key'] === 'string') attributes[ATTR.key] = e['key'];
  if (typeof e['primitive'] === 'string') attributes[ATTR.primitive] = e['primitive'];
  for (const name of [
    'attempt',
    'delayMs',
    'waitedMs',
    'retryAfterMs',
    'timeoutMs',
    'wakeAt',
    'nesting',
    'nonce',
    'delivery',
    'limit',
    'periodMs',
  ] as const) {
    const value = e[name];
    if (typeof value === 'number') attributes[`ts_reactor.${snake(name)}`] = value;
  }
  for (const name of ['reason', 'holder', 'token', 'bucket', 'jobId', 'message', 'idempotencyKey'] as const) {
    const value = e[name];
    if (typeof value === 'string') attributes[`ts_reactor.${snake(name)}`] = value;
  }
  if (typeof e['ignoredSignal'] === 'boolean') attributes['ts_reactor.ignored_signal'] = e['ignoredSignal'];
  for (const name of ['early', 'refunded', 'handedOver'] as const) {
    const value = e[name];
    if (typeof value === 'boolean') attributes[`ts_reactor.${snake(name)}`] = value;
  }
  const error = e['error'] as { name?: string; message?: string; code?: string } | undefined;
  if (error) {
    attributes['exception.type'] = error.code ?? error.name ?? 'Error';
    attributes['exception.message'] = error.message ?? '';
  }
  return attributes;
}

/** Applies one event to the spans open in this process. */
export function applyEvent(open: OpenSpans, event: ReactorEvent, recordInput: boolean): void {
  const at = target(open, event);
  if (!at) return;
  const runOutcome = event.type === 'run.queued' ? QUEUED_OUTCOMES[event.reason] : RUN_OUTCOMES[event.type];
  if (runOutcome !== undefined && (event.type !== 'run.queued' || at.outcome !== 'parked')) {
    at.outcome = runOutcome;
    if (event.type === 'run.failed') at.error = event.error;
  }
  if (event.type === 'step.started') at.span.setAttribute(ATTR.attempt, event.attempt);
  if (event.type === 'run.started' && recordInput) at.span.setAttribute(ATTR.input, jsonOf(event.input));
  if (event.type === 'step.started' || event.type === 'run.started') return;
  at.span.addEvent(event.type, eventAttributes(event));
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function jsonOf(value: unknown): string {
  try {
    const json = JSON.stringify(value) ?? 'undefined';
    return json.length > 4096 ? `${json.slice(0, 4096)}…` : json;
  } catch {
    return '[unserializable]';
  }
}
