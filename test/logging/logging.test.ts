/**
 * Structured logging (issue 7 item 3): quiet by default; with a pino-compatible logger, every
 * line the library writes carries the execution id and reactor, and the step and key where
 * there is one; child loggers are used when the logger has them. Memory backend, manual clock.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { z } from 'zod';
import {
  eventLogger,
  EVENT_LOG_LEVELS,
  failure,
  MemoryCoordinator,
  reactor,
  type Logger,
  type ReactorEventType,
} from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';

interface Line {
  readonly level: keyof Logger;
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/** A logger that keeps its lines; with `child`, bindings are merged like pino does. */
function capture(options: { readonly child: boolean } = { child: false }): {
  logger: Logger;
  lines: Line[];
  children: Record<string, unknown>[];
} {
  const lines: Line[] = [];
  const children: Record<string, unknown>[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (level: keyof Logger) =>
      (fields: object | string, message?: string): void =>
        void lines.push(
          typeof fields === 'string'
            ? { level, fields: { ...bindings }, message: fields }
            : { level, fields: { ...bindings, ...fields }, message },
        );
    const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    if (!options.child) return logger;
    return Object.assign(logger, {
      child: (more: Record<string, unknown>) => {
        children.push(more);
        return make({ ...bindings, ...more });
      },
    });
  };
  return { logger: make({}), lines, children };
}

/**
 * A reactor that exercises most of what the library logs: a reactor-level lock, a step-level
 * semaphore, a retried step, a step logging through its context, a failing step, a failing
 * compensation and undo.
 */
const noisy = reactor('noisy')
  .input({ account: z.string(), secret: z.string() }, { redact: ['secret'] })
  .withLock({ key: ({ account }) => `account:${account}` })
  .step('audit', {
    semaphore: { key: () => 'audit-slots', limit: 2 },
    run: (_args, ctx) => {
      ctx.logger.info({ checked: true }, 'audited');
      return 'ok';
    },
    undo: () => failure('audit log is append-only'),
  })
  .step('flaky', {
    waitFor: ['audit'],
    retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 10 },
    run: (_args, ctx) => {
      if (ctx.attempt === 1) throw new Error('flake');
      return 'ok';
    },
  })
  .step('charge', {
    waitFor: ['flaky'],
    run: () => {
      throw new Error('card declined');
    },
    compensate: () => {
      throw new Error('refund service down');
    },
  })
  .build();

const INPUT = { account: 'a-1', secret: 'hunter2' };

afterEach(() => vi.restoreAllMocks());

describe('quiet by default', () => {
  test('a run that retries, fails, fails to roll back and has a throwing middleware writes nothing anywhere', async () => {
    const writes = [vi.spyOn(process.stdout, 'write'), vi.spyOn(process.stderr, 'write')];
    const consoles = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m));
    const thrower = {
      name: 'thrower',
      onEvent: () => {
        throw new Error('middleware bug');
      },
    };
    const result = await createTestEngine({ middleware: [thrower] }).run(noisy, INPUT);
    expect(result.status).toBe('failed');
    for (const spy of [...writes, ...consoles]) expect(spy).not.toHaveBeenCalled();
  });
});

