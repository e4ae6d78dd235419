/**
 * Attempts are never under-counted (docs/decisions/098), on the memory backend with a manual
 * clock: a job that finds its execution `running` (its last worker was lost mid-job) records the
 * attempts that worker may have run — exactly the started, unsettled ones in durable mode
 * (`checkpointIntervalMs: 0`), every step that could have started since the last checkpoint with
 * an interval — counts them, logs them with their worker and announces them; a rollback
 * compensates such a step as one whose body ran; in durable mode each start is on the record
 * before its body runs, carried by the checkpoint before it; and the persisted trace keeps every
 * event from `run.queued` on.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, type ExecutionRecord, type ReactorEvent } from '../../src/index.js';
import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { MemoryStore } from '../../src/storage/memory/store.js';
import { ManualClock } from '../../src/testing/index.js';
import { METRICS, prometheusMetrics, type PrometheusMetrics } from '../../src/metrics/index.js';
import { eventsOf, manualEngine, untilStatus, type Manual } from './helpers.js';

const LOST = 'lost-host-1/deadbeef';

function setup(checkpointIntervalMs?: number): { clock: ManualClock; m: Manual; metrics: PrometheusMetrics } {
  const clock = new ManualClock();
  const metrics = prometheusMetrics();
  const m = manualEngine({
    clock,
    middleware: [metrics.middleware],
    store: new MemoryStore({ clock }),
    coordinator: new MemoryCoordinator({ clock }),
    ...(checkpointIntervalMs === undefined ? {} : { checkpointIntervalMs }),
  });
  return { clock, m, metrics };
}

/** The value of `ts_reactor_step_attempts_lost_total` for `step` and `outcome`. */
async function lostCount(metrics: PrometheusMetrics, step: string, outcome: string): Promise<number> {
  const line = (await metrics.text())
    .split('\n')
    .find(
      (l) =>
        l.startsWith(`${METRICS.attemptsLost.name}_total{`) &&
        l.includes(`step="${step}"`) &&
        l.includes(`outcome="${outcome}"`),
    );
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** `a → charge → ship`, each body counted; `charge` compensated (counted) on rollback. */
function payment(options: { readonly failCharge?: boolean } = {}) {
  const bodies: Record<string, number> = {};
  const compensated: string[] = [];
  const count = (name: string): void => void (bodies[name] = (bodies[name] ?? 0) + 1);
  const r = reactor('attempts-payment')
    .input({ order: z.string() })
    .step('a', { run: () => (count('a'), 'a') })
    .step('charge', {
      args: ($) => ({ a: $.result('a') }),
      retry: { maxAttempts: 2, baseDelay: 1 },
      run: () => {
        count('charge');
        if (options.failCharge) throw new Error('card declined');
        return 'charged';
      },
      compensate: () => void compensated.push('charge'),
    })
    .step('ship', { args: ($) => ({ c: $.result('charge') }), run: () => (count('ship'), 'shipped') })
    .background('all')
    .returns('ship');
  return { r, bodies, compensated };
}

/** Rewrites the pending record as a worker lost while `charge` ran would have left it. */
async function lostWhileCharging(
  m: Manual,
  clock: ManualClock,
  executionId: string,
  how: { readonly marksStarts: boolean },
): Promise<ExecutionRecord> {
  const record = (await m.store.get(executionId))!;
  const at = clock.now();
  const base = { executionId, rootExecutionId: executionId, reactor: record.reactor, at };
  const trace: ReactorEvent[] = [
    ...(record.trace ?? []),
    { ...base, type: 'run.resumed', jobId: `${executionId}:1`, delivery: 1 },
    { ...base, type: 'step.started', step: 'a', attempt: 1 },
    { ...base, type: 'step.succeeded', step: 'a', attempt: 1 },
  ];
  const lost: ExecutionRecord = {
    ...record,
    status: 'running',
    steps: {
      a: {
        status: 'completed',
        attempts: 1,
        result: 'a',
        completedSeq: 1,
        runs: [{ attempt: 1, worker: LOST, outcome: 'succeeded', startedAt: at, endedAt: at }],
      },
      ...(how.marksStarts
        ? { charge: { status: 'running', attempts: 1, started: { attempt: 1, worker: LOST, at } } }
        : {}),
    },
    background: { ...record.background!, lastJob: { worker: LOST, marksStarts: how.marksStarts } },
    trace,
  };
  await m.store.save(lost);
  return lost;
}

describe('a job taking over from a lost worker records what it may have run', () => {
  test('durable mode: the started, unsettled attempt is recorded worker_lost and counted; the next is attempt 2', async () => {
    const { clock, m, metrics } = setup(0);
    const { r, bodies } = payment();
    const { executionId } = await m.engine.start(r, { order: 'o-1' });
    const queued = (await m.store.get(executionId))!.trace!;
    await lostWhileCharging(m, clock, executionId, { marksStarts: true });
    const worker = m.startWorker(1);
    try {
      const done = await untilStatus(m.engine, executionId, 'completed');
      expect(bodies).toEqual({ charge: 1, ship: 1 });
      const charge = done.steps.charge!;
      expect(charge.attempts).toBe(2);
      expect(charge.runs?.map((x) => [x.attempt, x.outcome, x.worker])).toEqual([
        [1, 'worker_lost', LOST],
        [2, 'succeeded', expect.stringMatching(/^local\//)],
      ]);
      expect(charge.started).toBeUndefined();
      // Nothing else was lost: a completed on the record, ship never started.
      expect(done.steps.a!.runs).toHaveLength(1);
      expect(done.steps.ship!.runs?.map((x) => x.outcome)).toEqual(['succeeded']);
      expect(eventsOf(done.trace, 'step.attempt_lost')).toEqual([
        expect.objectContaining({ step: 'charge', attempt: 1, outcome: 'worker_lost', worker: LOST }),
      ]);
      expect(await lostCount(metrics, 'charge', 'worker_lost')).toBe(1);
      expect(await lostCount(metrics, 'ship', 'worker_lost')).toBe(0);
      // The trace is append-only: everything the lost worker wrote, then this job's events.
      expect(done.trace.slice(0, queued.length)).toEqual(queued);
      expect(done.trace[0]?.type).toBe('run.queued');
      expect(done.trace.map((e) => e.type)).toEqual(
        expect.arrayContaining(['run.queued', 'run.resumed', 'step.attempt_lost', 'run.completed']),
      );
      expect(eventsOf(done.trace, 'run.resumed')).toHaveLength(2);
      expect(eventsOf(done.trace, 'step.started').map((e) => [e.step, e.attempt])).toEqual([
        ['a', 1],
        ['charge', 2],
        ['ship', 1],
      ]);
    } finally {
      await worker.close();
    }
  });

  test('with a checkpoint interval: every step that could have started since the last checkpoint "may have run", once', async () => {
    const { clock, m, metrics } = setup();
    const { r, bodies } = payment();
    const { executionId } = await m.engine.start(r, { order: 'o-2' });
    await lostWhileCharging(m, clock, executionId, { marksStarts: false });
    const worker = m.startWorker(1);
    try {
      const done = await untilStatus(m.engine, executionId, 'completed');
      expect(bodies).toEqual({ charge: 1, ship: 1 });
      // charge was ready on the record; ship could have run once charge completed unrecorded.
      for (const step of ['charge', 'ship']) {
        const record = done.steps[step]!;
        expect(record.attempts).toBe(2);
        expect(record.runs?.map((x) => [x.attempt, x.outcome, x.worker])).toEqual([
          [1, 'may_have_run', LOST],
          [2, 'succeeded', expect.stringMatching(/^local\//)],
        ]);
      }
      expect(done.steps.a!.attempts).toBe(1);
      expect(eventsOf(done.trace, 'step.attempt_lost').map((e) => [e.step, e.outcome])).toEqual([
        ['charge', 'may_have_run'],
        ['ship', 'may_have_run'],
      ]);
      expect(await lostCount(metrics, 'charge', 'may_have_run')).toBe(1);
      expect(await lostCount(metrics, 'ship', 'may_have_run')).toBe(1);
      expect(done.trace[0]?.type).toBe('run.queued');
    } finally {
      await worker.close();
    }
  });

  test('a map that runs its elements in the worker is not counted: neither it, its elements nor the steps after it (documented)', async () => {
    const { clock, m } = setup();
    const ran: string[] = [];
    const line = reactor('attempts-line')
      .input({ n: z.number() })
      .step('charge', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (ran.push(`line ${n}`), n) })
      .returns('charge');
    const r = reactor('attempts-map')
      .step('a', { run: () => (ran.push('a'), [1, 2]) })
      .map('lines', { source: ($) => $.result('a'), each: line, args: (n) => ({ n }), waitFor: ['a'] })
      .step('after', { waitFor: ['lines'], run: () => (ran.push('after'), 'done') })
      .background('all')
      .returns('after');
    const { executionId } = await m.engine.start(r, {});
    const record = (await m.store.get(executionId))!;
    const at = clock.now();
    await m.store.save({
      ...record,
      status: 'running',
      steps: { a: { status: 'completed', attempts: 1, result: [1, 2], completedSeq: 1 } },
      background: { ...record.background!, lastJob: { worker: LOST, marksStarts: false } },
      updatedAt: at,
    });
    const worker = m.startWorker(1);
    try {
      const done = await untilStatus(m.engine, executionId, 'completed');
      expect(ran).toEqual(['line 1', 'line 2', 'after']);
      expect(eventsOf(done.trace, 'step.attempt_lost')).toEqual([]);
      expect(done.steps.after!.attempts).toBe(1);
      expect(done.steps.lines!.runs?.some((x) => x.outcome === 'may_have_run') ?? false).toBe(false);
    } finally {
      await worker.close();
    }
  });

  test('a redelivered job of a record still pending (nothing checkpointed yet) counts the first steps as may have run', async () => {
    const { m } = setup();
    const { r } = payment();
    const { executionId } = await m.engine.start(r, { order: 'o-3' });
    const job = { v: 1 as const, executionId, reactor: r.name };
    await m.engine.process(job, { jobId: `${executionId}:1`, delivery: 2 });
    const done = await untilStatus(m.engine, executionId, 'completed');
    expect(done.steps.a!.runs?.map((x) => x.outcome)).toEqual(['may_have_run', 'succeeded']);
    expect(done.steps.a!.runs?.[0]?.worker).toBeUndefined(); // the lost delivery wrote nothing: its worker is unknown
    expect(done.steps.charge!.attempts).toBe(2);
  });

  test('the same delivery of a pending record in durable mode records nothing lost (a durable job writes running first)', async () => {
    const { m } = setup(0);
    const { r } = payment();
    const { executionId } = await m.engine.start(r, { order: 'o-4' });
    await m.engine.process({ v: 1, executionId, reactor: r.name }, { jobId: `${executionId}:1`, delivery: 2 });
    const done = await untilStatus(m.engine, executionId, 'completed');
    expect(eventsOf(done.trace, 'step.attempt_lost')).toEqual([]);
    expect(Object.values(done.steps).map((s) => s.attempts)).toEqual([1, 1, 1]);
  });

  test('a lost attempt is compensated on rollback as a started body, even when its re-run fails before its body', async () => {
    const clock = new ManualClock();
    const m = manualEngine({
      clock,
      store: new MemoryStore({ clock }),
      coordinator: new MemoryCoordinator({ clock }),
      checkpointIntervalMs: 0,
      background: { contentionCap: 0 }, // a busy key fails the step at once
    });
    const rolledBack: string[] = [];
    let bodies = 0;
    const r = reactor('attempts-payment')
      .input({ order: z.string() })
      .step('a', { run: () => 'a', undo: () => void rolledBack.push('undo a') })
      .step('charge', {
        args: ($) => ({ a: $.result('a') }),
        lock: { key: () => 'card:1' },
        run: () => (bodies++, 'charged'),
        compensate: () => void rolledBack.push('compensate charge'),
      })
      .background('all')
      .returns('charge');
    const { executionId } = await m.engine.start(r, { order: 'o-5' });
    await lostWhileCharging(m, clock, executionId, { marksStarts: true });
    // Someone else holds charge's key: its re-run fails at admission, before its body (a step that
    // never started is not compensated; this one is, as its lost attempt may have run).
    await m.coordinator.lockAcquire({
      key: 'card:1',
      holder: { owner: 'someone-else', reactor: 'other' },
      ttlMs: 600_000,
    });
    const worker = m.startWorker(1);
    try {
      const done = await untilStatus(m.engine, executionId, 'failed');
      expect(bodies).toBe(0);
      // The compensation is due (the body may have run); it re-takes charge's key, which is still held elsewhere.
      expect(done.rollbackFailures).toEqual([
        expect.objectContaining({ step: 'charge', kind: 'compensate', reason: 'coordination_unavailable' }),
      ]);
      expect(rolledBack).toEqual(['undo a']);
      expect(done.steps.charge!.attempts).toBe(1);
      expect(done.steps.charge!.runs?.map((x) => x.outcome)).toEqual(['worker_lost']);
      expect(eventsOf(done.trace, 'step.failed')).toEqual([expect.objectContaining({ step: 'charge', started: true })]);
    } finally {
      await worker.close();
    }
  });
});

describe('durable mode: each attempt start is on the record before its body runs', () => {
  test("a linear chain: the job's first checkpoint carries the first start, the one after each step the next (no write of their own); the trace is on every record", async () => {
    const { m } = setup(0);
    const saves: ExecutionRecord[] = [];
    const save = m.store.save.bind(m.store);
    m.store.save = async (record) => (saves.push(structuredClone(record)), save(record));
    const seen: { step: string; saves: number; record: ExecutionRecord }[] = [];
    const at = (step: string) => (): string => {
      const record = saves[saves.length - 1]!;
      seen.push({ step, saves: saves.length, record });
      return step;
    };
    const r = reactor('attempts-chain')
      .step('a', { run: at('a') })
      .step('b', { args: ($) => ({ a: $.result('a') }), run: at('b') })
      .step('c', { args: ($) => ({ b: $.result('b') }), run: at('c') })
      .background('all')
      .returns('c');
    const { executionId } = await m.engine.start(r, {});
    const worker = m.startWorker(1);
    try {
      await untilStatus(m.engine, executionId, 'completed');
      for (const { step, record } of seen) {
        expect(record.status).toBe('running');
        expect(record.steps[step]).toMatchObject({ status: 'running', attempts: 1, started: { attempt: 1 } });
        expect(record.trace?.[0]?.type).toBe('run.queued');
      }
      // b's start and a's completion are one write, and so are c's start and b's completion.
      const [a, b, c] = seen;
      // a's start rides on the job's first checkpoint (the one that says running).
      expect(a!.saves).toBe(saves.findIndex((s) => s.status === 'running') + 1);
      expect(b!.record.steps.a).toMatchObject({ status: 'completed' });
      expect(c!.record.steps.b).toMatchObject({ status: 'completed' });
      const completedAt = (step: string): number => saves.findIndex((s) => s.steps[step]?.status === 'completed') + 1;
      expect(b!.saves).toBe(completedAt('a'));
      expect(c!.saves).toBe(completedAt('b'));
      // Each intermediate record carries the events so far (a worker's checkpoint never drops the trace).
      expect(c!.record.trace?.map((e) => e.type)).toEqual(
        expect.arrayContaining(['run.queued', 'run.resumed', 'step.succeeded']),
      );
    } finally {
      await worker.close();
    }
  });

  test("the last step's outcome rides on the final record (decision 154); a step settling while another runs writes its own", async () => {
    const { m } = setup(0);
    const saves: ExecutionRecord[] = [];
    const save = m.store.save.bind(m.store);
    m.store.save = async (record) => (saves.push(structuredClone(record)), save(record));
    let release = (): void => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const r = reactor('attempts-last')
      .step('a', { run: () => 'a' })
      .step('fast', { args: ($) => ({ a: $.result('a') }), run: () => 'fast' })
      .step('slow', { args: ($) => ({ a: $.result('a') }), run: async () => (await slow, 'slow') })
      .background('all')
      .returns('slow');
    const { executionId } = await m.engine.start(r, {});
    const worker = m.startWorker(1);
    try {
      await untilStatus(m.engine, executionId, 'running');
      const firstFast = (): number => saves.findIndex((s) => s.steps.fast?.status === 'completed');
      for (let i = 0; i < 200 && firstFast() < 0; i++) await new Promise((resolve) => setImmediate(resolve));
      // `fast` settled while `slow` ran: its own checkpoint, still running.
      expect(saves[firstFast()]).toMatchObject({ status: 'running' });
      release();
      await untilStatus(m.engine, executionId, 'completed');
      // `slow` settled last: no checkpoint of its own, the final record says it.
      const firstSlow = saves.findIndex((s) => s.steps.slow?.status === 'completed');
      expect(saves[firstSlow]).toMatchObject({ status: 'completed', value: 'slow' });
      expect(saves.slice(firstSlow)).toHaveLength(1);
    } finally {
      release();
      await worker.close();
    }
  });

  test('a last step whose result is a large part of the record limit is written at once (refused at that step when too large)', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock, maxRecordBytes: 64 * 1024 });
    const m = manualEngine({ clock, store, coordinator: new MemoryCoordinator({ clock }), checkpointIntervalMs: 0 });
    const statuses: string[] = [];
    const save = store.save.bind(store);
    store.save = async (record) => (statuses.push(`${record.status}:${record.steps.big?.status ?? '-'}`), save(record));
    const r = reactor('attempts-last-big')
      .step('big', { run: () => 'x'.repeat(20 * 1024) })
      .background('all')
      .returns('big');
    const { executionId } = await m.engine.start(r, {});
    const worker = m.startWorker(1);
    try {
      await untilStatus(m.engine, executionId, 'completed');
      expect(statuses).toContain('running:completed');
    } finally {
      await worker.close();
    }
  });

  test('with a checkpoint interval no start is written (a lost worker is then counted as may have run)', async () => {
    const { m } = setup();
    const marks: unknown[] = [];
    const save = m.store.save.bind(m.store);
    m.store.save = async (record) => {
      for (const step of Object.values(record.steps)) if (step.started) marks.push(step.started);
      return save(record);
    };
    const { r } = payment();
    const { executionId } = await m.engine.start(r, { order: 'o-6' });
    const worker = m.startWorker(1);
    try {
      const done = await untilStatus(m.engine, executionId, 'completed');
      expect(marks).toEqual([]);
      expect(done.steps.charge!.runs?.map((x) => x.outcome)).toEqual(['succeeded']);
    } finally {
      await worker.close();
    }
  });
});

test('a checkpoint refused for its size with the trace aboard is written with the trace folded, not failing the step', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore({ clock, maxRecordBytes: 8_000 });
  const m = manualEngine({ clock, store, coordinator: new MemoryCoordinator({ clock }), checkpointIntervalMs: 0 });
  let chain = reactor('attempts-long').step('s0', { run: () => 0 });
  for (let i = 1; i < 30; i++) {
    const dep = `s${i - 1}`;
    chain = chain.step(`s${i}`, { waitFor: [dep as 's0'], run: () => i });
  }
  const r = chain.background('all').build();
  const { executionId } = await m.engine.start(r, {});
  const worker = m.startWorker(1);
  try {
    const done = await untilStatus(m.engine, executionId, 'completed');
    expect(Object.keys(done.steps)).toHaveLength(30);
    expect(done.trace[0]?.type).toBe('run.queued');
    expect(done.trace.some((e) => e.type === 'trace.summarized')).toBe(true);
  } finally {
    await worker.close();
  }
});
