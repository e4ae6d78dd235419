/**
 * A cancel announced before this engine's subscription to announcements was in place is not
 * lost: once the engine listens, it re-reads the cancel markers of the runs it tracks
 * (docs/decisions/058). Both backends; on Redis the subscription is on its way while the
 * announcement is published.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CancelTargets } from '../../src/engine/execution/cancels.js';
import { cancelRequestKey } from '../../src/engine/model/keys.js';
import type { Coordinator } from '../../src/ports/coordinator.js';
import { MemoryCoordinator } from '../../src/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { offered } from '../support/fast-paths.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer(); // disposed of after the hook below (after hooks run in reverse order)
const backends: RedisBackend[] = [];

afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
});

const noInline = { get: () => undefined, ids: () => [] };
const aborted = (controller: AbortController): Promise<string> =>
  controller.signal.aborted
    ? Promise.resolve('aborted')
    : Promise.race([
        new Promise<string>((resolve) => controller.signal.addEventListener('abort', () => resolve('aborted'))),
        new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 10_000)),
      ]);

/** The operator's side of a cancel: the marker, then the announcement. */
async function requestCancel(coordinator: Coordinator, executionId: string): Promise<void> {
  await coordinator.periodMark({ key: cancelRequestKey(executionId), bucket: 'requested', ttlMs: 60_000 });
  await offered(coordinator, 'cancels').announceCancel(executionId);
}

describe.each(['memory', 'redis'] as const)('cancel announcements on %s', (kind) => {
  const pair = (): { listener: Coordinator; operator: Coordinator } => {
    if (kind === 'memory') {
      const shared = new MemoryCoordinator();
      return { listener: shared, operator: shared };
    }
    const prefix = `cl${crypto.randomUUID().slice(0, 8)}`;
    const a = createRedisBackend({ url: server.url, prefix });
    const b = createRedisBackend({ url: server.url, prefix });
    backends.push(a, b);
    return { listener: a.coordinator, operator: b.coordinator };
  };

  it('a cancel requested before the engine listened still aborts the run once it listens', async () => {
    const { listener, operator } = pair();
    await requestCancel(operator, 'e-early'); // nobody listens yet: the announcement reaches no one
    const targets = new CancelTargets(listener, noInline);
    const controller = new AbortController();
    targets.track('e-early', controller); // starts listening
    expect(await aborted(controller)).toBe('aborted');
  });

  it('a cancel announced while the subscription is on its way aborts the run', async () => {
    const { listener, operator } = pair();
    const targets = new CancelTargets(listener, noInline);
    const controller = new AbortController();
    targets.track('e-racing', controller); // SUBSCRIBE sent (on Redis: a new connection, several round trips)
    await requestCancel(operator, 'e-racing'); // published on a ready connection, before the subscription
    expect(await aborted(controller)).toBe('aborted');
  });

  it('a run whose execution was not cancelled keeps running', async () => {
    const { listener, operator } = pair();
    await requestCancel(operator, 'e-other');
    const targets = new CancelTargets(listener, noInline);
    const controller = new AbortController();
    targets.track('e-mine', controller);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the subscription and the re-read are done
    expect(controller.signal.aborted).toBe(false);
  });
});
