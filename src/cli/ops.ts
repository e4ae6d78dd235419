/**
 * The operations commands over Redis: `executions list|show`, `locks [pattern]` and
 * `ordered-lock peek|skip|reset <key>`.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { EXECUTION_STATUSES, type ExecutionStatus } from '../engine/ports/store.js';
import { ReactorError } from '../errors.js';
import { parseTagFilters } from '../ops/tag-filter.js';
import { parseOperatorTime } from '../ops/time.js';
import { connect, readTarget, showProgress, TARGET_OPTIONS, type Connected, type OpsIO } from './ops-target.js';
import { coordinationText, executionLine, executionText, orderedLine } from './ops-format.js';
import { PREFIX_ENV, UsageError } from './worker.js';
import { prefixHasKeys } from './worker-prefix.js';

/** Usage of the operations commands. */
export const OPS_USAGE = `Operations (over Redis; --redis <url> or REDIS_URL or --redis-cluster <host:port,…>, --prefix <prefix> or TS_REACTOR_PREFIX, --json, --connect-timeout <ms>):
  executions list [--reactor <name>] [--status <status>] [--tag <key=value>]… [--from <time>] [--to <time>] [--limit <n>] [--cursor <c>]
  executions show <id>
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
      options: { ...TARGET_OPTIONS, ...options },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function time(name: string, raw: string | undefined): number | undefined {
  const value = parseOperatorTime(raw);
  if (value === undefined) return undefined;
  if (!Number.isFinite(value))
    throw new UsageError(`--${name}: "${raw}" is not a time (ISO 8601 or ms since the epoch)`, false);
  return value;
}

const STATUSES = EXECUTION_STATUSES;

/** `--limit`: an integer 1–500. @throws UsageError otherwise (exit 2). */
function pageSize(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > 500)
    throw new UsageError(`--limit must be an integer from 1 to 500; got "${raw}"`, false);
  return value;
}

/** `--status`: one of {@link STATUSES}. @throws UsageError otherwise (exit 2). */
function statusFilter(raw: string | undefined): ExecutionStatus | undefined {
  if (raw === undefined) return undefined;
  const status = STATUSES.find((s) => s === raw);
  if (status === undefined) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}; got "${raw}"`, false);
  return status;
}

/** `--tag key=value` (repeated, or comma-separated): every tag must match. @throws UsageError otherwise (exit 2). */
function tagFilter(raw: readonly string[] | undefined): Readonly<Record<string, string>> | undefined {
  try {
    return parseTagFilters(raw ?? []);
  } catch (error) {
    throw new UsageError(`--${(error as Error).message}`, false);
  }
}

/** Said after an empty list when no key at all exists under the prefix: the app may use another one. */
async function emptyPrefixHint(conn: Connected, prefix: string | undefined): Promise<string> {
  const shown = prefix ?? 'rx';
  if ((await prefixHasKeys(conn.backend.redis, shown)) !== false) return ''; // keys, or a keyspace too large to tell
  return ` — no key exists under the prefix "${shown}"; does the app use another prefix? (--prefix, ${PREFIX_ENV})`;
}

/** `executions list|show`. */
export const executionsCommand: Handler = async (args, io) => {
  const { values, positionals } = parse(args, {
    reactor: { type: 'string' },
    status: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    tag: { type: 'string', multiple: true },
  });
  const [sub, id, ...rest] = positionals;
  if ((sub !== 'list' && sub !== 'show') || rest.length > 0 || (sub === 'show') !== (id !== undefined))
    throw new UsageError('expected "executions list [filters]" or "executions show <id>"');
  const target = readTarget(values, io.env ?? process.env);
  const from = time('from', values.from);
  const to = time('to', values.to);
  const limit = pageSize(values.limit);
  const status = statusFilter(values.status);
  const tags = tagFilter(values.tag);
  const conn = await connect(target);
  try {
    if (sub === 'show') {
      const detail = await conn.model.execution(id!);
      if (!detail) {
        io.err(`ts-reactor executions show: no execution ${id!} (or its record expired)`);
        return 1;
      }
      if (values.json) io.out(JSON.stringify(detail, null, 2));
      else executionText(detail).forEach((l) => io.out(l));
      return 0;
    }
    const page = await conn.model.executions({
      ...(values.reactor === undefined ? {} : { reactor: values.reactor }),
      ...(status === undefined ? {} : { status }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(tags === undefined ? {} : { tags }),
      ...(limit === undefined ? {} : { limit }),
      ...(values.cursor === undefined ? {} : { cursor: values.cursor }),
    });
    if (values.json) io.out(JSON.stringify(page, null, 2));
    else {
      page.items.forEach((e) => io.out(executionLine(e)));
      if (page.items.length === 0) io.out(`(no executions match)${await emptyPrefixHint(conn, target.prefix)}`);
      if (page.cursor !== undefined) io.out(`more: --cursor ${page.cursor}`);
    }
    return 0;
  } finally {
    await conn.close();
  }
};

/** `locks [pattern]`. */
export const locksCommand: Handler = async (args, io) => {
  const { values, positionals } = parse(args, { internal: { type: 'boolean' } });
  if (positionals.length > 1) throw new UsageError('expected "locks [pattern]"');
  const target = readTarget(values, io.env ?? process.env);
  const progress = showProgress(io, values.progress);
  const conn = await connect(target);
  try {
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
  } finally {
    await conn.close();
  }
};

/** `ordered-lock peek|skip|reset <key>`. */
export const orderedLockCommand: Handler = async (args, io) => {
  const { values, positionals } = parse(args, {});
  const [op, key, ...rest] = positionals;
  if ((op !== 'peek' && op !== 'skip' && op !== 'reset') || key === undefined || key === '' || rest.length > 0)
    throw new UsageError('expected "ordered-lock peek|skip|reset <key>"');
  const target = readTarget(values, io.env ?? process.env);
  const conn = await connect(target);
  try {
    const before = await conn.model.orderedLock(key);
    const after =
      op === 'peek' ? before : op === 'skip' ? await conn.model.orderedSkip(key) : await conn.model.orderedReset(key);
    if (values.json) io.out(JSON.stringify(op === 'peek' ? after : { before, after }, null, 2));
    else {
      if (op !== 'peek') io.out(`before: ${orderedLine(before)}`);
      io.out(`${op === 'peek' ? '' : 'after:  '}${orderedLine(after)}`);
    }
    return 0;
  } finally {
    await conn.close();
  }
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
