/**
 * The queue contract: what the engine relies on from a `JobQueue` and its `JobConsumer`s
 * (`src/engine/ports/queue.ts`), written once over a backend factory and run on every queue —
 * the embedded queue on a manual clock (`memory-queue.test.ts`) and BullMQ with real consumer
 * processes on a throwaway redis-server (`bullmq-queue.test.ts`), on a local Redis Cluster
 * (`bullmq-cluster-queue.test.ts`) and on BullMQ 6's PostgreSQL backend over a throwaway
 * PostgreSQL server (`bullmq-postgres-queue.test.ts`).
 *
 * Covered: delivery (the payload's known fields, the job id, the delivery count), delays and
 * `earlyMs`, `promote`, priorities, dedupe by job id (`enqueue` and `enqueueMany`), `discard`,
 * `jobStates`, malformed payloads (refused at enqueue before anything is written; failed without a
 * retry at delivery, also when another producer wrote them), infrastructure failures (delivered
 * again with a backoff, a bounded number of times), the consumer's concurrency and graceful stop,
 * and stalls (the job of a consumer that died or froze past its lock is delivered again; a live
 * consumer keeps its job however long it runs).
 *
 * Where queues differ on purpose, the backend says which way it goes in
 * {@link QueueCapabilities}, and the suite checks that way; anything else is the same everywhere.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MalformedJobError } from '../../src/errors.js';
import type {
  EnqueueEntry,
  ExecutionJob,
  JobConsumer,
  JobDelivery,
  JobPlace,
  JobProcessor,
  JobQueue,
} from '../../src/ports/queue.js';
import { decodeJob } from '../../src/queue/payload.js';
import { INFRA_ATTEMPTS, INFRA_BACKOFF_MS } from '../../src/queue/policy.js';

/** How time passes for a backend under test. */
export interface ContractTime {
  /** Now, in ms, on the clock the queue counts its delays on. */
  now(): number;
  /** Lets `ms` pass: advances a manual clock (and lets what it released run); waits on a real one. */
  elapse(ms: number): Promise<void>;
  /**
   * Waits until `probe` holds — without letting a manual clock move — and fails naming `what`
   * when it does not in time (a real backend waits up to `timeoutMs`, default 90 s).
   */
  until(probe: () => boolean | Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
}

/**
 * The ways queues differ on purpose. Each is checked its own way by the suite.
 *
 * - `discarded`: what a discarded job leaves. `remembered`: its id stays known as finished
 *   (`jobStates` says `finished`; enqueuing it again is a no-op) — the embedded queue.
 *   `forgotten`: the job is removed (`missing`; enqueuing the id again adds a new job) — BullMQ.
 * - `foreignProducers`: whether a job can be written other than through `enqueue` (by another
 *   format version, another process): `none` for the embedded queue (every job is validated on the
 *   way in), `raw` for a shared queue (the consumer hands such a payload over as written).
 * - `stalls`: how a job whose consumer stopped renewing it comes back. `process`: the consumer is
 *   another process, which may die or freeze; its job is delivered again after its lock lapses.
 *   `in-process`: the queue lives in its consumer's process, so a consumer cannot die or freeze
 *   apart from its queue: nothing stalls, a running job is never delivered twice.
 * - `stopping`: what a consumer's `stop` does with a job that arrives while it waits for its
 *   in-flight ones. `takes-nothing`: it is left queued for the next consumer — the embedded queue.
 *   `finishes-arrivals`: a consumer with a free slot, waiting for work, may still take it, and runs
 *   it to the end before `stop` resolves (nothing is left active) — BullMQ, whose worker takes the
 *   job its blocking wait returns even once it is closing.
 */
export interface QueueCapabilities {
  readonly discarded: 'remembered' | 'forgotten';
  readonly foreignProducers: 'none' | 'raw';
  readonly stalls: 'in-process' | 'process';
  readonly stopping: 'takes-nothing' | 'finishes-arrivals';
}

/** A consumer in a process of its own, holding the first job it takes (see `stalls: 'process'`). */
export interface HeldConsumer {
  /** Resolves with the first job it started. */
  started(): Promise<{ readonly jobId: string; readonly delivery: number; readonly payload: unknown }>;
  /** Kills its process (SIGKILL) and resolves once it has exited. */
  kill(): Promise<void>;
  /** Freezes its process (SIGSTOP): it renews nothing, answers nothing. */
  freeze(): void;
  /** Lets a frozen process run again (SIGCONT). */
  thaw(): void;
  /**
   * Lets its processor resolve, and resolves once the consumer has reported that its queue refused
   * the late completion (the job is no longer its own); rejects when it reports none in time.
   */
  releaseRefused(): Promise<void>;
}

/** One backend under test: a fresh, empty queue each time the factory is called. */
export interface QueueContractBackend {
  readonly queue: JobQueue;
  /**
   * A consumer of that queue. A queue with one consumer per process (the embedded queue) gives the
   * same one each time; it may be started again after it stopped.
   */
  consumer(): JobConsumer;
  readonly time: ContractTime;
  /** With `foreignProducers: 'raw'`: writes `payload` as job `jobId`, as another producer would. */
  writeForeign?(jobId: string, payload: unknown): Promise<void>;
  /** With `stalls: 'process'`: starts a consumer in a process of its own. */
  heldConsumer?(): Promise<HeldConsumer>;
  /**
   * How long a job outlives its consumer at most: with `stalls: 'process'`, about its lock plus two
   * stall checks; with `in-process`, any long time (nothing stalls).
   */
  readonly stallMs: number;
  /** Stops the consumers, ends the processes, closes the queue. */
  close(): Promise<void>;
}

const job = (executionId: string): ExecutionJob => ({ v: 1, executionId, reactor: 'orders' });

/** A delay no test waits out. */
const FAR_MS = 3_600_000;
/** A delay the tests do wait out (a real backend sleeps that long). */
const SHORT_MS = 800;
/** Clock readings taken in two places may differ by this much (rounding to the millisecond). */
const ROUNDING_MS = 1;

interface Call {
  readonly payload: unknown;
  readonly delivery: JobDelivery;
  readonly at: number;
}

/** A processor that records each call (with the time on the backend's clock) and then runs `then`. */
function recorder(
  time: ContractTime,
  then: (call: Call) => Promise<void> = async () => undefined,
): { readonly calls: Call[]; readonly processor: JobProcessor; ids(): string[] } {
  const calls: Call[] = [];
  return {
    calls,
    processor: async (payload, delivery) => {
      const call = { payload, delivery, at: time.now() };
      calls.push(call);
      await then(call);
    },
    ids: () => calls.map((c) => c.delivery.jobId),
  };
}

/** A gate a processor waits on, opened by the test. */
function gate(): { readonly opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Registers the contract for one backend: `make` gives a fresh backend per test. */
export function describeQueueContract(
  name: string,
  capabilities: QueueCapabilities,
  make: () => Promise<QueueContractBackend>,
): void {
  const flags = Object.entries(capabilities)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  describe(`queue contract: ${name} (${flags})`, () => {
    let b: QueueContractBackend;
    beforeEach(async () => {
      b = await make();
    });
    afterEach(async () => {
      await b.close();
    });

    const place = async (jobId: string): Promise<JobPlace | undefined> => (await b.queue.jobStates?.([jobId]))?.[0];

    describe('delivery', () => {
      it('delivers the payload (its known fields only), the job id and delivery 1; the job is then finished', async () => {
        const { calls, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 2 });
        const extra = { ...job('e1'), note: 'not part of the format' } as ExecutionJob;
        await b.queue.enqueue(extra, { jobId: 'e1:1' });
        await b.time.until(() => calls.length === 1, 'the delivery');
        expect(calls[0]?.payload).toEqual(job('e1'));
        expect(decodeJob(calls[0]?.payload)).toEqual(job('e1'));
        expect(calls[0]?.delivery).toMatchObject({ jobId: 'e1:1', delivery: 1 });
        await b.time.until(async () => (await place('e1:1')) === 'finished', 'the job finished');
      });

      it('a job id is any non-empty string: colons, percent signs, integer-looking, spaces, any script', async () => {
        const ids = ['e1:busy:e1:1:2', '100%', '%3A', '42', '-7', 'with space', 'ordre-été-日本'];
        await b.queue.enqueue(job('d'), { jobId: '12', delayMs: FAR_MS });
        await b.queue.enqueue(job('x'), { jobId: '%N5', delayMs: FAR_MS });
        for (const jobId of ids) await b.queue.enqueue(job('e'), { jobId });
        expect(await b.queue.jobStates?.(['12', '%N5', ...ids])).toEqual([
          'queued',
          'queued',
          ...ids.map(() => 'queued'),
        ]);
        expect(await b.queue.discard?.('%N5')).toBe(true);
        expect(await b.queue.promote('12')).toBe(true);
        const rec = recorder(b.time);
        b.consumer().start(rec.processor, { concurrency: 1 });
        await b.time.until(() => rec.calls.length === ids.length + 1, 'every job delivered');
        expect(rec.ids().sort()).toEqual(['12', ...ids].sort());
      });

      it('a job a running job enqueues is delivered too', async () => {
        const { ids, processor } = recorder(b.time, async ({ delivery }) => {
          const n = Number(delivery.jobId.split(':')[1]);
          if (n < 3) await b.queue.enqueue(job('e1'), { jobId: `e1:${n + 1}` });
        });
        b.consumer().start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.time.until(() => ids().length === 3, 'three jobs, each enqueued by the one before');
        expect(ids()).toEqual(['e1:1', 'e1:2', 'e1:3']);
      });

      it('never runs more than `concurrency` jobs at once on a consumer', async () => {
        const open = gate();
        let inside = 0;
        let most = 0;
        const { calls, processor } = recorder(b.time, async () => {
          inside += 1;
          most = Math.max(most, inside);
          await open.opened;
          inside -= 1;
        });
        b.consumer().start(processor, { concurrency: 2 });
        for (let i = 0; i < 5; i += 1) await b.queue.enqueue(job(`e${i}`), { jobId: `e${i}:1` });
        await b.time.until(() => calls.length === 2, 'two jobs running');
        await b.time.elapse(SHORT_MS / 4);
        expect(calls).toHaveLength(2);
        const states = await b.queue.jobStates?.(['e0:1', 'e1:1', 'e2:1', 'e3:1', 'e4:1']);
        expect(states).toEqual(['active', 'active', 'queued', 'queued', 'queued']);
        open.open();
        await b.time.until(() => calls.length === 5, 'every job delivered');
        expect(most).toBe(2);
      });
    });

    describe('delays', () => {
      it('a delayed job is not delivered before its delay, and is after it', async () => {
        const { calls, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 1 });
        const before = b.time.now();
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: SHORT_MS });
        expect(await place('e1:1')).toBe('queued');
        await b.time.elapse(SHORT_MS / 2);
        // Nothing delivered early (a slow machine may already be past the delay: what counts is when).
        expect(calls.filter((c) => c.at < before + SHORT_MS - ROUNDING_MS)).toEqual([]);
        await b.time.elapse(SHORT_MS / 2);
        await b.time.until(() => calls.length === 1, 'the delayed job delivered');
        expect(calls[0]?.at).toBeGreaterThanOrEqual(before + SHORT_MS - ROUNDING_MS);
        expect(calls[0]?.delivery.delivery).toBe(1);
      });

      it('earlyMs: a job may be delivered up to that much before its delay, never earlier', async () => {
        const { calls, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 1 });
        const before = b.time.now();
        const delayMs = 2 * SHORT_MS;
        const earlyMs = SHORT_MS / 2;
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs, earlyMs });
        await b.time.elapse(delayMs - earlyMs - SHORT_MS / 4);
        expect(calls.filter((c) => c.at < before + delayMs - earlyMs - ROUNDING_MS)).toEqual([]);
        await b.time.elapse(earlyMs + SHORT_MS / 4);
        await b.time.until(() => calls.length === 1, 'the delayed job delivered');
        expect(calls[0]?.at).toBeGreaterThanOrEqual(before + delayMs - earlyMs - ROUNDING_MS);
      });

      it('the first enqueue of an id decides its delay: enqueuing it again with another changes nothing', async () => {
        const { calls, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: FAR_MS });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.time.elapse(SHORT_MS);
        expect(calls).toHaveLength(0);
        expect(await place('e1:1')).toBe('queued');
      });
    });

    describe('promote', () => {
      it('makes a delayed job runnable at once (true); it is delivered once, also when its delay passes', async () => {
        const { calls, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: SHORT_MS });
        expect(await b.queue.promote('e1:1')).toBe(true);
        await b.time.until(() => calls.length === 1, 'the promoted job delivered');
        expect(calls[0]?.delivery).toMatchObject({ jobId: 'e1:1', delivery: 1 });
        await b.time.elapse(2 * SHORT_MS);
        expect(calls).toHaveLength(1);
        expect(await b.queue.promote('e1:1')).toBe(false); // finished
      });

      it('is false for a job that is not delayed: ready, running, finished or unknown', async () => {
        const open = gate();
        const { calls, processor } = recorder(b.time, async ({ delivery }) => {
          if (delivery.jobId === 'run:1') await open.opened;
        });
        await b.queue.enqueue(job('ready'), { jobId: 'ready:1' });
        expect(await b.queue.promote('ready:1')).toBe(false);
        expect(await b.queue.promote('never:1')).toBe(false);
        b.consumer().start(processor, { concurrency: 2 });
        await b.queue.enqueue(job('run'), { jobId: 'run:1' });
        await b.time.until(() => calls.some((c) => c.delivery.jobId === 'run:1'), 'the running job');
        expect(await b.queue.promote('run:1')).toBe(false);
        await b.time.until(async () => (await place('ready:1')) === 'finished', 'the ready job finished');
        expect(await b.queue.promote('ready:1')).toBe(false);
        open.open();
        await b.time.until(async () => (await place('run:1')) === 'finished', 'the running job finished');
        expect(calls.map((c) => c.delivery.jobId).sort()).toEqual(['ready:1', 'run:1']);
      });
    });

    describe('priorities', () => {
      it('ready jobs go: no priority first, then lower numbers first, first come first served within each', async () => {
        const { ids, processor } = recorder(b.time);
        const order: [string, number | undefined][] = [
          ['a', 5],
          ['b', undefined],
          ['c', 1],
          ['d', 5],
          ['e', undefined],
          ['f', 1],
          ['g', 2_097_151],
        ];
        for (const [id, priority] of order)
          await b.queue.enqueue(job(id), { jobId: `${id}:1`, ...(priority === undefined ? {} : { priority }) });
        b.consumer().start(processor, { concurrency: 1 });
        await b.time.until(() => ids().length === order.length, 'every job delivered');
        expect(ids()).toEqual(['b:1', 'e:1', 'c:1', 'f:1', 'a:1', 'd:1', 'g:1']);
      });

      it('a promoted job takes its place by its priority', async () => {
        const { ids, processor } = recorder(b.time);
        await b.queue.enqueue(job('low'), { jobId: 'low:1', priority: 9 });
        await b.queue.enqueue(job('woken'), { jobId: 'woken:1', delayMs: FAR_MS, priority: 3 });
        await b.queue.enqueue(job('plain'), { jobId: 'plain:1' });
        expect(await b.queue.promote('woken:1')).toBe(true);
        b.consumer().start(processor, { concurrency: 1 });
        await b.time.until(() => ids().length === 3, 'every job delivered');
        expect(ids()).toEqual(['plain:1', 'woken:1', 'low:1']);
      });
    });

    describe('dedupe by job id', () => {
      it('an id is delivered once: enqueued again while queued, delayed, running, after it finished or failed', async () => {
        const open = gate();
        const { calls, ids, processor } = recorder(b.time, async ({ delivery, payload }) => {
          if (delivery.jobId === 'run:1') await open.opened;
          if (delivery.jobId === 'bad:1') throw new MalformedJobError('refused by the test', payload);
        });
        await b.queue.enqueue(job('q'), { jobId: 'q:1' });
        await b.queue.enqueue(job('q'), { jobId: 'q:1' });
        await b.queue.enqueue(job('d'), { jobId: 'd:1', delayMs: SHORT_MS });
        await b.queue.enqueue(job('d'), { jobId: 'd:1', delayMs: SHORT_MS });
        await b.queue.enqueue(job('d'), { jobId: 'd:1' });
        b.consumer().start(processor, { concurrency: 3 });
        await b.queue.enqueue(job('run'), { jobId: 'run:1' });
        await b.queue.enqueue(job('bad'), { jobId: 'bad:1' });
        await b.time.until(() => calls.some((c) => c.delivery.jobId === 'run:1'), 'the running job');
        await b.queue.enqueue(job('run'), { jobId: 'run:1' });
        await b.time.until(async () => (await place('q:1')) === 'finished', 'the queued job finished');
        await b.time.until(async () => (await place('bad:1')) === 'finished', 'the refused job failed');
        await b.queue.enqueue(job('q'), { jobId: 'q:1' });
        await b.queue.enqueue(job('bad'), { jobId: 'bad:1' });
        await b.time.elapse(SHORT_MS);
        await b.time.until(async () => (await place('d:1')) === 'finished', 'the delayed job finished');
        open.open();
        await b.time.until(async () => (await place('run:1')) === 'finished', 'the running job finished');
        await b.time.elapse(SHORT_MS / 2);
        expect(ids().sort()).toEqual(['bad:1', 'd:1', 'q:1', 'run:1']);
        expect(calls.every((c) => c.delivery.delivery === 1)).toBe(true);
      });

      it('enqueueMany enqueues as enqueue would one by one: ids once (within the call and against earlier jobs), delays, priorities', async () => {
        const entry = (id: string, options: Partial<EnqueueEntry['options']> = {}): EnqueueEntry => ({
          job: job(id),
          options: { jobId: `${id}:1`, ...options },
        });
        const entries = [
          entry('early'),
          entry('a', { priority: 4 }),
          entry('b'),
          entry('a', { priority: 1 }),
          entry('late', { delayMs: SHORT_MS }),
          entry('far', { delayMs: FAR_MS }),
          entry('c', { priority: 2 }),
        ];
        const before = b.time.now();
        await b.queue.enqueue(job('early'), { jobId: 'early:1', priority: 9 });
        if (b.queue.enqueueMany) await b.queue.enqueueMany(entries);
        else for (const { job: j, options } of entries) await b.queue.enqueue(j, options);
        expect(await b.queue.jobStates?.(['late:1', 'far:1'])).toEqual(['queued', 'queued']);
        const { calls, ids, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 1 });
        await b.time.until(() => ids().filter((id) => id !== 'late:1').length === 4, 'the ready jobs delivered');
        // The ready jobs in their order. A slow machine may already be past the short delay, so the
        // delayed job may come among them: what counts for it is when (below), not where.
        expect(ids().filter((id) => id !== 'late:1')).toEqual(['b:1', 'c:1', 'a:1', 'early:1']);
        await b.time.elapse(SHORT_MS);
        await b.time.until(() => calls.length === 5, 'the delayed job delivered');
        const late = calls.find((c) => c.delivery.jobId === 'late:1');
        expect(late?.at).toBeGreaterThanOrEqual(before + SHORT_MS - ROUNDING_MS);
        expect(await place('far:1')).toBe('queued');
      });
    });

    describe('discard', () => {
      it('removes a waiting, delayed or prioritized job (true), which is never delivered', async () => {
        await b.queue.enqueue(job('w'), { jobId: 'w:1' });
        await b.queue.enqueue(job('d'), { jobId: 'd:1', delayMs: SHORT_MS });
        await b.queue.enqueue(job('p'), { jobId: 'p:1', priority: 7 });
        await b.queue.enqueue(job('kept'), { jobId: 'kept:1' });
        expect(await b.queue.discard?.('w:1')).toBe(true);
        expect(await b.queue.discard?.('d:1')).toBe(true);
        expect(await b.queue.discard?.('p:1')).toBe(true);
        expect(await b.queue.discard?.('w:1')).toBe(false); // already gone
        const { ids, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 2 });
        await b.time.until(() => ids().length === 1, 'the job left');
        await b.time.elapse(2 * SHORT_MS); // past the discarded delayed job's time
        expect(ids()).toEqual(['kept:1']);
      });

      it('is false for a running, finished or unknown job, and leaves it', async () => {
        const open = gate();
        const { ids, processor } = recorder(b.time, async ({ delivery }) => {
          if (delivery.jobId === 'run:1') await open.opened;
        });
        b.consumer().start(processor, { concurrency: 2 });
        await b.queue.enqueue(job('run'), { jobId: 'run:1' });
        await b.queue.enqueue(job('done'), { jobId: 'done:1' });
        await b.time.until(async () => (await place('done:1')) === 'finished', 'a job finished');
        await b.time.until(() => ids().includes('run:1'), 'a job running');
        expect(await b.queue.discard?.('run:1')).toBe(false);
        expect(await b.queue.discard?.('done:1')).toBe(false);
        expect(await b.queue.discard?.('never:1')).toBe(false);
        expect(await b.queue.jobStates?.(['run:1', 'done:1', 'never:1'])).toEqual(['active', 'finished', 'missing']);
        open.open();
        await b.time.until(async () => (await place('run:1')) === 'finished', 'the running job finished');
        expect(ids().sort()).toEqual(['done:1', 'run:1']);
      });

      it(`a discarded id is ${capabilities.discarded}`, async () => {
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        expect(await b.queue.discard?.('e1:1')).toBe(true);
        const { ids, processor } = recorder(b.time);
        b.consumer().start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.queue.enqueue(job('after'), { jobId: 'after:1' });
        await b.time.until(() => ids().includes('after:1'), 'the job after it delivered');
        await b.time.until(async () => (await place('e1:1')) === 'finished', 'the discarded id finished');
        if (capabilities.discarded === 'remembered') expect(ids()).toEqual(['after:1']);
        else expect(ids()).toEqual(['e1:1', 'after:1']);
      });

      it(`jobStates of a discarded job: ${capabilities.discarded === 'remembered' ? 'finished' : 'missing'}`, async () => {
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: FAR_MS });
        expect(await b.queue.discard?.('e1:1')).toBe(true);
        expect(await place('e1:1')).toBe(capabilities.discarded === 'remembered' ? 'finished' : 'missing');
      });
    });

    describe('jobStates', () => {
      it('says queued (waiting, delayed, prioritized), active, finished (completed or failed) or missing, in the order asked', async () => {
        expect(b.queue.jobStates).toBeDefined();
        const open = gate();
        const { ids, processor } = recorder(b.time, async ({ delivery, payload }) => {
          if (delivery.jobId === 'run:1') await open.opened;
          if (delivery.jobId === 'bad:1') throw new MalformedJobError('refused by the test', payload);
        });
        await b.queue.enqueue(job('w'), { jobId: 'w:1' });
        await b.queue.enqueue(job('d'), { jobId: 'd:1', delayMs: FAR_MS });
        await b.queue.enqueue(job('p'), { jobId: 'p:1', priority: 3 });
        expect(await b.queue.jobStates?.(['p:1', 'never:1', 'd:1', 'w:1'])).toEqual([
          'queued',
          'missing',
          'queued',
          'queued',
        ]);
        expect(await b.queue.jobStates?.([])).toEqual([]);
        b.consumer().start(processor, { concurrency: 2 });
        await b.queue.enqueue(job('run'), { jobId: 'run:1' });
        await b.queue.enqueue(job('bad'), { jobId: 'bad:1' });
        await b.time.until(() => ids().includes('run:1'), 'the job running');
        await b.time.until(async () => (await place('bad:1')) === 'finished', 'the failed job finished');
        await b.time.until(async () => (await place('p:1')) === 'finished', 'the prioritized job finished');
        expect(await b.queue.jobStates?.(['run:1', 'w:1', 'bad:1', 'd:1'])).toEqual([
          'active',
          'finished',
          'finished',
          'queued',
        ]);
        open.open();
        await b.time.until(async () => (await place('run:1')) === 'finished', 'the running job finished');
      });

      it('says returned for a job queued again after a worker had it (here: an attempt failed), queued for one never taken', async () => {
        const { calls, processor } = recorder(b.time, async () => {
          throw new Error('store unreachable');
        });
        const consumer = b.consumer();
        consumer.start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('r'), { jobId: 'r:1' });
        await b.queue.enqueue(job('q'), { jobId: 'q:1', delayMs: FAR_MS });
        await b.time.until(() => calls.length === 1, 'the first delivery');
        await consumer.stop(); // the failed attempt waits out its backoff, and no worker takes it again
        expect(await b.queue.jobStates?.(['r:1', 'q:1'])).toEqual(['returned', 'queued']);
      });
    });

    describe('malformed payloads', () => {
      it('enqueue refuses a malformed job or bad options, and writes nothing', async () => {
        const bad: [ExecutionJob, Parameters<JobQueue['enqueue']>[1]][] = [
          [{ v: 2, executionId: 'x', reactor: 'r' } as unknown as ExecutionJob, { jobId: 'x:1' }],
          [{ v: 1, executionId: '', reactor: 'r' }, { jobId: 'x:2' }],
          [{ v: 1, executionId: 'x' } as unknown as ExecutionJob, { jobId: 'x:3' }],
          [job('x'), { jobId: 'x:4', delayMs: -1 }],
          [job('x'), { jobId: 'x:5', delayMs: Number.NaN }],
          [job('x'), { jobId: 'x:6', priority: 0 }],
          [job('x'), { jobId: 'x:7', priority: 2_097_152 }],
          [job('x'), { jobId: 'x:8', priority: 1.5 }],
        ];
        await expect(b.queue.enqueue(bad[0]![0], bad[0]![1])).rejects.toBeInstanceOf(MalformedJobError);
        for (const [j, options] of bad) await expect(b.queue.enqueue(j, options)).rejects.toThrow();
        await expect(b.queue.enqueue(job('x'), { jobId: '' })).rejects.toThrow();
        expect(await b.queue.jobStates?.(bad.map(([, options]) => options.jobId))).toEqual(bad.map(() => 'missing'));
      });

      it('enqueueMany refuses a call with one bad entry before it enqueues any', async () => {
        if (!b.queue.enqueueMany) return; // optional: without it there is no call to refuse
        const good = (id: string): EnqueueEntry => ({ job: job(id), options: { jobId: `${id}:1` } });
        const malformed: EnqueueEntry = {
          job: { v: 1, executionId: 7, reactor: 'r' } as unknown as ExecutionJob,
          options: { jobId: 'm:1' },
        };
        const badDelay: EnqueueEntry = { job: job('n'), options: { jobId: 'n:1', delayMs: -5 } };
        const noId: EnqueueEntry = { job: job('o'), options: { jobId: '' } };
        await expect(b.queue.enqueueMany([good('a'), good('b'), malformed])).rejects.toBeInstanceOf(MalformedJobError);
        await expect(b.queue.enqueueMany([good('c'), badDelay])).rejects.toThrow();
        await expect(b.queue.enqueueMany([good('d'), noId])).rejects.toThrow();
        expect(await b.queue.jobStates?.(['a:1', 'b:1', 'm:1', 'c:1', 'n:1', 'd:1'])).toEqual(
          Array.from({ length: 6 }, () => 'missing'),
        );
        // A large call too (a queue may send it in several parts): the bad entry last.
        const many = Array.from({ length: 2_500 }, (_, i) => good(`many${i}`));
        await expect(b.queue.enqueueMany([...many, malformed])).rejects.toBeInstanceOf(MalformedJobError);
        await expect(b.queue.enqueueMany([...many, noId])).rejects.toThrow();
        expect(await b.queue.jobStates?.(['many0:1', 'many999:1', 'many1000:1', 'many2499:1'])).toEqual(
          Array.from({ length: 4 }, () => 'missing'),
        );
      });

      it('a processor reporting MalformedJobError fails the job at once: one delivery, finished, never delivered again', async () => {
        const { calls, processor } = recorder(b.time, async ({ payload }) => {
          throw new MalformedJobError('of another version', payload);
        });
        b.consumer().start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.time.until(async () => (await place('e1:1')) === 'finished', 'the job failed');
        await b.time.elapse(8 * INFRA_BACKOFF_MS); // past every backoff an infrastructure failure would get
        expect(calls).toHaveLength(1);
      });

      if (capabilities.foreignProducers === 'raw') {
        it('a job another producer wrote malformed reaches the processor as written, and fails at once', async () => {
          const foreign: [string, unknown][] = [
            ['v2:1', { v: 2, executionId: 'e', reactor: 'orders' }],
            ['noid:1', { v: 1, reactor: 'orders' }],
            ['text:1', 'not an object'],
            ['list:1', [1, 2]],
          ];
          for (const [jobId, payload] of foreign) await b.writeForeign!(jobId, payload);
          const { calls, processor } = recorder(b.time, async ({ payload }) => {
            decodeJob(payload);
          });
          b.consumer().start(processor, { concurrency: 2 });
          for (const [jobId] of foreign)
            await b.time.until(async () => (await place(jobId)) === 'finished', `foreign job ${jobId} failed`);
          await b.time.elapse(8 * INFRA_BACKOFF_MS);
          expect(calls.map((c) => [c.delivery.jobId, c.payload]).sort()).toEqual([...foreign].sort());
          expect(calls.every((c) => c.delivery.delivery === 1)).toBe(true);
        });
      }
    });

    describe('infrastructure failures', () => {
      it(`a rejecting processor gets the job again after ${INFRA_BACKOFF_MS} ms, then twice that, ${INFRA_ATTEMPTS} deliveries in all, counted`, async () => {
        const { calls, processor } = recorder(b.time, async () => {
          throw new Error('store unreachable');
        });
        b.consumer().start(processor, { concurrency: 1 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.time.until(() => calls.length === 1, 'the first delivery');
        await b.time.elapse(INFRA_BACKOFF_MS);
        await b.time.until(() => calls.length === 2, 'the second delivery');
        await b.time.elapse(2 * INFRA_BACKOFF_MS);
        await b.time.until(() => calls.length === 3, 'the third delivery');
        await b.time.until(async () => (await place('e1:1')) === 'finished', 'the job failed for good');
        await b.time.elapse(8 * INFRA_BACKOFF_MS);
        expect(calls.map((c) => c.delivery.delivery)).toEqual([1, 2, 3]);
        const at = calls.map((c) => c.at);
        expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(INFRA_BACKOFF_MS - ROUNDING_MS);
        expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(2 * INFRA_BACKOFF_MS - ROUNDING_MS);
      });
    });

    describe('stop and close', () => {
      it(`stop resolves once the in-flight job finished; a job arriving meanwhile: ${capabilities.stopping}`, async () => {
        const open = gate();
        let finished = false;
        const { ids, processor } = recorder(b.time, async ({ delivery }) => {
          if (delivery.jobId !== 'e1:1') return;
          await open.opened;
          finished = true;
        });
        const consumer = b.consumer();
        consumer.start(processor, { concurrency: 2 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.time.until(() => ids().length === 1, 'the job running');
        let stopped = false;
        const stopping = consumer.stop().then(() => (stopped = true));
        await b.queue.enqueue(job('e2'), { jobId: 'e2:1' });
        await b.time.elapse(SHORT_MS / 4);
        expect(stopped).toBe(false);
        open.open();
        await stopping;
        expect(finished).toBe(true);
        expect(await place('e1:1')).toBe('finished');
        const arrival = await place('e2:1');
        if (capabilities.stopping === 'takes-nothing' || arrival === 'queued') {
          // Left for the next consumer.
          expect(arrival).toBe('queued');
          expect(ids()).toEqual(['e1:1']);
          const later = recorder(b.time);
          b.consumer().start(later.processor, { concurrency: 1 });
          await b.time.until(() => later.calls.length === 1, 'the job left delivered');
          expect(later.ids()).toEqual(['e2:1']);
        } else {
          // Taken by the stopping consumer while it waited for work, and finished before stop resolved.
          expect(arrival).toBe('finished');
          expect(ids()).toEqual(['e1:1', 'e2:1']);
        }
      });

      it('a closed queue refuses to enqueue', async () => {
        await b.queue.close();
        await expect(b.queue.enqueue(job('e1'), { jobId: 'e1:1' })).rejects.toThrow(/closed/);
      });
    });

    describe('stalls', () => {
      it('a live consumer keeps its job however long it runs: it is not delivered again', async () => {
        const open = gate();
        const { calls, processor } = recorder(b.time, () => open.opened);
        b.consumer().start(processor, { concurrency: 2 });
        await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
        await b.time.until(() => calls.length === 1, 'the job running');
        await b.time.elapse(b.stallMs);
        expect(calls).toHaveLength(1);
        expect(await place('e1:1')).toBe('active');
        open.open();
        await b.time.until(async () => (await place('e1:1')) === 'finished', 'the job finished');
        expect(calls.map((c) => c.delivery.delivery)).toEqual([1]);
      });

      if (capabilities.stalls === 'process') {
        it('the job of a consumer killed mid-job (SIGKILL) is delivered again, to another consumer, with a higher delivery', async () => {
          await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
          const held = await b.heldConsumer!();
          expect(await held.started()).toEqual({ jobId: 'e1:1', delivery: 1, payload: job('e1') });
          await held.kill();
          expect(await place('e1:1')).toBe('active'); // until its lock lapses
          const { calls, processor } = recorder(b.time);
          b.consumer().start(processor, { concurrency: 1 });
          await b.time.until(() => calls.length === 1, 'the redelivery', 4 * b.stallMs + 30_000);
          expect(calls[0]?.payload).toEqual(job('e1'));
          expect(calls[0]?.delivery.jobId).toBe('e1:1');
          expect(calls[0]?.delivery.delivery).toBeGreaterThanOrEqual(2);
          await b.time.until(async () => (await place('e1:1')) === 'finished', 'the job finished');
        }, 120_000);

        it('the job of a consumer frozen (SIGSTOP) past its lock is delivered again; thawed, its late completion is refused', async () => {
          await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
          const held = await b.heldConsumer!();
          expect(await held.started()).toMatchObject({ jobId: 'e1:1', delivery: 1 });
          held.freeze();
          const open = gate();
          const { calls, processor } = recorder(b.time, () => open.opened);
          b.consumer().start(processor, { concurrency: 1 });
          await b.time.until(() => calls.length === 1, 'the redelivery', 4 * b.stallMs + 30_000);
          expect(calls[0]?.delivery).toMatchObject({ jobId: 'e1:1' });
          expect(calls[0]?.delivery.delivery).toBeGreaterThanOrEqual(2);
          held.thaw();
          await held.releaseRefused();
          expect(await place('e1:1')).toBe('active'); // still the second consumer's
          open.open();
          await b.time.until(async () => (await place('e1:1')) === 'finished', 'the job finished');
          expect(calls).toHaveLength(1);
        }, 120_000);
      } else {
        it('nothing stalls in-process: a running job stays active and delivered once however far time runs; stop waits for it', async () => {
          const open = gate();
          const { calls, processor } = recorder(b.time, () => open.opened);
          const consumer = b.consumer();
          consumer.start(processor, { concurrency: 1 });
          await b.queue.enqueue(job('e1'), { jobId: 'e1:1' });
          await b.time.until(() => calls.length === 1, 'the job running');
          await b.time.elapse(24 * FAR_MS);
          expect(await place('e1:1')).toBe('active');
          let stopped = false;
          const stopping = consumer.stop().then(() => (stopped = true));
          await b.time.elapse(FAR_MS);
          expect(stopped).toBe(false);
          open.open();
          await stopping;
          expect(await place('e1:1')).toBe('finished');
          expect(calls).toHaveLength(1);
        });
      }
    });
  });
}
