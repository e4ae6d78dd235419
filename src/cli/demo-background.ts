/**
 * `ts-reactor demo --background`, `ts-reactor demo --redis <url>` and `ts-reactor demo --postgres
 * <url>`: transfers that hold an account's lock, started in the background. Three on one account
 * contend: the workers park the ones that find the lock held, and each release wakes the next.
 * With `--redis` or `--postgres` (./demo-postgres.ts), the workers are separate processes (`ts-reactor worker --module <the demo's reactor module>`); without it, the
 * embedded engine's in-process pool runs them. What happened is read back from the persisted
 * traces (`engine.result`), so it is the same story either way.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createEmbeddedEngine } from '../embedded.js';
import type { Engine } from '../engine/engine.js';
import type { ReactorEvent } from '../engine/model/events.js';
import type { RunResult } from '../engine/model/results.js';
import { ExecutionNotFoundError } from '../errors.js';
import { POST_MS, transfer, WORKER_NAME_ENV } from './demo-background-reactor.js';
import { connectRedis, parseRedisUrl, pingRedis, redactUrl, unreachableMessage } from './redis-check.js';

/** Where the demo writes its lines. */
export type Write = (line: string) => void;

/** Options of {@link runBackgroundDemo}. */
export interface BackgroundDemoOptions {
  /** Run on Redis with worker processes; without it, on the embedded engine. */
  readonly redisUrl?: string;
  /** Run on PostgreSQL alone with worker processes (not with `redisUrl`). */
  readonly postgresUrl?: string;
  /** Worker processes to start (Redis or PostgreSQL). Default 2. */
  readonly workers?: number;
  /** Jobs each worker (or the in-process pool) processes at once. Default 4. */
  readonly concurrency?: number;
  /**
   * How long a parked transfer's fallback job waits before resuming it, in ms, should no release
   * wake it first. Default 5000.
   */
  readonly parkFallbackMs?: number;
  readonly write?: Write;
  /** Where problems go. Default: `write`. */
  readonly err?: Write;
}

interface Transfer {
  readonly label: string;
  readonly account: string;
  readonly amountCents: number;
}

const TRANSFERS: readonly Transfer[] = [
  { label: 't-1', account: 'acme', amountCents: 1_000 },
  { label: 't-2', account: 'acme', amountCents: 2_500 },
  { label: 't-3', account: 'acme', amountCents: 700 },
  { label: 't-4', account: 'globex', amountCents: 4_200 },
];

/** The demo's workers park at once on contention (`workerWaitMs` 0), so parking shows. */
const WORKER_WAIT_MS = 0;
const PARK_FALLBACK_MS = 5_000;
/** How long the demo waits for each transfer: generous, as a busy machine may take long to start the workers. */
const WAIT_TIMEOUT_MS = 120_000;

