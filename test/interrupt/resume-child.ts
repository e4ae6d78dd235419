/**
 * A resuming process for `backends.test.ts`: `node --import tsx resume-child.ts '<json>'` with
 * `{ backend, address, namespace, executionId, payload }`. It builds a runtime on the same backend
 * and namespace as its parent's (`bundleOf`) with the approval reactor,
 * prints `{"ready":true}`, waits for a `go` line on stdin, calls `engine.resume` once and prints
 * `{"accepted":true,"status":…}` or `{"refused":code,"reason":…}`, then exits.
 */
import { createInterface } from 'node:readline';
import { ReactorError } from '../../src/index.js';
import { createRuntime } from '../../src/runtime/create-runtime.js';
import { bundleOf, type MatrixBackendName, type ServerAddress } from '../support/backend-recipes.js';
import { approval } from './helpers.js';

interface Config {
  readonly backend: MatrixBackendName;
  readonly address: ServerAddress;
  readonly namespace: string;
  readonly executionId: string;
  readonly payload: unknown;
}

function writeLine(value: unknown): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as Config;
  const runtime = createRuntime(bundleOf(config.backend, config.address, config.namespace), {
    reactors: [approval([])],
  });
  await runtime.engine.result(config.executionId); // connections up before the start line
  const go = new Promise<void>((resolve) =>
    createInterface({ input: process.stdin }).on('line', (line) => line.trim() === 'go' && resolve()),
  );
  await writeLine({ ready: true });
  await go;
  try {
    const result = await runtime.engine.resume(config.executionId, config.payload);
    await writeLine({ accepted: true, status: result.status });
  } catch (error) {
    await writeLine({
      refused: ReactorError.is(error) ? error.code : String(error),
      reason: ReactorError.is(error) ? error.details.reason : undefined,
    });
  }
  await runtime.close();
  process.exit(0);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
