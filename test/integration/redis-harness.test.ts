/**
 * The throwaway-server harness itself: a server whose owner process was killed (so it never
 * disposed of it) is stopped, and its directory removed, by the next start.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { reapOrphans } from '../support/redis-orphans.js';

const harness = fileURLToPath(new URL('../support/redis-server.ts', import.meta.url));

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

/** A process that starts a server, prints where, and stays alive until killed. */
function ownerProcess(): Promise<{ kill: () => Promise<void>; port: number; dir: string }> {
  const script = `import { startRedisServer } from ${JSON.stringify(harness)};
const s = await startRedisServer();
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

describe('throwaway redis-server harness', () => {
  test('a server left running by a killed owner is stopped and its directory removed by the next start', async () => {
    const owner = await ownerProcess();
    await owner.kill();
    expect(await listening(owner.port)).toBe(true); // the orphan: nobody disposed of it
    expect(existsSync(owner.dir)).toBe(true);
    expect(reapOrphans()).toBeGreaterThanOrEqual(1);
    expect(existsSync(owner.dir)).toBe(false);
    for (let i = 0; i < 50 && (await listening(owner.port)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await listening(owner.port)).toBe(false);
  });

  test('a live owner keeps its server', async () => {
    const owner = await ownerProcess();
    try {
      reapOrphans();
      expect(await listening(owner.port)).toBe(true);
      expect(existsSync(owner.dir)).toBe(true);
    } finally {
      await owner.kill();
      reapOrphans();
    }
  });
});
