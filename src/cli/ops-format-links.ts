/**
 * Plain-text pieces of `executions list | show` for paused executions and linked executions:
 * an interrupt with its correlation id and timeout, a wait for an event with its event, match
 * key and timeout, and the child executions (async units,
 * composed or fanned-out children) with their status.
 *
 * @module
 */
import type { ExecutionDetail, InterruptView } from '../ops/types.js';
import { isoTime } from '../ops/time.js';

function utc(ms: number): string {
  return isoTime(ms).slice(0, 19).replace('T', ' ');
}

/** `approve (correlation po-7, timeout 2026-11-30 10:00:00)`: an interrupt's step path and what identifies and ends it. */
export function interruptText(i: InterruptView): string {
  const details = [
    ...(i.correlationId === undefined ? [] : [`correlation ${i.correlationId}`]),
    i.timeoutAt === undefined ? 'no timeout' : `timeout ${utc(i.timeoutAt)}`,
  ];
  return `${i.step} (${details.join(', ')})`;
}

/**
 * `payment.settled at step payment (match key ["o-1"], timeout 2026-11-30 10:00:00)`: a
 * `.waitForEvent` wait's event, its step path, the match key a sent event must have (none: its
 * `match` predicate alone decides) and its timeout. Only a sent event resumes it.
 */
export function eventWaitText(i: InterruptView & { readonly event: NonNullable<InterruptView['event']> }): string {
  const details = [
    i.event.matchKey === '' ? 'no match key' : `match key ${i.event.matchKey}`,
    i.timeoutAt === undefined ? 'no timeout' : `timeout ${utc(i.timeoutAt)}`,
  ];
  return `${i.event.name} at step ${i.step} (${details.join(', ')})`;
}

/**
 * The child executions of `e` (records whose `parentId` is `e`), one line each with its status;
 * a child a step dispatched as an async unit names that step, and one the execution is parked
 * on is marked `awaited`.
 */
export function linkedText(e: ExecutionDetail): string[] {
  const children = e.links.children;
  if (children.length === 0) return [];
  const stepOf = new Map(
    e.steps.flatMap((s) => (s.record.unitId === undefined ? [] : [[s.record.unitId, s.path] as const])),
  );
  const awaited = e.status === 'parked' && e.waitingFor?.primitive === 'async' ? e.waitingFor.key : undefined;
  const lines = [`  children (${children.length})`];
  for (const c of children) {
    const step = stepOf.get(c.id);
    const role = step === undefined ? '' : `  async unit of step ${step}`;
    lines.push(
      `    ${c.id}  ${c.reactor.padEnd(16)} ${c.status.padEnd(12)}${role}${c.id === awaited ? '  (awaited)' : ''}`.trimEnd(),
    );
  }
  return lines;
}
