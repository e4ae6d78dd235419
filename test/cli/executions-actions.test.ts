/**
 * `ts-reactor executions cancel | retry | undo | resume` and `--module` on every operations
 * command, against a throwaway redis-server: executions made by a runtime of the app's own (no
 * worker), then acted on through the command, in this process (with an injected prompt) and as
 * spawned processes (no terminal: `--yes` or a refusal, never a wait).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { executionsCommand, locksCommand, orderedLockCommand, runOps } from '../../src/cli/ops.js';
import { EXECUTIONS_SUBCOMMANDS } from '../../src/cli/executions.js';
import { runDashboardCommand } from '../../src/cli/dashboard.js';
import { schedulesCommand } from '../../src/cli/schedules.js';
import type { Asker } from '../../src/cli/confirm.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { RECORD_VERSION } from '../../src/ports/store.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { approval, broken, OPS_APP_PREFIX, OPS_APP_QUEUE, pay, slow } from './fixtures/ops-app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const app = fileURLToPath(new URL('./fixtures/ops-app.ts', import.meta.url));

let redis: RedisServerHandle;
let runtime: RedisRuntime;
let backend: RedisBackend;

beforeAll(async () => {
  redis = await startRedisServer();
  runtime = createRedisRuntime({
    url: redis.url,
    prefix: OPS_APP_PREFIX,
    queueName: OPS_APP_QUEUE,
    reactors: [pay, broken, approval, slow],
  });
  backend = createRedisBackend({ url: redis.url, prefix: OPS_APP_PREFIX });
});

afterAll(async () => {
  await runtime?.close();
  await backend?.close();
  await redis?.dispose();
});

interface Outcome {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  readonly asked: string[];
}

/** `ts-reactor <command> <args> --redis <url>` in this process; `ask` answers the prompt (`null`: no terminal). */
async function cli(
  args: readonly string[],
  ask: Asker | null = null,
  command: 'executions' | 'locks' | 'ordered-lock' = 'executions',
): Promise<Outcome> {
  const out: string[] = [];
  const err: string[] = [];
  const asked: string[] = [];
  const handler = { executions: executionsCommand, locks: locksCommand, 'ordered-lock': orderedLockCommand }[command];
  const code = await runOps(command, handler, [...args, '--redis', redis.url], {
    out: (l) => void out.push(l),
    err: (l) => void err.push(l),
    env: {},
    ask:
      ask === null
        ? null
        : (question) => {
            asked.push(question);
            return ask(question);
          },
  });
  return { code, out: out.join('\n'), err: err.join('\n'), asked };
}

const never: Asker = () => Promise.reject(new Error('nothing should be asked'));
const answer =
  (text: string): Asker =>
  () =>
    Promise.resolve(text);

/** `node --import tsx src/cli/main.ts <args>`, stdin not a terminal. */
function spawned(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REDIS_URL: redis.url, TS_REACTOR_PREFIX: undefined },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const status = async (id: string): Promise<string | undefined> => (await runtime.engine.result(id))?.status;

