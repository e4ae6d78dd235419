/**
 * `ts-reactor executions <subcommand>`: the reads (`list`, `show`) and the actions of
 * `execution-actions.ts`, dispatched through one table, {@link EXECUTIONS_SUBCOMMANDS}. Every
 * subcommand takes `--module` (the app: its reactors, its prefix, its queue). An action needs it,
 * checks the execution's status, asks for confirmation (`--yes` skips it; without a terminal and
 * without `--yes` it refuses, exit 2), then runs through an engine over the same Redis.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { MAX_LIST_LIMIT } from '../engine/api/list.js';
import type { Engine } from '../engine/engine.js';
import { parseStatus, STATUS_NAMES, storedStatus, type ExecutionStatus } from '../ports/store.js';
import { ExecutionStateError } from '../errors.js';
import { parseTagFilters } from '../ops/tag-filter.js';
import { parseOperatorTime } from '../ops/time.js';
import { confirm, terminalAsker, type Confirmation } from './confirm.js';
import {
  EXECUTION_ACTIONS,
  type ExecutionActionCommand,
  type OptionSpecs,
  type OptionValues,
} from './execution-actions.js';
import { FAILURE_ACTIONS } from './failure-actions.js';
import { APP_OPTIONS, closeApp, readApp, withApp, type OpsApp } from './ops-app.js';
import { executionLine, executionText } from './ops-format.js';
import { connect, TARGET_OPTIONS, type Connected, type OpsIO } from './ops-target.js';
import { PREFIX_ENV, UsageError } from './worker.js';
import { prefixHasKeys } from './worker-prefix.js';
import { placeOptions } from './redis-place.js';

/** What a read gets: its options, the id (`show`), where to write and the read model. */
export interface ReadContext {
  readonly values: OptionValues;
  readonly id: string | undefined;
  readonly io: OpsIO;
  readonly conn: Connected;
  readonly app: OpsApp;
}

/** A read of the executions (`executions <name> [<id>] [options]`). */
export interface ExecutionReadCommand {
  readonly kind: 'read';
  /** The arguments after `executions <name>`, for the usage text. */
  readonly usage: string;
  readonly options: OptionSpecs;
  /** Whether it takes an execution id. */
  readonly needsId: boolean;
  run(context: ReadContext): Promise<number>;
}

/** One subcommand of `ts-reactor executions`. */
export type ExecutionsSubcommand = ExecutionReadCommand | ExecutionActionCommand;

/** The options an action takes besides its own. */
const ACTION_OPTIONS = {
  yes: { type: 'boolean', short: 'y' },
  queue: { type: 'string' },
} as const;

const COMMON: ReadonlySet<string> = new Set([...Object.keys(TARGET_OPTIONS), ...Object.keys(APP_OPTIONS)]);

/** `--from`/`--to`. @throws UsageError on a value that is not a time (exit 2). */
function time(name: string, raw: OptionValues[string]): number | undefined {
  const value = parseOperatorTime(typeof raw === 'string' ? raw : undefined);
  if (value === undefined) return undefined;
  if (!Number.isFinite(value))
    throw new UsageError(`--${name}: "${String(raw)}" is not a time (ISO 8601 or ms since the epoch)`, false);
  return value;
}

/** `--limit`: an integer from 1 to `engine.list`'s bound ({@link MAX_LIST_LIMIT}). @throws UsageError otherwise (exit 2). */
function pageSize(raw: OptionValues[string]): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > MAX_LIST_LIMIT)
    throw new UsageError(`--limit must be an integer from 1 to ${MAX_LIST_LIMIT}; got "${raw}"`, false);
  return value;
}

/** `--status`: one of the status names (`pending` is another name of `queued`). @throws UsageError otherwise (exit 2). */
function statusFilter(raw: OptionValues[string]): ExecutionStatus | undefined {
  if (typeof raw !== 'string') return undefined;
  const status = parseStatus(raw);
  if (status === undefined)
    throw new UsageError(`--status must be one of ${STATUS_NAMES.join(', ')}; got "${raw}"`, false);
  return status;
}

/** `--tag key=value` (repeated, or comma-separated): every tag must match. @throws UsageError otherwise (exit 2). */
function tagFilter(raw: OptionValues[string]): Readonly<Record<string, string>> | undefined {
  const given = Array.isArray(raw) ? raw.filter((t): t is string => typeof t === 'string') : [];
  try {
    return parseTagFilters(given);
  } catch (error) {
    throw new UsageError(`--${(error as Error).message}`, false);
  }
}

const text = (values: OptionValues, name: string): string | undefined =>
  typeof values[name] === 'string' ? values[name] : undefined;

