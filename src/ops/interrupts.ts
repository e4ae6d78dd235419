/**
 * The interrupts a paused execution waits at, as operators see them: step path, correlation id,
 * when it paused, its timeout, and the invalid payloads counted against `maxAttempts`; a
 * `.waitForEvent` step's wait also names its event and match key.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { ExecutionRecord } from '../ports/store.js';
import type { InterruptView } from './types.js';

/**
 * The open interrupts of a paused record (those no accepted resume has answered yet); empty for
 * any other status. `maxAttempts` comes from the definition when it is known (0 = unlimited).
 */
export function interruptViews(record: ExecutionRecord, definition: AnyReactorDefinition | undefined): InterruptView[] {
  if (record.status !== 'paused') return [];
  return (record.interrupts ?? [])
    .filter((i) => i.resumedAt === undefined)
    .map((i) => {
      const node = definition?.nodes.find((n) => n.name === i.step);
      const max = node?.kind === 'interrupt' ? node.interrupt.maxAttempts : undefined;
      return {
        step: i.step,
        ...(i.correlationId === undefined ? {} : { correlationId: i.correlationId }),
        pausedAt: i.pausedAt,
        ...(i.timeoutAt === undefined ? {} : { timeoutAt: i.timeoutAt }),
        invalidAttempts: i.invalidAttempts,
        ...(max === undefined ? {} : { maxAttempts: max }),
        ...(i.event === undefined ? {} : { event: { name: i.event.name, matchKey: i.event.matchKey } }),
      };
    });
}
