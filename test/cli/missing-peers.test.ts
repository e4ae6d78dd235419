/**
 * The command line without its optional peers, as real processes whose module resolution hides
 * them (fixtures/hide-peers.mjs): without `ioredis` the memory demo runs and the PostgreSQL
 * commands load; without `pg` every `--postgres` command exits 2 with the MissingPeerError that
 * names the package and how to install it, as the Redis commands do for `ioredis`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MissingPeerError } from '../../src/cli/redis-check.js';
import { unreachablePostgres } from '../../src/cli/worker-postgres.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hide = pathToFileURL(fileURLToPath(new URL('./fixtures/hide-peers.mjs', import.meta.url))).href;
const fixture = fileURLToPath(new URL('./fixtures/postgres-app.ts', import.meta.url));
/** Nothing listens on port 1: a command that got as far as connecting says it cannot reach it. */
const URL_NOBODY_ANSWERS = 'postgres://app:secret@127.0.0.1:1/app';

async function run(hidden: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', hide, 'src/cli/main.ts', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TS_REACTOR_HIDE_PEERS: hidden },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, out };
}

const NEEDS_PG = 'this command needs the "pg" package, which is not installed: npm install pg';

describe('the command line without ioredis', () => {
  it('runs the memory demo', async () => {
    const { code, out } = await run('ioredis', ['demo']);
    expect(code, out).toBe(0);
    expect(out).toContain('on the embedded engine (memory backend, no Redis)');
  }, 120_000);

  it('loads the PostgreSQL commands: migrate gets as far as the server', async () => {
    const { code, out } = await run('ioredis', ['migrate', '--postgres', URL_NOBODY_ANSWERS]);
    expect(code, out).toBe(2);
    expect(out).toContain('ts-reactor migrate: cannot reach PostgreSQL at postgres://app:***@127.0.0.1:1/app');
  }, 120_000);
});

describe('the --postgres commands without pg', () => {
  const commands: readonly (readonly string[])[] = [
    ['migrate', '--postgres', URL_NOBODY_ANSWERS],
    ['worker', '--postgres', URL_NOBODY_ANSWERS, '--module', fixture],
    ['dashboard', '--postgres', URL_NOBODY_ANSWERS, '--port', '0', '--module', fixture],
    ['executions', 'list', '--postgres', URL_NOBODY_ANSWERS],
    ['locks', '--postgres', URL_NOBODY_ANSWERS],
    ['schedules', 'list', '--postgres', URL_NOBODY_ANSWERS],
  ];
  it.each(commands)(
    '%s: exit 2 naming the package and the install command',
    async (...args) => {
      const { code, out } = await run('pg', args);
      expect(code, out).toBe(2);
      expect(out).toContain(`ts-reactor ${args[0]}: ${NEEDS_PG}`);
      expect(out).not.toContain('secret');
    },
    120_000,
  );

  it('unreachablePostgres: the missing package as it is; a refused login with its fix; else "cannot reach"; password hidden', () => {
    expect(unreachablePostgres(URL_NOBODY_ANSWERS, new MissingPeerError('pg'))).toBe(NEEDS_PG);
    expect(unreachablePostgres(URL_NOBODY_ANSWERS, new Error('connect ECONNREFUSED 127.0.0.1:1'))).toBe(
      'cannot reach PostgreSQL at postgres://app:***@127.0.0.1:1/app: connect ECONNREFUSED 127.0.0.1:1',
    );
    const refused = Object.assign(new Error('password authentication failed for user "app"'), { code: '28P01' });
    expect(unreachablePostgres(URL_NOBODY_ANSWERS, refused)).toBe(
      'postgres://app:***@127.0.0.1:1/app: PostgreSQL refused the connection: password authentication failed for user "app": check the user and password in the connection string (and that the role may log in)',
    );
  });
});