describe('the actions', () => {
  test('cancel --yes rolls a queued execution back; the prefix and the reactors come from --module', async () => {
    const queued = await runtime.engine.start(pay, { account: 'acme', card: '4242' });
    const closedBefore = globalThis.opsAppClosed ?? 0;
    const r = await cli(['cancel', queued.executionId, '--module', app, '--yes', '--reason', 'wrong account'], never);
    expect(r, r.err).toMatchObject({ code: 0, out: `cancelled: execution ${queued.executionId} is cancelled` });
    expect(r.asked).toEqual([]);
    const after = await runtime.engine.result(queued.executionId);
    expect(after?.status).toBe('cancelled');
    expect(after?.trace.some((e) => JSON.stringify(e).includes('wrong account'))).toBe(true);
    expect(globalThis.opsAppClosed).toBe(closedBefore + 1); // the module's close() ran once the command was done
  });

  test('cancel of an execution running elsewhere (its liveness lease free) is a request it acts on: exit 0, said so', async () => {
    const id = 'ops-running-elsewhere';
    await backend.store.save({
      v: RECORD_VERSION,
      id,
      rootId: id,
      reactor: 'ops-pay',
      status: 'running',
      input: { account: 'acme', card: '4242' },
      steps: {},
      rollbackFailures: [],
      createdAt: Date.now(),
      updatedAt: Date.now(),
    });
    const r = await cli(['cancel', id, '--module', app, '--yes']);
    expect(r, r.err).toMatchObject({
      code: 0,
      out: `cancel requested: execution ${id} is running; the process running it is told now and rolls it back: no new step starts, the steps in flight see their signal aborted, the completed steps are undone, and it ends cancelled (a job that takes it up later finds the request too) (ts-reactor executions show ${id})`,
    });
    expect(await status(id)).toBe('running');
  });

  test('cancel of an execution a worker is running: the worker is told, aborts the step in flight, undoes the completed one, ends it cancelled', async () => {
    const workers = createRedisRuntime({
      url: redis.url,
      prefix: OPS_APP_PREFIX,
      queueName: OPS_APP_QUEUE,
      reactors: [pay, broken, approval, slow],
    });
    try {
      workers.startWorker();
      const started = await runtime.engine.start(slow, {});
      const id = started.executionId;
      const deadline = Date.now() + 60_000;
      while (globalThis.opsSlowRunning !== id) {
        if (Date.now() > deadline) throw new Error('the worker never ran the step');
        await new Promise((r) => setTimeout(r, 50));
      }
      const r = await cli(['cancel', id, '--module', app, '--yes', '--reason', 'operator stop']);
      expect(r, r.err).toMatchObject({ code: 0 });
      // Recorded as running: a request, answered at once; a first step not recorded yet: the worker is
      // asked, and the cancel answers once it has rolled back.
      expect(r.out).toMatch(
        new RegExp(
          `^(cancel requested: execution ${id} is running; the process running it is told now|cancelled: execution ${id})`,
        ),
      );
      const done = await workers.engine.wait(id, { timeoutMs: 60_000 });
      expect(done.status).toBe('cancelled');
      const undone = done.trace.filter((e) => e.type === 'step.undone').map((e) => ('step' in e ? e.step : ''));
      expect(undone).toEqual(['hold']);
      expect(JSON.stringify(done.trace)).toContain('operator stop');
    } finally {
      await workers.close({ timeoutMs: 5_000 });
    }
  }, 120_000);

  test('undo runs the undo of a completed execution; on another status it is refused with its code, before asking', async () => {
    const done = await runtime.engine.run(pay, { account: 'acme', card: '4242' });
    expect(done.status).toBe('completed');
    const r = await cli(['undo', done.executionId, '--module', app, '--yes']);
    expect(r, r.err).toMatchObject({ code: 0, out: `undone: execution ${done.executionId} is cancelled` });
    const shown = await cli(['show', done.executionId, '--module', app]);
    expect(shown.out).toMatch(/^ {4}charge +completed → undone +attempts 1$/m);

    const failed = await runtime.engine.run(broken, { account: 'acme' });
    expect(failed.status).toBe('failed');
    const refused = await cli(['undo', failed.executionId, '--module', app], never);
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      `ts-reactor executions: cannot undo execution ${failed.executionId}: it is failed; only a completed execution can be undone (cancel one that is still going) (execution_state)`,
    );
    expect(await status(failed.executionId)).toBe('failed');
    const again = await cli(['cancel', done.executionId, '--module', app, '--yes']);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`cannot cancel execution ${done.executionId}: it is cancelled;`);
    expect(again.err).toMatch(/\(execution_state\)$/);
  });

  test("retry enqueues a new linked execution on the module's queue; a completed one is refused", async () => {
    const failed = await runtime.engine.run(broken, { account: 'globex' });
    const before = (await runtime.queueInspector.inspectQueue({ limit: 1 })).counts['waiting'] ?? 0;
    const r = await cli(['retry', failed.executionId, '--module', app, '--yes', '--json']);
    expect(r.code, r.err).toBe(0);
    const printed = JSON.parse(r.out) as { action: string; target: string; executionId: string; status: string };
    expect(printed).toMatchObject({ action: 'retry', target: failed.executionId, status: 'queued' });
    expect(printed.executionId).not.toBe(failed.executionId);
    expect((await backend.store.get(printed.executionId))?.retryOf).toBe(failed.executionId);
    expect((await runtime.queueInspector.inspectQueue({ limit: 1 })).counts['waiting']).toBe(before + 1);

    const completed = await runtime.engine.run(pay, { account: 'acme', card: '1' });
    const refused = await cli(['retry', completed.executionId, '--module', app, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`cannot retry execution ${completed.executionId}: it is completed;`);
  });

  test('resume answers the interrupt with the payload and the run goes on; a bad payload is refused', async () => {
    const paused = await runtime.engine.run(approval, { order: 'o-1' });
    expect(paused.status).toBe('paused');
    const notJson = await cli(
      ['resume', paused.executionId, '--module', app, '--yes', '--payload', '{approved'],
      never,
    );
    expect(notJson.code).toBe(2);
    expect(notJson.err).toMatch(/^ts-reactor executions: --payload is not JSON: /);
    const missing = await cli(['resume', paused.executionId, '--module', app, '--yes'], never);
    expect(missing).toMatchObject({
      code: 2,
      err: 'ts-reactor executions: executions resume: missing --payload <json>',
    });

    const r = await cli(['resume', paused.executionId, '--module', app, '--payload', '{"approved":true}'], answer('y'));
    expect(r.code, r.err).toBe(0);
    expect(r.asked).toEqual([
      `Resume execution ${paused.executionId} (ops-approval, paused) at approve with this payload? [y/N] `,
    ]);
    expect(r.out).toBe(`resumed: execution ${paused.executionId} is completed`);
    const result = await runtime.engine.result(paused.executionId);
    expect(result?.status === 'completed' ? result.value : undefined).toEqual({ booked: true });

    const other = await runtime.engine.run(approval, { order: 'o-2' });
    const invalid = await cli([
      'resume',
      other.executionId,
      '--module',
      app,
      '--yes',
      '--payload',
      '{"approved":"yes"}',
    ]);
    expect(invalid.code).toBe(1);
    expect(invalid.err).toMatch(/\(resume_payload_invalid\)$/);
  });

  test('without --yes: "y" acts, anything else does nothing (exit 1), and with no one to ask it refuses (exit 2)', async () => {
    const queued = await runtime.engine.start(pay, { account: 'acme', card: '4242' });
    const id = queued.executionId;
    const declined = await cli(['cancel', id, '--module', app], answer('n'));
    expect(declined).toMatchObject({ code: 1, err: 'ts-reactor executions cancel: not confirmed; nothing was done' });
    expect(declined.asked).toEqual([`Cancel execution ${id} (ops-pay, queued) and undo its completed steps? [y/N] `]);
    expect(await status(id)).toBe('queued');
    const nobody = await cli(['cancel', id, '--module', app], null);
    expect(nobody).toMatchObject({
      code: 2,
      err: 'ts-reactor executions: executions cancel asks for confirmation and stdin is not a terminal: pass --yes to act without asking',
    });
    expect(await status(id)).toBe('queued');
    const yes = await cli(['cancel', id, '--module', app], answer('Yes'));
    expect(yes.code, yes.err).toBe(0);
    expect(await status(id)).toBe('cancelled');
  });

  test('usage: an action needs --module and an id; an option of another subcommand, an unknown id', async () => {
    const queued = await runtime.engine.start(pay, { account: 'acme', card: '4242' });
    const noModule = await cli(['cancel', queued.executionId, '--prefix', OPS_APP_PREFIX, '--yes']);
    expect(noModule.code).toBe(2);
    expect(noModule.err).toContain('executions cancel needs --module <path>');
    expect((await cli(['cancel', '--module', app, '--yes'])).code).toBe(2);
    const foreign = await cli(['cancel', queued.executionId, '--module', app, '--payload', '{}']);
    expect(foreign).toMatchObject({
      code: 2,
      err: 'ts-reactor executions: --payload does not apply to executions cancel',
    });
    expect((await cli(['list', '--yes'])).err).toContain('--yes does not apply to executions list');
    const unknown = await cli(['undo', 'no-such-id', '--module', app, '--yes']);
    expect(unknown).toMatchObject({
      code: 1,
      err: 'ts-reactor executions undo: no execution no-such-id (or its record expired)',
    });
    expect(await status(queued.executionId)).toBe('queued');
  });

  test('every action is an entry of one table, each with its usage in --help', async () => {
    expect(Object.keys(EXECUTIONS_SUBCOMMANDS)).toEqual(
      expect.arrayContaining(['list', 'show', 'cancel', 'retry', 'undo', 'resume']),
    );
    const { OPS_USAGE } = await import('../../src/cli/ops.js');
    for (const [name, sub] of Object.entries(EXECUTIONS_SUBCOMMANDS))
      expect(OPS_USAGE).toContain(`  executions ${name}${sub.kind === 'action' ? ' <id> --module <path>' : ''}`);
  });
});

