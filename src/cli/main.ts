#!/usr/bin/env node
/**
 * The `ts-reactor` command.
 *
 * @module
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runDemo } from './demo.js';

/** Where the command writes. */
export interface CliIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

const USAGE = `Usage: ts-reactor <command> [options]

Commands:
  demo        run a small checkout reactor on the embedded engine (no Redis needed)

Options:
  -h, --help  show this help`;

const COMMANDS: Readonly<Record<string, (io: CliIO) => Promise<number>>> = {
  demo: async (io) => {
    await runDemo(io.out);
    return 0;
  },
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
  if (rest.includes('-h') || rest.includes('--help')) {
    io.out(USAGE);
    return 0;
  }
  if (rest.length > 0) {
    io.err(`ts-reactor ${command}: unexpected argument "${rest[0]}"\n\n${USAGE}`);
    return 2;
  }
  return handler(io);
}

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
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
