/**
 * `ts-reactor demo step-lock`: step-scoped coordination, shown on three paths. The reactor
 * (`demo-step-lock-reactor.ts`) is audit → charge (locked on the account at step level) →
 * notify. Executions are started in the background (`engine.start`): on the embedded engine's
 * in-process pool, with `--redis` on worker processes over Redis and BullMQ, or with `--postgres`
 * on worker processes over PostgreSQL alone (./demo-postgres.ts).
 *
 * 1. serialized: two payments on one account never overlap inside `charge`, while the two
 *    payments run at the same time (and a payment on another account runs alongside);
 * 2. contended: the payment that reaches `charge` while the other holds the key parks, is woken
 *    by the release, and completes;
 * 3. compensated: `notify` fails, and the refund (`charge`'s undo) runs holding the account key.
 *
 * What happened is read back from the persisted traces, so the story is the same either way.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createEmbeddedEngine } from '../embedded.js';
import type { Engine } from '../engine/engine.js';
import type { ReactorEvent } from '../engine/model/events.js';
import type { RunResult } from '../engine/model/results.js';
import { moduleFile, removeKeys, WorkerProcesses, type Write } from './demo-background.js';
import { accountKey, stepLockPayment, type Span } from './demo-step-lock-reactor.js';
import { parseRedisUrl, pingRedis, redactUrl, unreachableMessage } from './redis-check.js';

/** Options of {@link runStepLockDemo}. */
export interface StepLockDemoOptions {
  /** Run on Redis with worker processes; without it, on the embedded engine. */
  readonly redisUrl?: string;
  /** Run on PostgreSQL alone with worker processes (not with `redisUrl`). */
  readonly postgresUrl?: string;
  /** Worker processes (Redis or PostgreSQL). Default 2. */
  readonly workers?: number;
  readonly write?: Write;
  readonly err?: Write;
}

const BACKGROUND = { workerWaitMs: 0, parkFallbackMs: 5_000 } as const;
const CONCURRENCY = 4;
const WORK_MS = 200;

/** Runs the demo; resolves to the exit code (0 when every path showed what it should). */
export async function runStepLockDemo(options: StepLockDemoOptions = {}): Promise<number> {
  const write = options.write ?? ((line: string) => console.log(line));
  const err = options.err ?? write;
  if (options.postgresUrl !== undefined)
    return postgresStepLockDemo(options.postgresUrl, options.workers ?? 2, write, err);
  if (options.redisUrl === undefined) {
    write(
      'ts-reactor demo step-lock: one step serializes, the workflow does not (embedded engine, in-process worker pool, no Redis)',
    );
    const engine = createEmbeddedEngine({
      background: BACKGROUND,
      workerConcurrency: CONCURRENCY,
      reactors: [stepLockPayment],
    });
    try {
      return await tell(engine, write);
    } finally {
      await engine.close();
    }
  }
  const parsed = parseRedisUrl(options.redisUrl);
  if (!parsed.ok) {
    err(`ts-reactor demo: --redis: ${parsed.message}`);
    return 2;
  }
  try {
    await pingRedis(parsed.url);
  } catch (error) {
    err(`ts-reactor demo: ${unreachableMessage(parsed.url, error)}`);
    return 2;
  }
  const url = parsed.url;
  const prefix = `rx-demo-${randomBytes(4).toString('hex')}`;
  const count = options.workers ?? 2;
  write(
    `ts-reactor demo step-lock --redis: one step serializes, the workflow does not (${count} worker processes on ${redactUrl(url)}, key prefix ${prefix}, removed at the end)`,
  );
  const children = new WorkerProcesses();
  const { createRedisRuntime } = await import('../bullmq.js');
  const runtime = createRedisRuntime({ url, prefix, reactors: [stepLockPayment], background: BACKGROUND });
  try {
    await startWorkers(children, count, ['--redis', url, '--prefix', prefix], write);
    return await tell(runtime.engine, write);
  } catch (error) {
    err(`ts-reactor demo: ${(error as Error).message}`);
    return 1;
  } finally {
    const stops = await children.stopAll();
    if (stops.length > 0) write(`stopped ${stops.join(', ')}`);
    await runtime.close();
    await removeKeys(url, prefix).catch((error: unknown) =>
      err(`ts-reactor demo: could not remove the demo's keys (${prefix}:*): ${(error as Error).message}`),
    );
  }
}

