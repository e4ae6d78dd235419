/**
 * Matching a sent event to the executions waiting for it (decision 149): the event's match keys
 * are computed from the `matchOn` lists the registered reactors declare for its name (static,
 * from the registry), each key's registrations are read from the event-wait index page by page
 * (never another key's), and every one is delivered the event (`deliver.ts`), a few at a time.
 *
 * @module
 */
import { matchOnListsFor } from '../../../dsl/wait-for-event-nodes.js';
import type { StoredEvent } from '../../../ports/event-log.js';
import { matchKeyOf } from '../../../ports/event-waits.js';
import { deliverEvent, type DeliverDeps, type DeliveryOutcome, type WaitTarget } from './deliver.js';

/** Registrations read per lookup page. */
const LOOKUP_PAGE = 500;
/** Deliveries of one event running at once. */
const DELIVERIES_AT_ONCE = 8;

/** What {@link resumeWaitsFor} did: how many waits each outcome had. */
export type MatchCounts = Readonly<Partial<Record<DeliveryOutcome, number>>>;

/** Delivers `event` to every execution registered as waiting for it under one of its match keys. */
export async function resumeWaitsFor(deps: DeliverDeps, event: StoredEvent): Promise<MatchCounts> {
  const index = deps.index;
  if (index === undefined) return {};
  const targets: WaitTarget[] = [];
  const seen = new Set<string>();
  for (const fields of matchOnListsFor(deps.registry.values(), event.name)) {
    const key = { event: event.name, matchKey: matchKeyOf(fields, event.payload) };
    if (seen.has(key.matchKey)) continue;
    seen.add(key.matchKey);
    let after: string | undefined;
    do {
      const page = await index.lookup(key, 'resume', { limit: LOOKUP_PAGE, ...(after === undefined ? {} : { after }) });
      for (const wait of page.waits)
        targets.push({ executionId: wait.executionId, step: wait.ref, matchKey: wait.matchKey });
      after = page.cursor;
    } while (after !== undefined);
  }
  const counts: Partial<Record<DeliveryOutcome, number>> = {};
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < targets.length) {
      const target = targets[next++]!;
      let outcome: DeliveryOutcome;
      try {
        outcome = await deliverEvent(deps, target, event);
      } catch (error) {
        deps.logger.warn(
          { executionId: target.executionId, step: target.step, eventId: event.id, error: String(error) },
          `event ${event.id} could not be delivered to execution ${target.executionId}`,
        );
        continue;
      }
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELIVERIES_AT_ONCE, targets.length) }, worker));
  return counts;
}