describe('with a logger', () => {
  test('every line carries executionId and reactor; step lines their step; coordination lines primitive and key', async () => {
    const { logger, lines } = capture();
    const result = await createTestEngine({ logger }).run(noisy, INPUT);
    expect(result.status).toBe('failed');
    expect(lines.length).toBeGreaterThan(15);
    for (const line of lines)
      expect(line.fields, JSON.stringify(line)).toMatchObject({ executionId: result.executionId, reactor: 'noisy' });
    for (const line of lines.filter((l) => String(l.fields['event']).startsWith('step.')))
      expect(line.fields['step']).toEqual(expect.any(String));
    for (const line of lines.filter((l) => String(l.fields['event']).startsWith('coordination.')))
      expect(line.fields).toMatchObject({ primitive: expect.any(String), key: expect.any(String) });
    const keys = new Set(lines.map((l) => l.fields['key']).filter((k) => k !== undefined));
    expect(keys).toEqual(new Set(['account:a-1', 'audit-slots']));
    expect(
      lines.find((l) => l.fields['event'] === 'coordination.acquired' && l.fields['key'] === 'audit-slots')?.fields,
    ).toMatchObject({ step: 'audit', primitive: 'semaphore' });
    // The step's own line, through ctx.logger, is bound to its step.
    expect(lines.find((l) => l.message === 'audited')).toEqual({
      level: 'info',
      fields: { executionId: result.executionId, reactor: 'noisy', step: 'audit', checked: true },
      message: 'audited',
    });
  });

  test('levels: failures warn, the failed run is an error, routine events are debug; errors are under err; the input is redacted', async () => {
    const { logger, lines } = capture();
    const result = await createTestEngine({ logger }).run(noisy, INPUT);
    const of = (event: ReactorEventType): Line | undefined => lines.find((l) => l.fields['event'] === event);
    expect(of('run.started')).toMatchObject({
      level: 'debug',
      fields: { input: { account: 'a-1', secret: '[redacted]' } },
    });
    expect(JSON.stringify(lines)).not.toContain('hunter2');
    expect(of('step.retrying')).toMatchObject({
      level: 'warn',
      fields: { step: 'flaky', attempt: 2, delayMs: 10, err: { message: 'flake' } },
      message: 'step "flaky" failed (flake); attempt 2 in 10 ms',
    });
    expect(of('step.failed')).toMatchObject({
      level: 'warn',
      fields: { step: 'charge', err: { message: 'card declined' } },
    });
    expect(of('step.compensate_failed')).toMatchObject({
      level: 'warn',
      fields: { step: 'charge', reason: 'raised' },
      message: 'compensate of "charge" failed: refund service down',
    });
    expect(of('step.undo_failed')).toMatchObject({
      level: 'warn',
      fields: { step: 'audit', reason: 'returned_failure' },
      message: 'undo of "audit" failed: audit log is append-only',
    });
    expect(of('run.failed')).toMatchObject({
      level: 'error',
      fields: { executionId: result.executionId, step: 'charge', err: { message: 'card declined' } },
    });
    expect(of('step.started')?.level).toBe('debug');
    // One line per event, none twice.
    expect(lines.filter((l) => l.fields['event'] !== undefined)).toHaveLength(result.trace.length);
    for (const line of lines)
      expect(EVENT_LOG_LEVELS[line.fields['event'] as ReactorEventType] ?? 'info').toBe(line.level);
  });

  test('a pino-style logger is used through child(): bindings of the execution, then of the step', async () => {
    const { logger, lines, children } = capture({ child: true });
    const r = reactor('kids')
      .step('s', { run: (_a, ctx) => ctx.logger.warn('careful') })
      .build();
    const result = await createTestEngine({ logger, logEvents: false }).run(r, {});
    expect(children).toEqual([{ executionId: result.executionId, reactor: 'kids' }, { step: 's' }]);
    expect(lines).toEqual([
      { level: 'warn', fields: { executionId: result.executionId, reactor: 'kids', step: 's' }, message: 'careful' },
    ]);
  });

  test('logEvents: false keeps only the engine’s own lines; eventLogger takes per-event levels', async () => {
    const quiet = capture();
    const r = reactor('plain')
      .step('s', { run: (_a, ctx) => ctx.logger.info('from the step') })
      .build();
    await createTestEngine({ logger: quiet.logger, logEvents: false }).run(r, {});
    expect(quiet.lines.map((l) => l.message)).toEqual(['from the step']);
    const tuned = capture();
    await createTestEngine({
      middleware: [eventLogger(tuned.logger, { levels: { 'step.started': false, 'run.completed': 'warn' } })],
    }).run(r, {});
    expect(tuned.lines.map((l) => [l.level, l.fields['event']])).toEqual([
      ['debug', 'run.started'],
      ['debug', 'step.succeeded'],
      ['warn', 'run.completed'],
    ]);
  });

  test('a failing middleware is reported with the execution, reactor, step and event it failed on', async () => {
    const { logger, lines } = capture();
    const thrower = {
      name: 'thrower',
      onEvent: (e: { type: string }) => {
        if (e.type === 'step.succeeded') throw new Error('middleware bug');
      },
    };
    const r = reactor('hooked')
      .step('s', { run: () => 1 })
      .build();
    const result = await createTestEngine({ logger, logEvents: false, middleware: [thrower] }).run(r, {});
    expect(result.status).toBe('completed');
    expect(lines).toEqual([
      {
        level: 'error',
        fields: {
          hook: 'thrower',
          executionId: result.executionId,
          reactor: 'hooked',
          step: 's',
          event: 'step.succeeded',
          err: expect.any(Error),
        },
        message: 'event hook "thrower" failed; the run goes on',
      },
    ]);
  });

  test('contention of a reactor-level lock is logged with its key', async () => {
    const { logger, lines } = capture();
    const clock = new ManualClock();
    const coordinator = new MemoryCoordinator({ clock });
    await coordinator.lockAcquire({
      key: 'account:a-1',
      holder: { owner: 'someone', executionId: 'someone' },
      ttlMs: 60_000,
    });
    const locked = reactor('locked')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `account:${account}`, wait: 50 })
      .step('s', { run: () => 1 })
      .build();
    const result = await createTestEngine({ logger, clock, coordinator }).run(locked, { account: 'a-1' });
    expect(result.status).toBe('failed');
    expect(lines.find((l) => l.fields['event'] === 'coordination.contended')).toMatchObject({
      level: 'info',
      fields: {
        executionId: result.executionId,
        reactor: 'locked',
        primitive: 'lock',
        key: 'account:a-1',
        holder: 'execution someone',
      },
    });
    expect(lines.find((l) => l.fields['event'] === 'run.failed')).toMatchObject({
      level: 'error',
      fields: { executionId: result.executionId, err: { message: expect.stringContaining('account:a-1') } },
    });
  });
});