/** Runs the background demo; resolves to the exit code (0 when every transfer completed). */
export async function runBackgroundDemo(options: BackgroundDemoOptions = {}): Promise<number> {
  const write = options.write ?? ((line: string) => console.log(line));
  const err = options.err ?? write;
  const concurrency = options.concurrency ?? 4;
  const background = { workerWaitMs: WORKER_WAIT_MS, parkFallbackMs: options.parkFallbackMs ?? PARK_FALLBACK_MS };
  if (options.redisUrl === undefined && options.postgresUrl === undefined) {
    write(
      'ts-reactor demo --background: contended transfers on the embedded engine (in-process worker pool, memory backend, no Redis)',
    );
    header(
      write,
      `the embedded engine's in-process pool (pid ${process.pid}), ${concurrency} jobs at once`,
      background,
    );
    const engine = createEmbeddedEngine({
      background,
      workerConcurrency: concurrency,
      reactors: [transfer],
    });
    try {
      return await enqueueAndReport(engine, write, () => 'in-process pool', background.parkFallbackMs);
    } finally {
      await engine.close();
    }
  }

  if (options.postgresUrl !== undefined) return postgresDemo(options.postgresUrl, concurrency, background, options);
  const parsed = parseRedisUrl(options.redisUrl ?? '');
  if (!parsed.ok) {
    err(`ts-reactor demo: --redis: ${parsed.message}`);
    return 2;
  }
  const url = parsed.url;
  try {
    await pingRedis(url);
  } catch (error) {
    err(`ts-reactor demo: ${unreachableMessage(url, error)}`);
    return 2;
  }
  const prefix = `rx-demo-${randomBytes(4).toString('hex')}`;
  const workerCount = options.workers ?? 2;
  write(`ts-reactor demo --redis: contended transfers on ${workerCount} worker processes over Redis and BullMQ`);
  header(
    write,
    `${workerCount} × \`ts-reactor worker\` (concurrency ${concurrency} each) on ${redactUrl(url)}, key prefix ${prefix} (removed at the end)`,
    background,
  );

  const children = new WorkerProcesses();
  const { createRedisRuntime } = await import('../bullmq.js');
  const runtime = createRedisRuntime({ url, prefix, reactors: [transfer], background });
  try {
    write('');
    for (let i = 1; i <= workerCount; i++) {
      const name = `worker-${i}`;
      const args = [
        '--redis',
        url,
        '--module',
        moduleFile('demo-background-reactor'),
        '--prefix',
        prefix,
        '--concurrency',
        String(concurrency),
        '--worker-wait-ms',
        String(background.workerWaitMs),
        '--park-fallback-ms',
        String(background.parkFallbackMs),
      ];
      const pid = await children.start(name, args);
      write(`started ${name} (pid ${pid})`);
    }
    return await enqueueAndReport(runtime.engine, write, (worker) => worker, background.parkFallbackMs);
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

/** The demo on PostgreSQL alone: a schema and queue of its own, worker processes on them, both removed at the end. */
async function postgresDemo(
  rawUrl: string,
  concurrency: number,
  background: { readonly workerWaitMs: number; readonly parkFallbackMs: number },
  options: BackgroundDemoOptions,
): Promise<number> {
  const write = options.write ?? ((line: string) => console.log(line));
  const err = options.err ?? write;
  const { openPostgresDemo } = await import('./demo-postgres.js');
  const place = await openPostgresDemo(rawUrl, [transfer], background, err);
  if (typeof place === 'number') return place;
  const workerCount = options.workers ?? 2;
  write(
    `ts-reactor demo --postgres: contended transfers on ${workerCount} worker processes over PostgreSQL alone (no Redis)`,
  );
  header(
    write,
    `${workerCount} × \`ts-reactor worker\` (concurrency ${concurrency} each) on ${place.where} (removed at the end)`,
    background,
  );
  const children = new WorkerProcesses();
  try {
    write('');
    for (let i = 1; i <= workerCount; i++) {
      const name = `worker-${i}`;
      const args = [
        ...place.workerArgs,
        '--module',
        moduleFile('demo-background-reactor'),
        '--concurrency',
        String(concurrency),
        '--worker-wait-ms',
        String(background.workerWaitMs),
        '--park-fallback-ms',
        String(background.parkFallbackMs),
      ];
      write(`started ${name} (pid ${await children.start(name, args)})`);
    }
    return await enqueueAndReport(place.engine, write, (worker) => worker, background.parkFallbackMs);
  } catch (error) {
    err(`ts-reactor demo: ${(error as Error).message}`);
    return 1;
  } finally {
    const stops = await children.stopAll();
    if (stops.length > 0) write(`stopped ${stops.join(', ')}`);
    await place.close(err);
  }
}

/** `undefined` for an execution whose record is gone (`engine.wait` rejects with `execution_not_found`); any other error is rethrown. */
function unlessGone(error: unknown): undefined {
  if (error instanceof ExecutionNotFoundError) return undefined;
  throw error;
}

function header(
  write: Write,
  workers: string,
  background: { readonly workerWaitMs: number; readonly parkFallbackMs: number },
): void {
  write('');
  write(
    `reactor:  demo-transfer = withLock(account:<account>) -> post-transfer (~${POST_MS} ms, the lock is held throughout)`,
  );
  write(`workers:  ${workers}`);
  write(
    `parking:  a worker that finds the lock held parks the execution at once (background.workerWaitMs = ${background.workerWaitMs});`,
  );
  write(
    `          the release wakes the first parked one (FIFO); a fallback job would resume it after ${background.parkFallbackMs} ms`,
  );
}

/** Starts the transfers, waits for each, and prints their stories from the persisted traces. */
async function enqueueAndReport(
  engine: Engine,
  write: Write,
  workerName: (fromStep: string) => string,
  parkFallbackMs: number,
): Promise<number> {
  write('');
  const t0 = Date.now();
  const started: { readonly transfer: Transfer; readonly executionId: string }[] = [];
  for (const t of TRANSFERS) {
    const queued = await engine.start(transfer, {
      transferId: t.label,
      account: t.account,
      amountCents: t.amountCents,
    });
    if (queued.status !== 'queued') throw new Error(`${t.label} was not queued: ${queued.status}`);
    started.push({ transfer: t, executionId: queued.executionId });
    write(
      `enqueued ${t.label} on account:${t.account} (${formatCents(t.amountCents)})  execution ${queued.executionId}`,
    );
  }
  const results = await Promise.all(
    started.map(async (s) => ({
      ...s,
      result: await engine.wait(s.executionId, { timeoutMs: WAIT_TIMEOUT_MS, pollMs: 10 }).catch(unlessGone),
    })),
  );
  const totalMs = Date.now() - t0;
  const labels = new Map(started.map((s) => [s.executionId, s.transfer.label]));

  const releases = results.flatMap(({ transfer: t, result }) =>
    (result?.trace ?? []).flatMap((e) =>
      e.type === 'coordination.released' ? [{ label: t.label, key: e.key, at: e.at }] : [],
    ),
  );
  const rows: Summary[] = [];
  for (const { transfer: t, result } of results) {
    write('');
    write(`== ${t.label}  account:${t.account} ==`);
    if (!result) {
      write('  (its record is gone)');
      rows.push({
        label: t.label,
        account: t.account,
        status: 'unknown',
        worker: '?',
        parks: 0,
        waitedMs: 0,
        ranAt: undefined,
      });
      continue;
    }
    const story = tell(result, t0, { labels, releases, workerName, parkFallbackMs });
    for (const line of story.lines) write(line);
    rows.push({
      label: t.label,
      account: t.account,
      status: result.status,
      worker: story.worker,
      parks: story.parks,
      waitedMs: story.waitedMs,
      ranAt: story.ranAt,
    });
  }

  write('');
  write('== summary ==');
  for (const row of rows) {
    const ran = row.ranAt === undefined ? '' : `  ran ${row.ranAt}`;
    write(
      `  ${row.label}  account:${row.account.padEnd(7)} ${row.status.padEnd(9)} on ${row.worker.padEnd(15)} parked ${row.parks}x, waited ${String(row.waitedMs).padStart(4)} ms${ran}`,
    );
  }
  const contended = rows.filter((r) => r.account === 'acme');
  const parked = contended.filter((r) => r.parks > 0);
  const allCompleted = rows.every((r) => r.status === 'completed');
  write('');
  write(
    `${contended.length} transfers on account:acme ran one at a time: ${parked.length} parked (${parked.map((r) => r.label).join(', ') || 'none'}) and ${parked.every((r) => r.status === 'completed') ? 'completed' : 'did NOT all complete'} once the lock came free.`,
  );
  write(`t-4 on account:globex did not wait for them.`);
  write(
    `${
      allCompleted
        ? `all ${rows.length} transfers completed`
        : `NOT every transfer completed (${rows
            .filter((r) => r.status !== 'completed')
            .map((r) => `${r.label}: ${r.status}`)
            .join(', ')})`
    } in ${totalMs} ms in total (one after another would take ≥ ${rows.length * POST_MS} ms).`,
  );
  return allCompleted ? 0 : 1;
}

interface Summary {
  readonly label: string;
  readonly account: string;
  readonly status: string;
  readonly worker: string;
  readonly parks: number;
  readonly waitedMs: number;
  readonly ranAt: string | undefined;
}

/** A lock release seen in some execution's trace. */
interface Release {
  readonly label: string;
  readonly key: string;
  readonly at: number;
}

interface Story {
  readonly lines: string[];
  readonly worker: string;
  readonly parks: number;
  /** From queued to the step's start. */
  readonly waitedMs: number;
  readonly ranAt: string | undefined;
}

/** One execution's trace as readable lines. */
function tell(
  result: RunResult,
  t0: number,
  context: {
    readonly labels: ReadonlyMap<string, string>;
    readonly releases: readonly Release[];
    readonly workerName: (fromStep: string) => string;
    readonly parkFallbackMs: number;
  },
): Story {
  const { labels, releases, workerName, parkFallbackMs } = context;
  const lines: string[] = [];
  const at = (e: ReactorEvent): string => `+${e.at - t0} ms`.padEnd(10);
  const line = (e: ReactorEvent, text: string): void => void lines.push(`  ${at(e)} ${text}`);
  const who = (holder: string | undefined): string => {
    const id = holder?.replace(/^execution /, '').replace(/@.*$/, ''); // `execution <id>` or `execution <id>@<job run>`
    return id === undefined ? 'another execution' : (labels.get(id) ?? holder!);
  };
  const value =
    result.status === 'completed'
      ? (result.value as { worker?: string; startedAt?: number; finishedAt?: number })
      : undefined;
  const worker = value?.worker === undefined ? '?' : workerName(value.worker);
  let parks = 0;
  let holder: string | undefined;
  let parkedAt: { at: number; fallbackMs: number; key: string } | undefined;
  let queuedAt: number | undefined;
  let stepAt: number | undefined;
  // The engine marks a job resumed by a release before its fallback with `run.woken`.
  const wokenJobs = new Set(result.trace.flatMap((e) => (e.type === 'run.woken' ? [e.jobId] : [])));
  for (const e of result.trace) {
    switch (e.type) {
      case 'run.queued':
        if (e.reason === 'park') {
          if (parkedAt) parkedAt.fallbackMs = e.delayMs;
        } else if (e.reason === 'start') {
          queuedAt ??= e.at;
          line(e, 'queued');
        } else line(e, `queued again (${e.reason}) in ${e.delayMs} ms`);
        break;
      case 'run.resumed': {
        const woken =
          wokenJobs.has(e.jobId) ||
          (parkedAt !== undefined && wokenJobs.size === 0 && e.at - parkedAt.at < parkedAt.fallbackMs - 50);
        const early = parkedAt === undefined ? 0 : parkedAt.fallbackMs - (e.at - parkedAt.at);
        const by = parkedAt === undefined ? undefined : releasedBy(releases, parkedAt.key, e.at);
        const wokenBy =
          by === undefined ? 'woken by the release' : `woken by ${by.label}'s release (+${by.at - t0} ms)`;
        line(
          e,
          woken
            ? `${wokenBy}: a worker picks it up (job ${shortJob(e.jobId)}), ${early} ms before its fallback`
            : `a worker picks it up (job ${shortJob(e.jobId)}${e.delivery > 1 ? `, delivery ${e.delivery}` : ''})`,
        );
        parkedAt = undefined;
        break;
      }
      case 'coordination.contended':
        holder = e.holder;
        break;
      case 'run.parked':
        parks++;
        parkedAt = { at: e.at, fallbackMs: parkFallbackMs, key: e.key };
        line(
          e,
          `PARKED: ${e.primitive} ${e.key} is held by ${who(holder)} (contention attempt ${e.attempt}); the worker moves on`,
        );
        break;
      case 'coordination.acquired':
        line(e, `${e.primitive} ${e.key} acquired`);
        break;
      case 'coordination.released':
        line(e, `${e.primitive} ${e.key} released`);
        break;
      case 'step.started':
        stepAt ??= e.at;
        line(e, `start ${e.step}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}`);
        break;
      case 'step.succeeded':
        line(e, `done ${e.step} on ${worker}`);
        break;
      case 'step.failed':
        line(e, `FAILED ${e.step}: ${e.error.message}`);
        break;
      case 'step.retrying':
        line(e, `retry ${e.step} in ${e.delayMs} ms: ${e.error.message}`);
        break;
      case 'run.completed':
        line(e, 'completed');
        break;
      case 'run.failed':
        line(e, `FAILED: ${e.error.message}`);
        break;
      case 'run.stopped':
        line(e, `stopped on this worker (${e.reason}); another worker goes on`);
        break;
      case 'run.recovered':
        line(e, `recovered by the sweep (${e.reason})`);
        break;
      case 'run.woken': // told with its run.resumed
      case 'coordination.waiting':
      case 'coordination.extended':
      case 'async.dispatched': // the demo reactors dispatch no async units
      case 'async.refused':
      case 'async.waiting':
      case 'async.retrying':
      case 'async.parked':
      case 'async.completed':
      case 'async.failed':
      case 'async.discarded':
      case 'run.paused': // the demo reactors have no interrupts
      case 'interrupt.paused':
      case 'interrupt.resumed':
      case 'interrupt.rejected':
      case 'interrupt.payload_invalid':
      case 'interrupt.timed_out':
      case 'wait.paused':
      case 'wait.resumed':
      case 'wait.timed_out':
        break;
      case 'coordination.denied':
      case 'coordination.lost':
      case 'run.cancelled':
      case 'run.retried':
      case 'run.halted':
      case 'run.replayed':
      case 'run.rolling_back':
      case 'run.started':
      case 'step.compensate_failed':
      case 'step.compensated':
      case 'step.halted':
      case 'step.skipped':
      case 'step.undo_failed':
      case 'step.undone':
      case 'step.timed_out':
      case 'step.attempt_lost':
      case 'run.paused_on_failure':
      case 'failure.retried':
      case 'failure.skipped':
      case 'failure.rolled_back':
      case 'failure.action_refused':
      case 'run.forked':
      case 'step.sleeping':
      case 'step.woke':
      case 'run.deadline_exceeded':
      case 'run.superseded':
      case 'async.child_cancelled':
      case 'run.version_unavailable':
      case 'trace.summarized':
      case 'step.progress': // the demo reactors report no progress
        line(e, `${e.type}${'step' in e && e.step !== undefined ? ` ${e.step}` : ''}`);
        break;
      case 'map.element_dispatched':
      case 'map.element_retrying':
      case 'map.element_parked':
      case 'map.element_completed':
      case 'map.element_failed':
      case 'map.element_skipped':
      case 'map.rollback_dispatched':
      case 'map.element_undone':
      case 'map.element_undo_failed':
      case 'map.parked':
      case 'map.collected':
        line(e, `${e.type} ${e.step}`);
        break;
    }
  }
  if (result.status !== 'completed' && result.status !== 'failed')
    lines.push(`  (still ${result.status} after ${WAIT_TIMEOUT_MS} ms)`);
  const ranAt =
    value?.startedAt !== undefined && value.finishedAt !== undefined
      ? `+${value.startedAt - t0}..+${value.finishedAt - t0} ms`
      : undefined;
  return {
    lines,
    worker,
    parks,
    waitedMs: stepAt === undefined || queuedAt === undefined ? 0 : stepAt - queuedAt,
    ranAt,
  };
}

/** The latest release of `key` at or just before `at` (worker clocks may differ by a few ms). */
function releasedBy(releases: readonly Release[], key: string, at: number): Release | undefined {
  let best: Release | undefined;
  for (const r of releases) if (r.key === key && r.at <= at + 5 && (best === undefined || r.at > best.at)) best = r;
  return best;
}

/** `<execution>:2` → `#2`. */
function shortJob(jobId: string): string {
  const n = jobId.slice(jobId.lastIndexOf(':') + 1);
  return /^\d+$/.test(n) ? `#${n}` : jobId;
}

function formatCents(cents: number): string {
  return `${(cents / 100).toFixed(2)} EUR`;
}

/** `./<name>.ts` next to this file when running from source, `./<name>.js` when built. */
export function moduleFile(name: string): string {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`./${name}${extension}`, import.meta.url));
}

