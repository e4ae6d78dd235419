/**
 * The command line's Redis checks: an unreachable server is named with its URL (password
 * hidden); a missing `ioredis` names the package to install instead.
 */
import { describe, expect, test } from 'vitest';
import { MissingPeerError, pingRedis, unreachableMessage } from '../../src/cli/redis-check.js';
import { freePort } from '../support/redis-server.js';

describe('redis-check', () => {
  test('an unreachable server: the message names the URL without its password', async () => {
    const url = `redis://user:secret@127.0.0.1:${await freePort()}`;
    const error = await pingRedis(url, 500).catch((e: unknown) => e);
    const message = unreachableMessage(url, error);
    expect(message).toMatch(/^cannot reach Redis at redis:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/?: /);
    expect(message).not.toContain('secret');
  });

  test('a missing peer dependency: the message names the package and the install command', () => {
    const missing = new MissingPeerError('ioredis', new Error("Cannot find package 'ioredis'"));
    expect(unreachableMessage('redis://127.0.0.1:6390', missing)).toBe(
      'this command needs the "ioredis" package, which is not installed: npm install ioredis',
    );
    expect(missing.peer).toBe('ioredis');
  });
});
