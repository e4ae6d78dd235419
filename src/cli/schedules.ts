/**
 * `ts-reactor schedules list|add|remove` over Redis or PostgreSQL (`--postgres`): the schedules
 * of a runtime (BullMQ job schedulers on `<queue>-schedules`). With `--module`, `add` checks the reactor and the
 * computed input against the module's exports; without it they are stored as named and a
 * worker that does not know them reports `schedule.failed` at each tick.
 *
 * @module
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { systemClock } from '../ports/clock.js';
import type { ScheduleBackend } from '../ports/schedules.js';
import { createBullmqSchedules } from '../queue/bullmq-schedules.js';
import { Schedules } from '../schedules/service.js';
import type { MissedPolicy, ScheduleInfo, ScheduleInputFn, ScheduleOptions } from '../schedules/types.js';
import { pingRedis, redactUrl } from './redis-check.js';
import { readTarget, TARGET_OPTIONS, type OpsIO, type Target } from './ops-target.js';
import { loadScheduleInputs } from './schedule-module.js';
import { openConnection } from './redis-place.js';
import { loadWorkerApp, UsageError } from './worker.js';
import type { WorkerModule } from './worker-module.js';
import { closeModule, closeWarning } from './module-close.js';

const OPTIONS = {
  ...TARGET_OPTIONS,
  queue: { type: 'string' },
  runs: { type: 'string' },
  reactor: { type: 'string' },
  cron: { type: 'string' },
  tz: { type: 'string' },
  every: { type: 'string' },
  input: { type: 'string' },
  'input-from': { type: 'string' },
  missed: { type: 'string' },
  'start-at': { type: 'string' },
  'end-at': { type: 'string' },
  module: { type: 'string' },
} as const;

type Values = ReturnType<typeof parse>['values'];

function parse(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], strict: true, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `schedules list|add|remove`. */
export async function schedulesCommand(args: readonly string[], io: OpsIO): Promise<number> {
  const { values, positionals } = parse(args);
  const [sub, id, ...rest] = positionals;
  const ok = rest.length === 0 && (sub === 'list' ? id === undefined : (sub === 'add' || sub === 'remove') && !!id);
  if (!ok) throw new UsageError('expected "schedules list", "schedules add <id> …" or "schedules remove <id>"');
  readTarget(values, io.env ?? process.env); // the connection options, checked before the module loads
  const runs = values.runs === undefined ? 5 : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 0 || runs > 100)
    throw new UsageError(`--runs must be an integer from 0 to 100; got "${values.runs}"`, false);
  const app = values.module === undefined ? undefined : await fromModule(resolve(values.module));
  const known =
    app === undefined
      ? {}
      : { reactors: app.reactors, inputs: app.inputs, maxInputBytes: app.module.options?.maxRecordBytes };
  const target = readTarget(values, io.env ?? process.env, app?.module.prefix);
  const queueName = values.queue ?? app?.module.options?.queueName;
  const { backend, cluster } = await scheduleBackend(target, queueName);
  const schedules = new Schedules({ backend, clock: systemClock, ...known });
  try {
    if (sub === 'list') return list(await schedules.list({ runs }), values, io);
    if (sub === 'remove') {
      const removed = await schedules.remove(id!);
      if (values.json) io.out(JSON.stringify({ id, removed }));
      else io.out(removed ? `removed ${id!}` : `no schedule ${id!}`);
      return removed ? 0 : 1;
    }
    const info = await schedules.upsert(addOptions(id!, values));
    if (values.json) io.out(JSON.stringify(info, null, 2));
    else io.out(`saved ${scheduleLine(info)}`);
    return 0;
  } finally {
    await backend.close();
    cluster?.disconnect();
    const warning = closeWarning(await closeModule(app?.module));
    if (warning !== undefined) io.err(`ts-reactor schedules: warning: ${warning}`);
  }
}

async function fromModule(
  path: string,
): Promise<{ reactors: AnyReactorDefinition[]; inputs: Record<string, ScheduleInputFn>; module: WorkerModule }> {
  const { reactors, module } = await loadWorkerApp(path);
  const inputs = await loadScheduleInputs(path).catch((error: unknown) => {
    throw new UsageError((error as Error).message, false);
  });
  return { reactors, inputs, module };
}