/** How to run `ts-reactor worker`: the built `main.js`, or `main.ts` through tsx from source. */
function workerCommand(): { readonly command: string; readonly args: readonly string[] } {
  const main = moduleFile('main');
  if (!main.endsWith('.ts')) return { command: process.execPath, args: [main, 'worker'] };
  let tsx = 'tsx';
  try {
    tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  } catch {
    // Not resolvable from here: let node resolve `tsx` from the working directory.
  }
  return { command: process.execPath, args: ['--import', tsx, main, 'worker'] };
}

/** The demo's worker processes: started one by one (ready when they print their ready line), stopped with SIGTERM. */
export class WorkerProcesses {
  readonly #children: {
    readonly name: string;
    readonly child: ChildProcess;
    readonly exited: Promise<number | null>;
  }[] = [];
  readonly #killOnExit = (): void => {
    for (const { child } of this.#children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };

  constructor() {
    process.once('exit', this.#killOnExit);
  }

  /** Spawns `ts-reactor worker <args>` named `name`; resolves to its pid once it is ready. */
  async start(name: string, args: readonly string[], readyTimeoutMs = 60_000): Promise<number> {
    const { command, args: prefix } = workerCommand();
    const child = spawn(command, [...prefix, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, [WORKER_NAME_ENV]: name },
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    this.#children.push({ name, child, exited });
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`${name} printed no ready line within ${readyTimeoutMs} ms${stderr ? `:\n${stderr}` : ''}`)),
        readyTimeoutMs,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ts-reactor worker: ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`${name} could not start: ${error.message}`));
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (code ${code}) before it was ready${stderr ? `:\n${stderr.trim()}` : ''}`));
      });
    });
    return child.pid ?? 0;
  }

  /** SIGTERM to each worker (in-flight jobs finish), SIGKILL after `graceMs`; resolves to a line per worker. */
  async stopAll(graceMs = 30_000): Promise<string[]> {
    const lines = await Promise.all(
      this.#children.map(async ({ name, child, exited }) => {
        if (child.exitCode !== null || child.signalCode !== null)
          return `${name} (had exited: ${child.exitCode ?? child.signalCode})`;
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const code = await Promise.race([
          exited,
          new Promise<'killed'>((resolve) => (timer = setTimeout(() => resolve('killed'), graceMs))),
        ]);
        clearTimeout(timer);
        if (code === 'killed') {
          child.kill('SIGKILL');
          await exited;
          return `${name} (killed after ${graceMs} ms)`;
        }
        return `${name} (exit ${code})`;
      }),
    );
    process.off('exit', this.#killOnExit);
    return lines;
  }
}

/** Deletes every key under the demo's own prefix (store, coordinator, wait lists and queue). */
export async function removeKeys(url: string, prefix: string): Promise<void> {
  const redis = await connectRedis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit().catch(() => undefined);
  }
}