/** Said after an empty list when no key at all exists under the prefix: the app may use another one. */
async function emptyPrefixHint(conn: Connected, prefix: string | undefined): Promise<string> {
  const shown = prefix ?? 'rx';
  if (conn.backend.redis === undefined) return ''; // PostgreSQL: no prefix
  if ((await prefixHasKeys(conn.backend.redis, shown)) !== false) return ''; // keys, or a keyspace too large to tell
  return ` — no key exists under the prefix "${shown}"; does the app use another prefix? (--prefix, ${PREFIX_ENV})`;
}

const list: ExecutionReadCommand = {
  kind: 'read',
  usage:
    '[--reactor <name>] [--status <status>] [--tag <key=value>]… [--from <time>] [--to <time>] [--limit <n>] [--cursor <c>]',
  options: {
    reactor: { type: 'string' },
    status: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    tag: { type: 'string', multiple: true },
  },
  needsId: false,
  async run({ values, io, conn, app }) {
    const from = time('from', values['from']);
    const to = time('to', values['to']);
    const limit = pageSize(values['limit']);
    const status = statusFilter(values['status']);
    const reactor = text(values, 'reactor');
    const cursor = text(values, 'cursor');
    const tags = tagFilter(values['tag']);
    const page = await conn.model.executions({
      ...(reactor === undefined ? {} : { reactor }),
      ...(status === undefined ? {} : { status }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(tags === undefined ? {} : { tags }),
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    if (values['json'] === true) io.out(JSON.stringify(page, null, 2));
    else {
      page.items.forEach((e) => io.out(executionLine(e)));
      if (page.items.length === 0) io.out(`(no executions match)${await emptyPrefixHint(conn, app.target.prefix)}`);
      if (page.cursor !== undefined) io.out(`more: --cursor ${page.cursor}`);
    }
    return 0;
  },
};

const show: ExecutionReadCommand = {
  kind: 'read',
  usage: '<id>',
  options: {},
  needsId: true,
  async run({ values, id, io, conn }) {
    const detail = await conn.model.execution(id!);
    if (!detail) {
      io.err(`ts-reactor executions show: no execution ${id!} (or its record expired)`);
      return 1;
    }
    if (values['json'] === true) io.out(JSON.stringify(detail, null, 2));
    else executionText(detail).forEach((l) => io.out(l));
    return 0;
  },
};

/** Every subcommand of `ts-reactor executions`, by name: the reads, then the actions. */
export const EXECUTIONS_SUBCOMMANDS: Readonly<Record<string, ExecutionsSubcommand>> = Object.freeze({
  list,
  show,
  ...EXECUTION_ACTIONS,
  ...FAILURE_ACTIONS,
});

/** The usage lines of `ts-reactor executions`, one per subcommand (actions with their summary). */
export function executionsUsage(): string {
  return Object.entries(EXECUTIONS_SUBCOMMANDS)
    .map(([name, sub]) =>
      sub.kind === 'read'
        ? `  executions ${name} ${sub.usage}`.trimEnd()
        : `  executions ${name} <id> --module <path>${sub.usage === '' ? '' : ` ${sub.usage}`} [--yes]\n${wrap(sub.summary)}`,
    )
    .join('\n');
}

/** A summary indented under its usage line (24 columns), wrapped at 100 columns. */
function wrap(summary: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of summary.split(' ')) {
    if (line !== '' && line.length + word.length > 76) {
      lines.push(line);
      line = '';
    }
    line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.map((l) => `${' '.repeat(24)}${l}`).join('\n');
}

/** Every option any subcommand takes, for one strict parse. */
function allOptions(): OptionSpecs {
  const merged: Record<string, { readonly type: 'string' | 'boolean' }> = {
    ...TARGET_OPTIONS,
    ...APP_OPTIONS,
    ...ACTION_OPTIONS,
  };
  for (const sub of Object.values(EXECUTIONS_SUBCOMMANDS)) Object.assign(merged, sub.options);
  return merged;
}

/** The options `sub` takes: the common ones, an action's `--yes` and `--queue`, and its own. */
function ownOptions(sub: ExecutionsSubcommand): ReadonlySet<string> {
  const own = Object.keys(sub.options);
  return new Set([...COMMON, ...own, ...(sub.kind === 'action' ? Object.keys(ACTION_OPTIONS) : [])]);
}

const EXPECTED = `expected "executions <subcommand>" with one of: ${Object.keys(EXECUTIONS_SUBCOMMANDS).join(', ')}`;

/** `executions <subcommand> [<id>] [options]`. */
export async function executionsCommand(args: readonly string[], io: OpsIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], strict: true, allowPositionals: true, options: allOptions() });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as OptionValues;
  const [name, id, ...rest] = parsed.positionals;
  const sub = name === undefined ? undefined : EXECUTIONS_SUBCOMMANDS[name];
  if (sub === undefined || name === undefined) throw new UsageError(EXPECTED);
  const takesId = sub.kind === 'action' || sub.needsId;
  if (rest.length > 0 || takesId !== (id !== undefined))
    throw new UsageError(`expected "executions ${name}${takesId ? ' <id>' : ''} [options]"`);
  const allowed = ownOptions(sub);
  const foreign = Object.keys(values).find((option) => !allowed.has(option));
  if (foreign !== undefined) throw new UsageError(`--${foreign} does not apply to executions ${name}`, false);
  return RUNNERS[sub.kind](sub as never, { name, id, values, io });
}