function list(all: readonly ScheduleInfo[], values: Values, io: OpsIO): number {
  if (values.json) io.out(JSON.stringify(all, null, 2));
  else if (all.length === 0) io.out('(no schedules)');
  else all.forEach((s) => io.out(scheduleLine(s)));
  return 0;
}

/** One line of a schedule: id, reactor, spec, missed policy, next runs. */
export function scheduleLine(s: ScheduleInfo): string {
  const next = s.nextRuns.map((d) => d.toISOString()).join(', ');
  return `${s.id}  ${s.reactor}  ${specText(s)}  missed=${s.missed}  next: ${next === '' ? '(none)' : next}`;
}

/** A schedule's timing as text: `cron "0 2 * * *" Europe/Berlin` or `every 1000 ms`. */
export function specText(s: Pick<ScheduleInfo, 'cron' | 'everyMs'>): string {
  return s.cron ? `cron "${s.cron.pattern}" ${s.cron.tz}` : `every ${s.everyMs} ms`;
}

function addOptions(id: string, values: Values): ScheduleOptions {
  if (values.reactor === undefined) throw new UsageError('schedules add: missing --reactor <name>');
  if (values.tz !== undefined && values.cron === undefined) throw new UsageError('--tz needs --cron <pattern>', false);
  let input: Record<string, unknown> | undefined;
  if (values.input !== undefined)
    try {
      input = JSON.parse(values.input) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`--input is not JSON: ${(error as Error).message}`, false);
    }
  return {
    id,
    reactor: values.reactor,
    ...(values.cron === undefined
      ? {}
      : { cron: { pattern: values.cron, ...(values.tz === undefined ? {} : { tz: values.tz }) } }),
    ...(values.every === undefined ? {} : { every: numberOr(values.every) as NonNullable<ScheduleOptions['every']> }),
    ...(input === undefined ? {} : { input }),
    ...(values['input-from'] === undefined ? {} : { inputFrom: values['input-from'] }),
    ...(values.missed === undefined ? {} : { missed: values.missed as MissedPolicy }),
    ...(values['start-at'] === undefined ? {} : { startAt: numberOr(values['start-at']) }),
    ...(values['end-at'] === undefined ? {} : { endAt: numberOr(values['end-at']) }),
  };
}

/** A number when the text is one (ms), else the text (a duration or an ISO time). */
function numberOr(text: string): string | number {
  return /^\d+$/.test(text) ? Number(text) : text;
}

/** The schedules' BullMQ job schedulers where `target` is: on Redis (one server or a cluster), or on PostgreSQL. @throws UsageError when the server cannot be reached. */
async function scheduleBackend(
  target: Target,
  queueName: string | undefined,
): Promise<{ backend: ScheduleBackend; cluster: { disconnect(): void } | undefined }> {
  const named = queueName === undefined ? {} : { name: queueName };
  if (target.postgres !== undefined) {
    const [{ pingPostgres, unreachablePostgres }, { createBullmqPostgresSchedules }] = await Promise.all([
      import('./worker-postgres.js'),
      import('../queue/bullmq-postgres.js'),
    ]);
    try {
      await pingPostgres(target.url, target.connectTimeoutMs);
    } catch (error) {
      throw new UsageError(unreachablePostgres(target.url, error), false);
    }
    return {
      backend: createBullmqPostgresSchedules({ connection: { url: target.url }, ...named }),
      cluster: undefined,
    };
  }
  try {
    await pingRedis(target.url, target.connectTimeoutMs);
  } catch (error) {
    throw new UsageError(`cannot reach Redis at ${redactUrl(target.url)}: ${(error as Error).message}`, false);
  }
  // On a cluster BullMQ's keys share a slot: the prefix hash-tagged, as the runtime names them.
  const cluster = target.cluster === undefined ? undefined : await openConnection(target);
  const prefix = target.prefix ?? (cluster === undefined ? undefined : 'rx');
  const backend = createBullmqSchedules({
    connection: cluster ?? { url: target.url },
    ...named,
    ...(prefix === undefined ? {} : { prefix: cluster === undefined ? prefix : `{${prefix}}` }),
  });
  return { backend, cluster };
}
