/**
 * Starts on events across processes, on Redis and PostgreSQL (docs/events.md, "Starting a reactor
 * on an event"; docs/decisions/145): three sender processes (`event-trigger-process.ts`) each send
 * the same 50 event ids at once, every id to a reactor that starts on the event. Each id is
 * accepted by exactly one process, every process is answered the same execution for an id, and
 * the backend holds exactly 50 executions, one per event, each recorded on its event. A worker in
 * this process then runs them all to completion.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { describeOnBackends } from '../support/backend-matrix.js';
import { spawnJsonChild } from '../support/json-child.js';
import { onPaid, type EventTriggerConfig, type SentLine } from './event-trigger-protocol.js';

const SENDER = fileURLToPath(new URL('./event-trigger-process.ts', import.meta.url));
const EVENTS = 50;
const PROCESSES = 3;

describeOnBackends(
  'starts on events across processes',
  (backend) => {
    const children = new Set<ChildProcess>();
    afterEach(() => {
      for (const child of children) child.kill('SIGKILL');
      children.clear();
    });

    test(`${PROCESSES} processes sending the same ${EVENTS} events at once start exactly one execution per event`, async () => {
      const runtime = backend.runtime({ reactors: [onPaid] });
      const ids = Array.from({ length: EVENTS }, (_, i) => `mp-pay-${i}`);
      const senders = Array.from({ length: PROCESSES }, (_, index) => {
        const config: EventTriggerConfig = {
          backend: backend.name,
          address: backend.address(),
          namespace: runtime.namespace,
          ids,
          index,
        };
        return spawnJsonChild(SENDER, config, children);
      });
      await Promise.all(senders.map((s) => s.line((v) => v.ready === true)));
      for (const s of senders) s.child.stdin?.write('go\n');
      const lines = await Promise.all(senders.map((s) => s.line<SentLine>((v) => v.sent === true)));

      const all = lines.flatMap((l) => l.results);
      expect(all).toHaveLength(EVENTS * PROCESSES);
      const byId = new Map<string, string>();
      for (const id of ids) {
        const mine = all.filter((r) => r.id === id);
        expect(
          mine.filter((r) => r.status === 'accepted'),
          id,
        ).toHaveLength(1);
        expect(new Set(mine.map((r) => JSON.stringify(r.started))).size, id).toBe(1);
        expect(mine[0]?.started, id).toHaveLength(1);
        byId.set(id, mine[0]!.started[0]!);
      }
      expect(new Set(byId.values()).size).toBe(EVENTS);

      const executions = [];
      for (let page = await runtime.engine.list({ reactor: 'mp-on-paid', limit: 100 }); ;) {
        executions.push(...page.executions);
        if (page.cursor === undefined) break;
        page = await runtime.engine.list({ reactor: 'mp-on-paid', limit: 100, cursor: page.cursor });
      }
      expect(executions).toHaveLength(EVENTS);
      for (const e of executions) expect(byId.get(e.tags.event ?? '')).toBe(e.executionId);
      const events = (await runtime.engine.listEvents({ name: 'mp.order.paid', limit: 100 })).events;
      expect(events).toHaveLength(EVENTS);
      for (const e of events) expect(e.effects.started, e.id).toEqual([byId.get(e.id)]);

      runtime.startWorker({ concurrency: 8 });
      for (const [id, executionId] of byId) {
        const done = await runtime.engine.wait(executionId, onPaid, { timeoutMs: 120_000 });
        expect(done.status === 'completed' && done.value, id).toBe(id);
      }
    }, 300_000);
  },
  { backends: ['redis', 'postgres'] },
);
