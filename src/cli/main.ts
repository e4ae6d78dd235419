#!/usr/bin/env node
/**
 * The `ts-reactor` command.
 *
 * @module
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runDemo } from './demo.js';
import { executionsCommand, locksCommand, OPS_USAGE, orderedLockCommand, runOps } from './ops.js';
import { SCHEDULES_USAGE } from './schedules-usage.js';

/** Where the command writes. */
export interface CliIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

const USAGE = `Usage: ts-reactor <command> [options]

Commands:
  demo                  run a small checkout reactor on the embedded engine (no Redis needed)
  demo --background     run contended transfers on the embedded engine's background worker pool
  demo --redis <url>    the same with worker processes over Redis and BullMQ
                        (options: --workers <n>, default 2)
  demo --postgres <url> the same with worker processes over PostgreSQL alone (no Redis), in a
                        schema and queue of their own, removed at the end (--workers <n>)
  demo step-lock        step-scoped coordination: audit -> charge (locked on the account) -> notify;
                        the serialized, contended (parked, woken) and compensated paths
                        (--redis <url> | --postgres <url>, [--workers <n>]: on worker
                        processes over Redis, or over PostgreSQL alone)
  worker --module <path> [--redis <url> | --postgres <url>] [--concurrency <n>] ...
                        process background executions of the module's reactors on Redis, or
                        on PostgreSQL alone (ts-reactor worker --help for every option)
  migrate --postgres <url> [--schema <name>]
                        create or upgrade ts-reactor's PostgreSQL tables; prints the versions
  dashboard [--redis <url>] [--port <n>] [--module <path>] [--read-only] [--base-path <path>]
                        serve the dashboard over Redis (ts-reactor dashboard --help)

${OPS_USAGE}
${SCHEDULES_USAGE}

Options:
  -h, --help  show this help`;

type Handler = (args: readonly string[], io: CliIO) => Promise<number>;

const demo: Handler = async (args, io) => {
  if (args[0] === 'step-lock') return stepLockDemo(args.slice(1), io);
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        background: { type: 'boolean' },
        redis: { type: 'string' },
        postgres: { type: 'string' },
        workers: { type: 'string' },
      },
    }));
  } catch (error) {
    io.err(`ts-reactor demo: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.redis !== undefined && values.postgres !== undefined) {
    io.err(`ts-reactor demo: --redis and --postgres name two backends: give one\n\n${USAGE}`);
    return 2;
  }
  if (values.background !== true && values.redis === undefined && values.postgres === undefined) {
    if (values.workers !== undefined) {
      io.err(`ts-reactor demo: --workers needs --redis <url> or --postgres <url>\n\n${USAGE}`);
      return 2;
    }
    await runDemo(io.out);
    return 0;
  }
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1 || workers > 16)) {
    io.err(`ts-reactor demo: --workers must be an integer from 1 to 16; got "${values.workers}"`);
    return 2;
  }
  if (workers !== undefined && values.redis === undefined && values.postgres === undefined) {
    io.err(
      `ts-reactor demo: --workers needs --redis <url> or --postgres <url> (the embedded default runs one in-process pool)\n\n${USAGE}`,
    );
    return 2;
  }
  const { runBackgroundDemo } = await import('./demo-background.js');
  return runBackgroundDemo({
    write: io.out,
    err: io.err,
    ...(values.redis === undefined ? {} : { redisUrl: values.redis }),
    ...(values.postgres === undefined ? {} : { postgresUrl: values.postgres }),
    ...(workers === undefined ? {} : { workers }),
  });
};

/** `demo step-lock [--redis <url> | --postgres <url>] [--workers <n>]`. */
const stepLockDemo: Handler = async (args, io) => {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: { redis: { type: 'string' }, postgres: { type: 'string' }, workers: { type: 'string' } },
    }));
  } catch (error) {
    io.err(`ts-reactor demo step-lock: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.redis !== undefined && values.postgres !== undefined) {
    io.err(`ts-reactor demo step-lock: --redis and --postgres name two backends: give one\n\n${USAGE}`);
    return 2;
  }
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (
    workers !== undefined &&
    ((values.redis === undefined && values.postgres === undefined) ||
      !Number.isInteger(workers) ||
      workers < 1 ||
      workers > 16)
  ) {
    io.err(
      `ts-reactor demo step-lock: --workers needs --redis <url> or --postgres <url> and an integer from 1 to 16; got "${values.workers}"`,
    );
    return 2;
  }
  const { runStepLockDemo } = await import('./demo-step-lock.js');
  return runStepLockDemo({
    write: io.out,
    err: io.err,
    ...(values.redis === undefined ? {} : { redisUrl: values.redis }),
    ...(values.postgres === undefined ? {} : { postgresUrl: values.postgres }),
    ...(workers === undefined ? {} : { workers }),
  });
};

const worker: Handler = async (args, io) => {
  const { runWorkerCommand, WORKER_USAGE } = await import('./worker.js');
  if (args.includes('-h') || args.includes('--help')) {
    io.out(WORKER_USAGE);
    return 0;
  }
  return runWorkerCommand(args, io);
};

const migrateCommand: Handler = async (args, io) => {
  const { runMigrateCommand, MIGRATE_USAGE } = await import('./migrate.js');
  if (args.includes('-h') || args.includes('--help')) {
    io.out(MIGRATE_USAGE);
    return 0;
  }
  return runMigrateCommand(args, io);
};

const dashboard: Handler = async (args, io) => {
  const { runDashboardCommand, DASHBOARD_USAGE } = await import('./dashboard.js');
  if (args.includes('-h') || args.includes('--help')) {
    io.out(DASHBOARD_USAGE);
    return 0;
  }
  return runOps('dashboard', (a, o) => runDashboardCommand(a, o), args, io);
};

const COMMANDS: Readonly<Record<string, Handler>> = {
  demo,
  worker,
  migrate: migrateCommand,
  dashboard,
  executions: (args, io) => runOps('executions', executionsCommand, args, io),
  locks: (args, io) => runOps('locks', locksCommand, args, io),
  'ordered-lock': (args, io) => runOps('ordered-lock', orderedLockCommand, args, io),
  schedules: (args, io) =>
    runOps('schedules', async (a, o) => (await import('./schedules.js')).schedulesCommand(a, o), args, io),
};

/** Runs the command line `argv` (without the node and script paths); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    (command === undefined ? io.err : io.out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  const handler = COMMANDS[command];
  if (!handler) {
    io.err(`ts-reactor: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  if (
    command !== 'worker' &&
    command !== 'dashboard' &&
    command !== 'migrate' &&
    (rest.includes('-h') || rest.includes('--help'))
  ) {
    io.out(USAGE);
    return 0;
  }
  return handler(rest, io);
}

/** How long after a command has ended the process exits even though something is still open, ms. */
export const EXIT_GRACE_MS = 1_000;

const LEFT_OPEN =
  'ts-reactor worker: exiting although the module left something open (a connection, a timer); export close() from the module to close it';

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const io: CliIO = { out: (line) => console.log(line), err: (line) => console.error(line) };
  const argv = process.argv.slice(2);
  main(argv, io).then(
    (code) => {
      process.exitCode = code;
      // What is still open once the command is done does not keep the process: a connection a failed
      // command could not close (a half-built runtime), or one an app module opened and did not close.
      setTimeout(() => {
        if (argv[0] === 'worker' && code === 0) io.err(LEFT_OPEN);
        process.exit(code);
      }, EXIT_GRACE_MS).unref();
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
