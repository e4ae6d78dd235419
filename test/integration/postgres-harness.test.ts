/**
 * The throwaway-PostgreSQL harness itself: a server answers on its URL, keeps committed data
 * across a clean restart and a SIGKILL, answers again once thawed, and a server whose owner
 * process was killed is killed, and its directory removed, by the next start.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { reapPostgresOrphans } from '../support/postgres-orphans.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const harness = fileURLToPath(new URL('../support/postgres-server.ts', import.meta.url));

/** Whether something accepts TCP connections on the loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A process that starts a server, prints where, and stays alive until killed. */
function ownerProcess(): Promise<{ kill: () => Promise<void>; port: number; dir: string }> {
  const script = `import { startPostgresServer } from ${JSON.stringify(harness)};
const s = await startPostgresServer();
process.stdout.write(JSON.stringify({ port: s.port, dir: s.dir }) + '\\n');
setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line === undefined) return;
      const { port, dir } = JSON.parse(line) as { port: number; dir: string };
      const kill = (): Promise<void> =>
        new Promise((done) => {
          child.once('exit', () => done());
          child.kill('SIGKILL');
        });
      resolve({ kill, port, dir });
    });
    child.once('exit', (code) =>
      reject(new Error(`owner process exited (${String(code)}) before it printed its server`)),
    );
  });
}

describe('throwaway PostgreSQL harness', () => {
  const server = usePostgresServer();

  test('answers on its URL, and keeps committed rows across a restart and a SIGKILL', async () => {
    const [row] = await query<{ version: string }>(server.url, "SELECT current_setting('server_version') AS version");
    expect(row?.version).toMatch(/^\d+/);
    await query(server.url, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)');
    await server.handle.restart();
    await query(server.url, 'INSERT INTO kept VALUES (2)');
    await server.handle.kill();
    expect(await listening(server.handle.port)).toBe(false);
    await server.handle.restart();
    expect(await query<{ n: number }>(server.url, 'SELECT n FROM kept ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]);
  });

  test('a frozen server answers once thawed', async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      server.handle.freeze();
      let answered = false;
      const pending = client.query('SELECT 1 AS one').then((result) => {
        answered = true;
        return result.rows;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(answered).toBe(false); // a stopped process cannot answer, however long it is given
      server.handle.thaw();
      expect(await pending).toEqual([{ one: 1 }]);
    } finally {
      server.handle.thaw();
      await client.end();
    }
  });

  test('a server left running by a killed owner is killed and its directory removed by the next start', async () => {
    const owner = await ownerProcess();
    await owner.kill();
    expect(await listening(owner.port)).toBe(true); // the orphan: nobody disposed of it
    expect(existsSync(owner.dir)).toBe(true);
    expect(reapPostgresOrphans()).toBeGreaterThanOrEqual(1);
    expect(existsSync(owner.dir)).toBe(false);
    await expect.poll(() => listening(owner.port)).toBe(false);
  });

  test('a live owner keeps its server', async () => {
    const owner = await ownerProcess();
    try {
      reapPostgresOrphans();
      expect(await listening(owner.port)).toBe(true);
      expect(existsSync(owner.dir)).toBe(true);
    } finally {
      await owner.kill();
      reapPostgresOrphans();
    }
  });
});