describe('--module on every command', () => {
  test("list, show, locks and ordered-lock read the module's prefix; show redacts the input by the module's contract", async () => {
    const queued = await runtime.engine.start(pay, { account: 'initech', card: '4242-secret' });
    await backend.coordinator.orderedTicket('feed');
    const listed = await cli(['list', '--module', app, '--reactor', 'ops-pay']);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toContain(queued.executionId);
    const plain = await cli(['list', '--reactor', 'ops-pay']); // prefix rx: nothing there
    expect(plain.out).toContain('no key exists under the prefix "rx"');

    const shown = await cli(['show', queued.executionId, '--module', app, '--json']);
    expect(shown.code, shown.err).toBe(0);
    expect((JSON.parse(shown.out) as { input: unknown }).input).toEqual({ account: 'initech', card: '[redacted]' });
    const text = await cli(['show', queued.executionId, '--module', app]);
    expect(text.out).toContain('  input      {"account":"initech","card":"[redacted]"}');
    expect(text.out).not.toContain('4242-secret');
    const unknown = await cli(['show', queued.executionId, '--prefix', OPS_APP_PREFIX]);
    expect(unknown.out).toContain('  input      (hidden: reactor not known here)');
    const flagWins = await cli(['show', queued.executionId, '--module', app, '--prefix', 'elsewhere']);
    expect(flagWins.code).toBe(1);

    const peek = await cli(['peek', 'feed', '--module', app, '--json'], null, 'ordered-lock');
    expect(peek.code, peek.err).toBe(0);
    expect((JSON.parse(peek.out) as { issued: number }).issued).toBe(1);
    const locks = await cli(['--module', app], null, 'locks');
    expect(locks.code, locks.err).toBe(0);
    expect(locks.out).toMatch(/^ordered feed {2}next 1 .* issued 1 /);
    expect((await cli([], null, 'locks')).out).toBe('(nothing held)'); // prefix rx
  });
});

