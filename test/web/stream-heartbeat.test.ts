/**
 * The execution stream's heartbeat: while an execution is quiet the stream sends a `: keep-alive`
 * comment every `streamHeartbeatSeconds` (default 15) on the dashboard's clock — here a manual
 * clock, advanced by the test, so nothing depends on speed — and the heartbeat stops when the
 * client disconnects. 0 turns it off; a value that is not a finite number ≥ 0 is refused.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEmbeddedEngine, reactor, type Clock, type EmbeddedEngine } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { createDashboard } from '../../src/web/index.js';

/** What the step waits for; set before an execution starts. */
let gate: Promise<void> = Promise.resolve();

/** One step that waits for its gate: the execution stays quiet meanwhile. */
const quiet = reactor('sse-quiet')
  .input({})
  .step('wait', { run: async () => void (await gate) })
  .returns('wait');

/** A manual clock that counts its running `every` timers and the intervals asked. */
class CountingClock implements Clock {
  readonly manual = new ManualClock({ autoAdvance: false });
  readonly intervals: number[] = [];
  running = 0;
  now = (): number => this.manual.now();
  sleep = (ms: number, signal?: AbortSignal): Promise<void> => this.manual.sleep(ms, signal);
  every(ms: number, fn: () => void): () => void {
    this.intervals.push(ms);
    this.running += 1;
    const stop = this.manual.every(ms, fn);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.running -= 1;
      stop();
    };
  }
}

let engine: EmbeddedEngine;
let server: ServerType;
let base: string;
const clock = new CountingClock();

beforeAll(async () => {
  engine = createEmbeddedEngine({ reactors: [quiet] });
  const app = createDashboard({ engine, reactors: [quiet], clock });
  server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await engine?.close();
});

/** Reads a streamed body as text, as far as a predicate on everything read so far needs. */
function bodyReader(response: Response): (until: (text: string) => boolean) => Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return async (until) => {
    while (!until(text)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the stream ended before the expected text; read: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
    return text;
  };
}

/** Polls `condition` (a generous bound; never a timed assert). */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

const count = (text: string, part: string): number => text.split(part).length - 1;

test('a quiet stream gets a keep-alive comment every 15 s of the clock, and none once the client is gone', async () => {
  let open = (): void => undefined;
  gate = new Promise<void>((resolve) => (open = resolve));
  const started = await engine.start(quiet, {});
  const client = new AbortController();
  const response = await fetch(`${base}/executions/${started.executionId}/stream`, { signal: client.signal });
  expect(response.status).toBe(200);
  const read = bodyReader(response);
  await read((text) => text.includes('event: step.started'));
  expect(clock.intervals).toEqual([15_000]);
  expect(clock.running).toBe(1);
  clock.manual.advance(14_999);
  clock.manual.advance(1);
  let text = await read((t) => count(t, ': keep-alive\n\n') === 1);
  clock.manual.advance(15_000);
  text = await read((t) => count(t, ': keep-alive\n\n') === 2);
  // A comment between two messages, never inside one: every block is a message or a comment.
  for (const block of text.split('\n\n').filter((b) => b !== ''))
    expect(block === ': keep-alive' || block.startsWith('event: ') || block.startsWith('data: ')).toBe(true);
  client.abort();
  await eventually(() => clock.running === 0);
  clock.manual.advance(60_000); // nothing left to fire
  open();
  await engine.wait(started.executionId);
});

test('the heartbeat stops when the stream ends; 0 sends none; a bad value is refused', async () => {
  gate = Promise.resolve();
  const started = await engine.start(quiet, {});
  await engine.wait(started.executionId);
  const before = clock.running;
  const text = await (await fetch(`${base}/executions/${started.executionId}/stream`)).text();
  expect(text).toContain('event: end');
  await eventually(() => clock.running === before);

  const silent = new CountingClock();
  const app = createDashboard({ engine, clock: silent, streamHeartbeatSeconds: 0 });
  expect(await (await app.request(`/executions/${started.executionId}/stream`)).text()).toContain('event: end');
  expect(silent.intervals).toEqual([]);

  const every = new CountingClock();
  const short = createDashboard({ engine, clock: every, streamHeartbeatSeconds: 0.5 });
  await (await short.request(`/executions/${started.executionId}/stream`)).text();
  expect(every.intervals).toEqual([500]);

  for (const bad of [-1, Number.NaN, Infinity])
    expect(() => createDashboard({ engine, streamHeartbeatSeconds: bad })).toThrow(RangeError);
});
