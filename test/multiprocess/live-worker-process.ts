/**
 * A worker process for `test/web/browser-live.test.ts`: `node --import tsx live-worker-process.ts '<json>'`
 * ({@link LiveWorkerConfig}). It builds a runtime on the test's backend and namespace
 * (`bundleOf`), starts a worker, prints `{"ready":true}` and runs until killed.
 */
import { createRuntime } from '../../src/runtime/create-runtime.js';
import { bundleOf } from '../support/backend-recipes.js';
import { live, type LiveWorkerConfig } from './live-protocol.js';

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as LiveWorkerConfig;
  const say = (level: string) => (fields: object | string, message?: string) =>
    process.stderr.write(
      `${level} ${message ?? ''} ${JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? String(v) : v))}\n`,
    );
  const logger = { debug: () => undefined, info: say('info'), warn: say('warn'), error: say('error') };
  const runtime = createRuntime(bundleOf(config.backend, config.address, config.namespace), {
    reactors: [live],
    logger,
    logEvents: false,
  });
  process.once('SIGTERM', () => {
    void runtime.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  await runtime.engine.result('live-worker-process:connectivity-check'); // connections up before ready
  runtime.startWorker({ concurrency: 4 });
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `live-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