describe('--module on the dashboard and schedules', () => {
  test("schedules add --module saves on the module's prefix and queue; the dashboard lists the module's executions", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => void out.push(l), err: (l: string) => void err.push(l), env: {} };
    const saved = await runOps(
      'schedules',
      schedulesCommand,
      [
        'add',
        'nightly-pay',
        '--reactor',
        'ops-pay',
        '--every',
        '1h',
        '--input',
        '{"account":"acme","card":"1"}',
        '--module',
        app,
        '--redis',
        redis.url,
      ],
      io,
    );
    expect(saved, err.join('\n')).toBe(0);
    expect((await runtime.schedules.list()).map((s) => s.id)).toContain('nightly-pay');
    await runtime.schedules.remove('nightly-pay');

    const queued = await runtime.engine.start(pay, { account: 'umbrella', card: '4242' });
    const stop = new AbortController();
    const running = runDashboardCommand(['--port', '0', '--read-only', '--module', app, '--redis', redis.url], io, {
      stop: stop.signal,
      signals: [],
    });
    try {
      await expect.poll(() => out.some((l) => l.includes('listening on')), { timeout: 30_000 }).toBe(true);
      const line = out.find((l) => l.includes('listening on'))!;
      expect(line).toContain(
        `(prefix ${OPS_APP_PREFIX}, read-only; reactors: ops-pay, ops-broken, ops-approval, ops-slow)`,
      );
      const url = /listening on (\S+)/.exec(line)![1]!;
      expect(await (await fetch(url)).text()).toContain(queued.executionId);
    } finally {
      stop.abort();
      expect(await running).toBe(0);
    }
  });
});

describe('spawned (stdin is not a terminal)', () => {
  test('without --yes an action refuses at once with exit 2; with --yes it acts and the process exits 0', async () => {
    const done = await runtime.engine.run(pay, { account: 'acme', card: '4242' });
    const refused = await spawned(['executions', 'undo', done.executionId, '--module', app]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(
      'ts-reactor executions: executions undo asks for confirmation and stdin is not a terminal: pass --yes to act without asking',
    );
    expect(await status(done.executionId)).toBe('completed');
    const acted = await spawned(['executions', 'undo', done.executionId, '--module', app, '--yes']);
    expect(acted.code, acted.stderr).toBe(0);
    expect(acted.stdout.trim()).toBe(`undone: execution ${done.executionId} is cancelled`);
    expect(await status(done.executionId)).toBe('cancelled');
  });
});
