/**
 * Issue 7 acceptance: an execution that ran across 3 worker processes forms one trace. A real
 * redis-server, three real worker processes (`hop-worker-process.ts`), each with its own tracer
 * provider and in-memory exporter; this process starts the execution (its enqueue span is the
 * trace's root) and hands the execution from worker to worker: A runs job 1 (a retry ends it),
 * B job 2 (a held lock parks it), C job 3 (it completes). Each worker runs one job and reports
 * the spans it finished.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { ATTR } from '../../src/otel/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { buildHop, HOP_LOCK, spanLine, type HopReadyLine, type HopStoppedLine, type SpanLine } from './hop-protocol.js';
import { tracing } from './tracing.js';

const WORKER = fileURLToPath(new URL('./hop-worker-process.ts', import.meta.url));
const PREFIX = 'otel-hop';
const children = new Set<ChildProcess>();
let server: RedisServerHandle;
let runtime: RedisRuntime | undefined;
let backend: RedisBackend | undefined;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await runtime?.close().catch(() => undefined);
  await backend?.close().catch(() => undefined);
  await server?.dispose();
});

/** Starts a worker's consumer and waits until it ran its one job and stopped. */
async function runOneJob(worker: JsonChild): Promise<HopStoppedLine> {
  worker.child.stdin!.write('go\n');
  return worker.line<HopStoppedLine>((v) => v.stopped === true);
}

test('an execution that ran across 3 worker processes forms one trace with consistent parent links', async () => {
  const t = tracing();
  runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [buildHop()], middleware: [t.middleware] });
  backend = createRedisBackend({ url: server.url, prefix: PREFIX });
  const workers = ['A', 'B', 'C'].map((name) =>
    spawnJsonChild(WORKER, { url: server.url, prefix: PREFIX, name }, children),
  );
  await Promise.all(workers.map((w) => w.line<HopReadyLine>((v) => v.ready === true)));
  const [a, b, c] = workers as [JsonChild, JsonChild, JsonChild];

  // The test holds the lock `third` needs, so job 2 parks.
  const lock = await backend.coordinator.lockAcquire({
    key: HOP_LOCK(7),
    holder: { owner: 'the-test', executionId: 'the-test' },
    ttlMs: 60_000,
  });
  expect(lock.acquired).toBe(true);
  const started = await runtime.engine.start(buildHop(), { n: 7 });
  expect(started.status).toBe('queued');

  const jobA = await runOneJob(a);
  expect(jobA.ended).toBe('retry');
  const jobB = await runOneJob(b);
  expect(jobB.ended).toBe('park');
  await backend.coordinator.lockRelease(HOP_LOCK(7), 'the-test');
  const jobC = await runOneJob(c);
  expect(jobC.ended).toBe('completed');
  const done = await runtime.engine.wait(started.executionId, { timeoutMs: 120_000 });
  expect(done?.status).toBe('completed');

  // No leaks: every span a worker started has ended, none is left open.
  for (const job of [jobA, jobB, jobC]) {
    expect(job.started).toBeGreaterThan(0);
    expect(job.ended_).toBe(job.started);
    expect(job.spans).toHaveLength(job.started);
    expect(job.open).toBe(0);
  }
  expect(new Set([jobA.pid, jobB.pid, jobC.pid]).size).toBe(3);

  const here = t.spans().map(spanLine);
  const all: SpanLine[] = [...here, ...jobA.spans, ...jobB.spans, ...jobC.spans];
  // One trace; one root (the enqueue that accepted the execution, here); every other parent is a span of the trace.
  expect(new Set(all.map((s) => s.traceId))).toEqual(new Set([here[0]!.traceId]));
  const ids = new Set(all.map((s) => s.spanId));
  expect(ids.size).toBe(all.length);
  const roots = all.filter((s) => s.parentSpanId === undefined);
  expect(roots.map((s) => [s.name, s.attributes[ATTR.enqueueReason], s.kind])).toEqual([
    ['enqueue otel-hop', 'start', SpanKind.PRODUCER],
  ]);
  for (const span of all)
    if (span.parentSpanId !== undefined) expect(ids.has(span.parentSpanId), `parent of ${span.name}`).toBe(true);
  const root = roots[0]!;
  const byId = new Map(all.map((s) => [s.spanId, s]));
  const parentName = (s: SpanLine): string =>
    s.parentSpanId === undefined ? '(root)' : byId.get(s.parentSpanId)!.name;

  // Each worker: one run span under the root, its steps under its run span, its enqueue under its run span.
  const shape = (job: HopStoppedLine): string[] => job.spans.map((s) => `${s.name} <- ${parentName(s)}`).sort();
  expect(shape(jobA)).toEqual(
    [
      'enqueue otel-hop <- run otel-hop',
      'run otel-hop <- enqueue otel-hop',
      'step first <- run otel-hop',
      'step second <- run otel-hop',
    ].sort(),
  );
  expect(shape(jobB)).toEqual(
    [
      'enqueue otel-hop <- run otel-hop',
      'run otel-hop <- enqueue otel-hop',
      'step second <- run otel-hop',
      'step third <- run otel-hop',
    ].sort(),
  );
  expect(shape(jobC)).toEqual(['run otel-hop <- enqueue otel-hop', 'step third <- run otel-hop']);
  const runs = [jobA, jobB, jobC].map((job) => job.spans.find((s) => s.name === 'run otel-hop')!);
  for (const run of runs) {
    expect(run.parentSpanId).toBe(root.spanId);
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.attributes[ATTR.executionId]).toBe(started.executionId);
  }
  for (const job of [jobA, jobB, jobC]) {
    const run = job.spans.find((s) => s.name === 'run otel-hop')!;
    for (const s of job.spans) if (s !== run && s.name.startsWith('step')) expect(s.parentSpanId).toBe(run.spanId);
  }
  expect(runs.map((r) => r.attributes[ATTR.runOutcome])).toEqual(['retrying', 'parked', 'completed']);
  expect(runs.map((r) => r.attributes[ATTR.jobId])).toEqual([
    `${started.executionId}:1`,
    `${started.executionId}:2`,
    `${started.executionId}:3`,
  ]);

  // The steps, as they went: `second` retried from A to B; `third` parked in B, ran in C.
  const steps = (job: HopStoppedLine): unknown[][] =>
    job.spans
      .filter((s) => s.name.startsWith('step'))
      .map((s) => [s.attributes[ATTR.step], s.attributes[ATTR.stepOutcome], s.attributes[ATTR.attempt]])
      .sort();
  expect(steps(jobA)).toEqual([
    ['first', 'succeeded', 1],
    ['second', 'retrying', 1],
  ]);
  expect(steps(jobB)).toEqual([
    ['second', 'succeeded', 2],
    ['third', 'parked', 1],
  ]);
  expect(steps(jobC)).toEqual([['third', 'succeeded', 1]]);
  const parkedThird = jobB.spans.find((s) => s.attributes[ATTR.step] === 'third')!;
  expect(parkedThird.status).toBe(SpanStatusCode.OK);
  expect(parkedThird.events).toContain('coordination.contended');
  expect(jobA.spans.find((s) => s.attributes[ATTR.step] === 'second')!.events).toEqual(['step.retrying']);
  expect(runs[1]!.events).toContain('run.parked');
  expect(jobB.spans.find((s) => s.name === 'enqueue otel-hop')!.attributes[ATTR.enqueueReason]).toBe('park');
  expect(jobA.spans.find((s) => s.name === 'enqueue otel-hop')!.attributes[ATTR.enqueueReason]).toBe('retry');
}, 900_000);