/** Starts `count` worker processes of the demo's reactor on the backend `backendArgs` name. */
async function startWorkers(
  children: WorkerProcesses,
  count: number,
  backendArgs: readonly string[],
  write: Write,
): Promise<void> {
  for (let i = 1; i <= count; i++) {
    const args = [
      ...backendArgs,
      '--module',
      moduleFile('demo-step-lock-reactor'),
      '--concurrency',
      String(CONCURRENCY),
      '--worker-wait-ms',
      '0',
      '--park-fallback-ms',
      String(BACKGROUND.parkFallbackMs),
    ];
    write(`started worker-${i} (pid ${await children.start(`worker-${i}`, args)})`);
  }
}

/** The demo on PostgreSQL alone: a schema and queue of its own, worker processes on them, both removed at the end. */
async function postgresStepLockDemo(rawUrl: string, count: number, write: Write, err: Write): Promise<number> {
  const { openPostgresDemo } = await import('./demo-postgres.js');
  const place = await openPostgresDemo(rawUrl, [stepLockPayment], BACKGROUND, err);
  if (typeof place === 'number') return place;
  write(
    `ts-reactor demo step-lock --postgres: one step serializes, the workflow does not (${count} worker processes on ${place.where}, removed at the end; no Redis)`,
  );
  const children = new WorkerProcesses();
  try {
    await startWorkers(children, count, place.workerArgs, write);
    return await tell(place.engine, write);
  } catch (error) {
    err(`ts-reactor demo: ${(error as Error).message}`);
    return 1;
  } finally {
    const stops = await children.stopAll();
    if (stops.length > 0) write(`stopped ${stops.join(', ')}`);
    await place.close(err);
  }
}

interface Payment {
  readonly label: string;
  readonly account: string;
  readonly failAt?: 'notify';
}

async function startAll(engine: Engine, payments: readonly Payment[]): Promise<Map<string, RunResult | undefined>> {
  const ids = await Promise.all(
    payments.map(async (p) => {
      const queued = await engine.start(stepLockPayment, {
        paymentId: p.label,
        account: p.account,
        amountCents: 1_000,
        workMs: WORK_MS,
        ...(p.failAt ? { failAt: p.failAt } : {}),
      });
      return [p.label, queued.executionId] as const;
    }),
  );
  const results = await Promise.all(
    ids.map(async ([label, id]) => [label, await engine.wait(id, { timeoutMs: 30_000, pollMs: 10 })] as const),
  );
  return new Map(results);
}

