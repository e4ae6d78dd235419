/** The worker's `--log-level` logger: pino's line shape, level filtering, `child` bindings, errors as objects. */
import { describe, expect, test } from 'vitest';
import { jsonLinesLogger } from '../../src/cli/json-logger.js';

describe('jsonLinesLogger', () => {
  test('writes { level, time, ...fields, msg } at the level and above; child adds its bindings', () => {
    const lines: string[] = [];
    const log = jsonLinesLogger(
      'warn',
      (l) => lines.push(l),
      () => 1_000,
    );
    log.info({ a: 1 }, 'dropped');
    log.warn({ a: 1 }, 'kept');
    log.child({ executionId: 'x-1' }).error('plain message');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { level: 40, time: 1_000, a: 1, msg: 'kept' },
      { level: 50, time: 1_000, executionId: 'x-1', msg: 'plain message' },
    ]);
  });

  test('an Error field is written as name, message, code and cause', () => {
    const lines: string[] = [];
    const err = Object.assign(new Error('down', { cause: new Error('ECONNRESET') }), { code: 'E_DOWN' });
    jsonLinesLogger(
      'debug',
      (l) => lines.push(l),
      () => 5,
    ).error({ err }, 'worker error');
    expect(JSON.parse(lines[0]!)).toEqual({
      level: 50,
      time: 5,
      err: { name: 'Error', message: 'down', code: 'E_DOWN', cause: { name: 'Error', message: 'ECONNRESET' } },
      msg: 'worker error',
    });
  });
});
