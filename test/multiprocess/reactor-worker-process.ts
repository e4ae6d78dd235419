/**
 * A worker process for the tests that watch an execution another process runs
 * (`watch.test.ts`, `test/web/browser-live.test.ts`): `node --import tsx reactor-worker-process.ts
 * '<json>'` ({@link ReactorWorkerConfig}). It builds a runtime on the test's backend and namespace
 * (`bundleOf`) with the reactor the config names, starts a worker, prints `{"ready":true}` and
 * runs until killed.
 */
import { createRuntime } from '../../src/runtime/create-runtime.js';
import type { AnyReactorDefinition } from '../../src/index.js';
import { bundleOf, type MatrixBackendName, type ServerAddress } from '../support/backend-recipes.js';
import { live } from './live-protocol.js';
import { watched } from './watch-protocol.js';

/** The reactors a worker process can run, by the name a test gives in its config. */
const REACTORS = { watched, live } as const satisfies Record<string, AnyReactorDefinition>;

/** The JSON argument of a worker process. */
export interface ReactorWorkerConfig {
  readonly backend: MatrixBackendName;
  readonly address: ServerAddress;
  readonly namespace: string;
  readonly reactor: keyof typeof REACTORS;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ReactorWorkerConfig;
  const say = (level: string) => (fields: object | string, message?: string) =>
    process.stderr.write(
      `${level} ${message ?? ''} ${JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? String(v) : v))}\n`,
    );
  const logger = { debug: () => undefined, info: say('info'), warn: say('warn'), error: say('error') };
  const runtime = createRuntime(bundleOf(config.backend, config.address, config.namespace), {
    reactors: [REACTORS[config.reactor]],
    logger,
    logEvents: false,
  });
  process.once('SIGTERM', () => {
    void runtime.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  await runtime.engine.result('reactor-worker-process:connectivity-check'); // connections up before ready
  runtime.startWorker({ concurrency: 4 });
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `reactor-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
