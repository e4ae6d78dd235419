/**
 * Child process of P13 (`node --import tsx p13-worker.ts '<json config>'`, see
 * {@link P13ChildConfig}): a ts-reactor worker for the step-lock reactor. Prints
 * `{"ready":true}`, then answers stdin lines: `ping <n>` → `{"pong":n,"t":…}`; `dump <round>` →
 * the round's sections (key, start, end), its park and wake counts, the sections that found their
 * key's guard directory taken (`clashes`, with a `guardDir`), and the spans during which
 * its subscriptions read not confirmed (sampled every 10 ms), then clears them.
 *
 * Timestamps are `performance.timeOrigin + performance.now()` of this process.
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import { now } from './children.js';
import { p13Reactor, type P13ChildConfig } from './p13-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P13ChildConfig;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

const sections: [string, string, number, number][] = [];
const parked: [string, string, number][] = [];
const parkedIds: string[] = [];
const parkJobs: [string, number][] = [];
const wokenJobs: string[] = [];
const counts = { parks: 0, woken: 0, completed: 0, failed: 0, clashes: 0 };
const unconfirmed: { from: number; to: number; detail: string }[] = [];
let open: { from: number; detail: string } | undefined;

const runtime = createRedisRuntime({
  ...(config.url === undefined ? {} : { url: config.url }),
  ...(config.cluster === undefined ? {} : { cluster: config.cluster }),
  prefix: config.prefix,
  ...(config.fastRecovery === true
    ? {
        background: { livenessTtlMs: 5_000, sweepIntervalMs: 2_000 },
        stall: { lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
      }
    : {}),
  reactors: [
    p13Reactor(
      (key, id, start, end) => sections.push([key, id, start, end]),
      config.guardDir,
      () => counts.clashes++,
    ),
  ],
});
runtime.engine.subscribe((event) => {
  if (event.type === 'run.parked') {
    counts.parks++;
    parkedIds.push(event.executionId);
    parked.push([event.executionId, event.key, now()]);
    parkJobs.push([event.jobId, now()]);
  } else if (event.type === 'coordination.waiting') parked.push([event.executionId, event.key, now()]);
  else if (event.type === 'run.woken') {
    counts.woken++;
    wokenJobs.push(event.jobId);
  } else if (event.type === 'run.completed') {
    counts.completed++;
    print({ c: 1 });
  } else if (event.type === 'run.failed') {
    counts.failed++;
    print({ x: 1 });
  }
});
setInterval(() => {
  const health = runtime.health().subscriptions;
  const t = now();
  if (!health.confirmed && open === undefined) open = { from: t, detail: health.detail ?? '' };
  if (health.confirmed && open !== undefined) {
    unconfirmed.push({ ...open, to: t });
    open = undefined;
  }
}, 10).unref();

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const [verb = '', arg = ''] = line.trim().split(/\s+/);
    if (verb === 'ping') return print({ pong: Number(arg), t: now() });
    if (verb === 'dump') {
      const spans = [...unconfirmed.splice(0), ...(open === undefined ? [] : [{ ...open, to: now(), open: true }])];
      if (open !== undefined) open = { from: now(), detail: open.detail };
      print({
        dump: Number(arg),
        pid: process.pid,
        sections: sections.splice(0),
        parked: parked.splice(0),
        parkedIds: parkedIds.splice(0),
        parkJobs: parkJobs.splice(0),
        wokenJobs: wokenJobs.splice(0),
        ...counts,
        unconfirmed: spans,
      });
      counts.parks = counts.woken = counts.completed = counts.failed = counts.clashes = 0;
    }
  })
  .on('close', () => process.exit(0));
process.once('SIGTERM', () => void runtime.close().finally(() => process.exit(0)));
runtime.startWorker({ concurrency: config.concurrency });
print({ ready: true, pid: process.pid });
