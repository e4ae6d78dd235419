/**
 * The operations commands over Redis: `executions …` (in `executions.ts`), `locks [pattern]` and
 * `ordered-lock peek|skip|reset <key>`.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { ReactorError } from '../errors.js';
import { showProgress, TARGET_OPTIONS, type OpsIO } from './ops-target.js';
import { APP_OPTIONS, withApp } from './ops-app.js';
import { coordinationText, orderedLine } from './ops-format.js';
import { executionsCommand, executionsUsage } from './executions.js';
import { UsageError } from './worker.js';

export { executionsCommand };

/** Usage of the operations commands. */
export const OPS_USAGE = `Operations (over Redis; --redis <url> or REDIS_URL or --redis-cluster <host:port,…>, --prefix <prefix>
(default: the module's prefix, else TS_REACTOR_PREFIX); or over PostgreSQL: --postgres <url>, --schema <name>;
--module <path> (the app module, as the worker loads it: its reactors, prefix and queue), --json,
--connect-timeout <ms>):
${executionsUsage()}
  locks [pattern] [--internal] [--progress]
                        live lock holds, semaphores, rate windows, period markers and ordered
                        locks whose key matches the glob (* and ?), with the parked waiters
  ordered-lock peek|skip|reset <key>
                        read an ordered lock's cursor, pass over its head, or start a new epoch`;

type Handler = (args: readonly string[], io: OpsIO) => Promise<number>;

function parse<O extends Record<string, { readonly type: 'string' | 'boolean'; readonly multiple?: boolean }>>(
  args: readonly string[],
  options: O,
) {
  try {
    return parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: true,
      options: { ...TARGET_OPTIONS, ...APP_OPTIONS, ...options },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `locks [pattern]`. */
export const locksCommand: Handler = async (args, io) => {
  const { values, positionals } = parse(args, { internal: { type: 'boolean' } });
  if (positionals.length > 1) throw new UsageError('expected "locks [pattern]"');
  const progress = showProgress(io, values.progress);
  return withApp('locks', values, io, async (conn) => {
    const view = await conn.model.coordination({
      pattern: positionals[0] ?? '*',
      ...(progress
        ? {
            onProgress: (kind: string, examined: number) =>
              io.err(`ts-reactor locks: scanning ${kind} keys… ${examined} examined`),
          }
        : {}),
    });
    if (values.json) io.out(JSON.stringify(view, null, 2));
    else {
      const lines = coordinationText(view, values.internal === true);
      lines.forEach((l) => io.out(l));
      if (lines.length === 0)
        io.out(`(nothing held${positionals[0] === undefined ? '' : ` matching ${positionals[0]}`})`);
    }
    return 0;
  });
};

/** `ordered-lock peek|skip|reset <key>`. */
export const orderedLockCommand: Handler = async (args, io) => {
  const { values, positionals } = parse(args, {});
  const [op, key, ...rest] = positionals;
  if ((op !== 'peek' && op !== 'skip' && op !== 'reset') || key === undefined || key === '' || rest.length > 0)
    throw new UsageError('expected "ordered-lock peek|skip|reset <key>"');
  return withApp('ordered-lock', values, io, async (conn) => {
    const before = await conn.model.orderedLock(key);
    const after =
      op === 'peek' ? before : op === 'skip' ? await conn.model.orderedSkip(key) : await conn.model.orderedReset(key);
    if (values.json) io.out(JSON.stringify(op === 'peek' ? after : { before, after }, null, 2));
    else {
      if (op !== 'peek') io.out(`before: ${orderedLine(before)}`);
      io.out(`${op === 'peek' ? '' : 'after:  '}${orderedLine(after)}`);
    }
    return 0;
  });
};

/** Runs a handler, turning usage problems and known errors into one line and an exit code. */
export async function runOps(name: string, handler: Handler, args: readonly string[], io: OpsIO): Promise<number> {
  try {
    return await handler(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`ts-reactor ${name}: ${error.message}${error.showUsage ? `\n\n${OPS_USAGE}` : ''}`);
      return 2;
    }
    if (ReactorError.is(error)) {
      io.err(`ts-reactor ${name}: ${error.message} (${error.code})`);
      return 1;
    }
    throw error;
  }
}