/** The three paths, each with its checks; resolves to the exit code. */
async function tell(engine: Engine, write: Write): Promise<number> {
  write('');
  write(
    `reactor:  demo-step-lock = audit (~${WORK_MS} ms) -> charge (lock account:<account>, step level, ~${WORK_MS} ms) -> notify (~${WORK_MS} ms)`,
  );
  write(
    `parking:  a worker that finds account:<account> held parks the execution (workerWaitMs 0); the release wakes it`,
  );
  const t0 = Date.now();
  const rel = (t: number): string => `+${t - t0}`;
  const span = (s: Span | undefined): string =>
    s === undefined ? '(did not run)' : `${rel(s.startedAt)}..${rel(s.finishedAt)} ms on ${s.worker}`;
  let ok = true;
  const check = (pass: boolean, text: string): void => {
    ok &&= pass;
    write(`  ${pass ? 'ok  ' : 'FAIL'} ${text}`);
  };

  write('');
  write('== 1. serialized and 2. contended: p-1 and p-2 on account:acme, p-3 on account:globex, started together ==');
  const first = await startAll(engine, [
    { label: 'p-1', account: 'acme' },
    { label: 'p-2', account: 'acme' },
    { label: 'p-3', account: 'globex' },
  ]);
  const spans = new Map<string, Record<string, Span>>();
  for (const [label, result] of first) {
    const steps = result?.steps ?? {};
    const s = Object.fromEntries(['audit', 'charge', 'notify'].map((n) => [n, steps[n]?.result as Span])) as Record<
      string,
      Span
    >;
    spans.set(label, s);
    write(
      `  ${label} ${result?.status ?? 'unknown'}: audit ${span(s.audit)} | charge ${span(s.charge)} | notify ${span(s.notify)}`,
    );
    for (const e of result?.trace ?? []) {
      if (e.type === 'run.parked')
        write(
          `       ${rel(e.at)} ms PARKED at step ${e.step ?? '?'}: ${e.primitive} ${e.key} is held (contention attempt ${e.attempt})`,
        );
      if (e.type === 'run.woken') write(`       ${rel(e.at)} ms woken by the release of ${e.key}`);
    }
  }
  const a = spans.get('p-1')!;
  const b = spans.get('p-2')!;
  const overlap = (x: Span | undefined, y: Span | undefined): boolean =>
    x !== undefined && y !== undefined && x.startedAt < y.finishedAt && y.startedAt < x.finishedAt;
  check(
    [...first.values()].every((r) => r?.status === 'completed'),
    'all three completed',
  );
  check(
    a.charge !== undefined && b.charge !== undefined && !overlap(a.charge, b.charge),
    'the charge bodies on account:acme never overlapped (the step lock)',
  );
  const whole = (s: Record<string, Span>): Span | undefined =>
    s.audit === undefined || s.notify === undefined ? undefined : { ...s.audit, finishedAt: s.notify.finishedAt };
  check(
    overlap(whole(a), whole(b)),
    'p-1 and p-2 ran at the same time: one ran its steps while the other was running (only charge is locked)',
  );
  const parked = [...first].filter(([, r]) => r?.trace.some((e) => e.type === 'run.parked' && e.step === 'charge'));
  write(
    `  ${parked.length > 0 ? 'ok  ' : 'note'} ${parked.length > 0 ? `${parked.map(([l]) => l).join(', ')} parked at charge on ${accountKey('acme')}, was woken by the release and completed` : 'no execution had to park this time (the other charge had finished)'}`,
  );

  write('');
  write('== 3. compensated: p-4 on account:acme, notify fails ==');
  const [, failed] = [...(await startAll(engine, [{ label: 'p-4', account: 'acme', failAt: 'notify' }]))][0]!;
  const rollingBack = failed?.trace.findIndex((e) => e.type === 'run.rolling_back') ?? -1;
  const rollback = (failed?.trace ?? []).slice(Math.max(0, rollingBack));
  for (const e of rollback) write(`  ${rel(e.at)} ms ${describe(e)}`);
  const at = (pred: (e: ReactorEvent) => boolean): number => rollback.findIndex(pred);
  const retaken = at((e) => e.type === 'coordination.acquired' && e.step === 'charge' && e.key === accountKey('acme'));
  const undone = at((e) => e.type === 'step.undone' && e.step === 'charge');
  const released = at((e) => e.type === 'coordination.released' && e.step === 'charge');
  check(failed?.status === 'failed' && failed.failedStep === 'notify', 'p-4 failed at notify');
  check(
    retaken >= 0 && undone > retaken && released > undone,
    `the refund (charge's undo) ran holding ${accountKey('acme')}: re-acquired, refunded, released`,
  );
  check((failed?.rollbackFailures.length ?? 1) === 0, 'no rollback failure');
  write('');
  write(
    ok ? `every path showed what it should (${Date.now() - t0} ms in total)` : 'NOT every path showed what it should',
  );
  return ok ? 0 : 1;
}

function describe(e: ReactorEvent): string {
  if (e.type === 'coordination.acquired' || e.type === 'coordination.released')
    return `${e.type.slice(13)} ${e.primitive} ${e.key}${e.step === undefined ? '' : ` for step ${e.step}`}`;
  if (e.type === 'run.rolling_back') return `rolling back (failed at ${e.step ?? '?'})`;
  if (e.type === 'step.undone') return `undone ${e.step} (the refund)`;
  if (e.type === 'run.failed') return `failed: ${e.error.message}`;
  return 'step' in e && typeof e.step === 'string' ? `${e.type} ${e.step}` : e.type;
}