interface Invocation {
  readonly name: string;
  readonly id: string | undefined;
  readonly values: OptionValues;
  readonly io: OpsIO;
}

const RUNNERS: {
  readonly [K in ExecutionsSubcommand['kind']]: (
    sub: Extract<ExecutionsSubcommand, { kind: K }>,
    call: Invocation,
  ) => Promise<number>;
} = { read: runRead, action: runAction };

function runRead(sub: ExecutionReadCommand, { id, values, io }: Invocation): Promise<number> {
  return withApp('executions', values, io, (conn, app) => sub.run({ values, id, io, conn, app }));
}

/** What is said when the operator did not confirm. */
const UNCONFIRMED: { readonly [K in Exclude<Confirmation, 'confirmed'>]: (name: string, io: OpsIO) => number } = {
  declined: (name, io) => {
    io.err(`ts-reactor executions ${name}: not confirmed; nothing was done`);
    return 1;
  },
  no_terminal: (name) => {
    throw new UsageError(
      `executions ${name} asks for confirmation and stdin is not a terminal: pass --yes to act without asking`,
      false,
    );
  },
};

async function runAction(sub: ExecutionActionCommand, { name, id, values, io }: Invocation): Promise<number> {
  if (values['module'] === undefined)
    throw new UsageError(
      `executions ${name} needs --module <path>: the app module that exports the execution's reactor (as the worker loads it)`,
      false,
    );
  const perform = sub.prepare(values);
  const app = await readApp(values, io.env ?? process.env);
  try {
    const conn = await connect(app.target, app.reactors);
    let detail;
    try {
      detail = await conn.model.execution(id!);
    } finally {
      await conn.close();
    }
    if (!detail) {
      io.err(`ts-reactor executions ${name}: no execution ${id!} (or its record expired)`);
      return 1;
    }
    if (!sub.appliesTo.includes(storedStatus(detail.status)))
      throw new ExecutionStateError(id!, name, detail.status, sub.hint);
    const ask = io.ask === undefined ? terminalAsker() : (io.ask ?? undefined);
    const answer = await confirm(values['yes'] === true, ask, sub.question(detail));
    if (answer !== 'confirmed') return UNCONFIRMED[answer](name, io);
    const result = await withRuntime(app, (engine) => perform(engine, id!));
    if (values['json'] === true)
      io.out(
        JSON.stringify({
          action: name,
          target: id,
          executionId: result.executionId,
          status: result.status,
          ...(result.status === 'failed' ? { error: { name: result.error.name, message: result.error.message } } : {}),
        }),
      );
    else io.out(sub.done(id!, result));
    return 0;
  } finally {
    await closeApp(app, io, 'executions');
  }
}

/** Runs `body` with an engine over the app's Redis (or PostgreSQL), prefix, queue, reactors and options (no worker), then closes it. */
async function withRuntime<T>(app: OpsApp, body: (engine: Engine) => Promise<T>): Promise<T> {
  const { queueName: _queue, ...options } = app.module?.options ?? {};
  if (app.target.postgres !== undefined) {
    const { createPostgresRuntime } = await import('../postgres.js');
    const { schema } = app.target.postgres;
    const runtime = createPostgresRuntime({
      ...options,
      connection: app.target.url,
      reactors: [...app.reactors],
      ...(app.module?.rateLimits === undefined ? {} : { rateLimits: app.module.rateLimits }),
      ...(schema === undefined ? {} : { schema }),
      ...(app.queueName === undefined ? {} : { queueName: app.queueName }),
    });
    try {
      return await body(runtime.engine);
    } finally {
      await runtime.close();
    }
  }
  const { createRedisRuntime } = await import('../bullmq.js');
  const runtime = createRedisRuntime({
    ...options,
    ...placeOptions(app.target),
    reactors: [...app.reactors],
    ...(app.module?.rateLimits === undefined ? {} : { rateLimits: app.module.rateLimits }),
    ...(app.target.prefix === undefined ? {} : { prefix: app.target.prefix }),
    ...(app.queueName === undefined ? {} : { queueName: app.queueName }),
  });
  try {
    return await body(runtime.engine);
  } finally {
    await runtime.close();
  }
}
