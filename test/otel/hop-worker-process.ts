/**
 * A worker process for `multiprocess.test.ts`: `node --import tsx hop-worker-process.ts '<json>'`
 * (see {@link HopWorkerConfig}). It has its own tracer provider with an in-memory exporter and
 * a start/end counter, and a Redis runtime with the `otel` middleware. It prints a ready line,
 * starts its BullMQ worker on a `go` line, and stops it once its job of `otel-hop` ends (a
 * retry, a park or the completion), then prints every span it finished ({@link HopStoppedLine}).
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createInterface } from 'node:readline';
import { createRedisRuntime, type Worker } from '../../src/bullmq.js';
import { otel } from '../../src/otel/index.js';
import {
  buildHop,
  HOP_PARK_FALLBACK_MS,
  spanLine,
  type HopReadyLine,
  type HopStoppedLine,
  type HopWorkerConfig,
} from './hop-protocol.js';

function writeLine(value: unknown): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));
}

async function main(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('hop-worker-process: pass the JSON config as the first argument');
  const config = JSON.parse(raw) as HopWorkerConfig;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new InMemorySpanExporter();
  const counts = { started: 0, ended: 0 };
  const counter: SpanProcessor = {
    onStart: () => void counts.started++,
    onEnd: () => void counts.ended++,
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), counter] });
  const tracing = otel({ tracer: provider.getTracer('hop-worker') });
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: [buildHop()],
    middleware: [tracing],
    background: { workerWaitMs: 0, parkFallbackMs: HOP_PARK_FALLBACK_MS },
  });
  let worker: Worker | undefined;
  let stopping = false;
  runtime.engine.subscribe((e) => {
    const ended =
      e.type === 'run.queued' && e.reason !== 'start'
        ? e.reason
        : e.type === 'run.completed' || e.type === 'run.failed'
          ? e.type.slice(4)
          : undefined;
    if (ended === undefined || stopping || !worker) return;
    stopping = true;
    // Stopping waits for the job in flight (this one) to finish: its spans have ended by then.
    void worker.stop().then(async () => {
      const line: HopStoppedLine = {
        stopped: true,
        name: config.name,
        pid: process.pid,
        ended,
        spans: exporter.getFinishedSpans().map(spanLine),
        started: counts.started,
        ended_: counts.ended,
        open: tracing.openSpans,
      };
      await writeLine(line);
    });
  });
  await runtime.engine.result('hop-worker-process:connectivity-check');
  createInterface({ input: process.stdin }).on('line', (text) => {
    if (text.trim() === 'go' && !worker) worker = runtime.startWorker({ concurrency: 1 });
  });
  const ready: HopReadyLine = { ready: true, name: config.name, pid: process.pid };
  await writeLine(ready);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `hop-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
