/**
 * `GET /executions/:id/stream` over real HTTP (fetch, reading the body as it streams): the
 * events of an execution as Server-Sent Events, the SSE id its position; progress arrives while
 * the step still runs; `Last-Event-ID` continues after a position; an `end` event after the
 * terminal one. Read tokens: a valid one for the execution is served without `authorize`; a
 * missing (when `authorize` refuses), expired, malformed or foreign one is refused with its status
 * and a typed JSON problem; so is every token when the dashboard has no secret. An engine without
 * an execution stream answers 501 (`watch_unavailable`).
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  createEngine,
  MemoryStore,
  reactor,
  type EmbeddedEngine,
  type StepContext,
} from '../../src/index.js';
import { createDashboard, createReadToken, type ReadTokenRefusal } from '../../src/web/index.js';

const SECRET = 'a-read-token-secret-of-at-least-32-chars';
const opened = new Map<string, Promise<void>>();

const job = reactor('sse-job')
  .input({ n: z.number(), secret: z.string() })
  .step('work', {
    args: ($) => ({ n: $.input('n') }),
    run: async ({ n }, ctx: StepContext<{ step: number }>) => {
      for (let step = 1; step <= n; step++) ctx.progress({ step });
      await opened.get(ctx.executionId);
      return n;
    },
  })
  .returns('work');

let engine: EmbeddedEngine;
let server: ServerType;
let base: string;

beforeAll(async () => {
  engine = createEmbeddedEngine({ reactors: [job] });
  const app = createDashboard({
    engine,
    reactors: [job],
    basePath: '/ops',
    readTokenSecret: SECRET,
    authorize: (c) => c.req.header('x-role') === 'ops' || 'unauthenticated',
  });
  server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`;
});
afterAll(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await engine?.close();
});

interface SseEvent {
  readonly id?: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Reads the SSE body as it arrives; `onEvent` sees each event as soon as it is parsed. */
async function readSse(response: Response, onEvent: (e: SseEvent) => void = () => undefined): Promise<SseEvent[]> {
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      const id = fields.get('id');
      const e = {
        ...(id === undefined ? {} : { id }),
        event: fields.get('event') ?? 'message',
        data: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown>,
      };
      events.push(e);
      onEvent(e);
    }
  }
  return events;
}

function tokenFor(executionId: string, options: { expiresIn?: number; now?: number; secret?: string } = {}): string {
  return createReadToken({
    executionId,
    expiresIn: options.expiresIn ?? 60_000,
    secret: options.secret ?? SECRET,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

async function startGated(n: number): Promise<{ executionId: string; open: () => void }> {
  let open = (): void => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const started = await engine.start(job, { n, secret: 'hunter2' });
  opened.set(started.executionId, gate);
  return { executionId: started.executionId, open };
}

describe('GET /executions/:id/stream', () => {
  test('with a read token: progress while the step runs, every event with its position, then end', async () => {
    const { executionId, open } = await startGated(2);
    const response = await fetch(`${base}/executions/${executionId}/stream?token=${tokenFor(executionId)}`);
    expect(response.status).toBe(200);
    const events = await readSse(response, (e) => {
      if (e.event === 'step.progress' && (e.data['data'] as { step: number }).step === 2) open();
    });
    expect(events.at(-1)?.event).toBe('end');
    expect(events.at(-2)?.event).toBe('run.completed');
    const progress = events.filter((e) => e.event === 'step.progress');
    expect(progress.map((e) => e.data['data'])).toEqual([{ step: 1 }, { step: 2 }]);
    expect(progress[0]?.data).toMatchObject({ executionId, step: 'work', attempt: 1 });
    const all = await engine.watch(executionId)[Symbol.asyncIterator]().next();
    expect(events[0]?.id).toBe(all.value?.position);
    // The input may hold secrets: run.started goes out without it.
    expect(JSON.stringify(events)).not.toContain('hunter2');
  });

  test('Last-Event-ID continues after a position; the dashboard session (authorize) also lets a request in', async () => {
    const { executionId, open } = await startGated(3);
    open();
    await engine.wait(executionId);
    const full = await readSse(
      await fetch(`${base}/executions/${executionId}/stream`, { headers: { 'x-role': 'ops' } }),
    );
    const cut = 2;
    const rest = await readSse(
      await fetch(`${base}/executions/${executionId}/stream?token=${tokenFor(executionId)}`, {
        headers: { 'last-event-id': full[cut]!.id! },
      }),
    );
    expect(rest).toEqual(full.slice(cut + 1));
  });

  test('refused: no token and no session (401), expired (401), another secret (401), malformed (401), another execution (403), each with a typed JSON problem', async () => {
    const { executionId, open } = await startGated(1);
    open();
    const other = await startGated(1);
    other.open();
    const url = `${base}/executions/${executionId}/stream`;
    const refusal = async (query: string): Promise<{ status: number; type: string | null; body: unknown }> => {
      const response = await fetch(`${url}${query}`);
      return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
    };
    const problem = (status: number, message: string, reason?: ReadTokenRefusal) => ({
      status,
      type: expect.stringContaining('application/json') as unknown,
      body: {
        error: {
          name: 'HTTPError',
          code: `http_${String(status)}`,
          message,
          ...(reason === undefined ? {} : { details: { reason } }),
        },
      },
    });
    expect(await refusal('')).toEqual(problem(401, 'authentication required'));
    expect(await refusal(`?token=${tokenFor(executionId, { now: Date.now() - 3_600_000 })}`)).toEqual(
      problem(401, 'the read token expired', 'expired'),
    );
    expect(await refusal(`?token=${tokenFor(executionId, { secret: 'x'.repeat(40) })}`)).toEqual(
      problem(401, 'the read token is invalid', 'invalid'),
    );
    expect(await refusal('?token=v1.bogus')).toEqual(problem(401, 'the read token is invalid', 'invalid'));
    expect(await refusal(`?token=${tokenFor(other.executionId)}`)).toEqual(
      problem(403, 'the read token is for another execution', 'foreign'),
    );
    const unknown = await fetch(`${base}/executions/nope/stream?token=${tokenFor('nope')}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'http_404' } });
  });

  test('a dashboard without readTokenSecret refuses every token with 401 and a typed problem', async () => {
    const { executionId, open } = await startGated(1);
    open();
    const app = createDashboard({ engine, authorize: () => 'unauthenticated' });
    const response = await app.request(`/executions/${executionId}/stream?token=${tokenFor(executionId)}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: {
        name: 'HTTPError',
        code: 'http_401',
        message: 'read tokens are not accepted here (no readTokenSecret)',
        details: { reason: 'not_accepted' },
      },
    });
  });

  test('an engine without an execution stream: 501 with watch_unavailable, before any event is sent', async () => {
    const bare = createEngine({ store: new MemoryStore(), reactors: [job] });
    const started = await bare.run(job, { n: 1, secret: 's' });
    const app = createDashboard({ engine: bare });
    const response = await app.request(`/executions/${started.executionId}/stream`);
    expect(response.status).toBe(501);
    expect(await response.json()).toMatchObject({
      error: {
        name: 'WatchUnavailableError',
        code: 'watch_unavailable',
        details: { executionId: started.executionId },
      },
    });
  });

  test('a secret shorter than 32 characters is refused when the dashboard is built and when a token is minted', () => {
    expect(() => createDashboard({ engine, readTokenSecret: 'short' })).toThrow(RangeError);
    expect(() => createReadToken({ executionId: 'e', expiresIn: '1m', secret: 'short' })).toThrow(RangeError);
  });
});
