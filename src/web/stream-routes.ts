/**
 * `GET /executions/:id/stream`: one execution's events as Server-Sent Events, from
 * `engine.watch` (docs/progress.md). Each event's SSE `id` is its position, so a browser's
 * `EventSource` that reconnects sends `Last-Event-ID` and continues after it (`?from=` does the
 * same for other clients); its SSE `event` is the engine event's type, its `data` the event as
 * JSON (`run.started` without its input, which may hold secrets). After the terminal event an
 * `end` event closes the stream. Every `heartbeatMs` the stream also sends a comment line
 * (`: keep-alive`), which clients ignore, so that a proxy with an idle timeout does not cut it
 * while the execution is quiet; the heartbeat stops when the client disconnects.
 *
 * Authorized by a read token for this execution (`?token=`, {@link createReadToken}) when the
 * dashboard has a `readTokenSecret`, else by the `authorize` hook as the execution page is (a
 * view of `execution`). A token that is expired, malformed or not signed with the secret answers
 * 401; one for another execution, 403. An unknown execution answers 404; an engine without an
 * execution stream, 501 (`watch_unavailable`: the dashboard's execution page polls instead).
 * Refusals carry a JSON problem body (`{ error: { name, code, message } }`), as the `/api`
 * routes do; a refused token's also says why (`details.reason`, {@link ReadTokenRefusal}).
 *
 * @module
 */
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { streamSSE } from 'hono/streaming';
import type { Engine } from '../engine/engine.js';
import type { Clock } from '../ports/clock.js';
import type { ReactorEvent } from '../ports/events.js';
import type { Store } from '../ports/store.js';
import { guard, type Authorize } from './auth.js';
import { verifyReadToken, type ReadTokenRefusal } from './read-token.js';

/** A refused read token: 401 or 403, its reason in the problem body (`details.reason`). */
export class ReadTokenRefusedError extends HTTPException {
  /** Why the token was refused. */
  readonly reason: ReadTokenRefusal;

  constructor(reason: ReadTokenRefusal, message: string) {
    super(reason === 'foreign' ? 403 : 401, { message });
    this.reason = reason;
  }
}

/** What the stream route needs. */
export interface StreamRouteDeps {
  readonly engine: Engine;
  readonly store: Store;
  readonly authorize: Authorize | undefined;
  /** The secret read tokens are verified with; absent: tokens are refused (401) and only `authorize` lets a request in. */
  readonly readTokenSecret: string | undefined;
  /** Ms between two `: keep-alive` comments of an open stream; 0 sends none. */
  readonly heartbeatMs: number;
  /** The time source of the heartbeat. */
  readonly clock: Clock;
}

/** What a heartbeat sends: an SSE comment line, which an `EventSource` ignores. */
const KEEP_ALIVE = ': keep-alive\n\n';

/** Registers `GET /executions/:id/stream` on `app`. */
export function streamRoutes(app: Hono, deps: StreamRouteDeps): void {
  app.get('/executions/:id/stream', async (c) => {
    const id = c.req.param('id');
    await authorizeStream(c, deps, id);
    if ((await deps.store.get(id)) === undefined)
      throw new HTTPException(404, { message: `execution ${id} has no record` });
    await probeWatch(deps.engine, id);
    const from = c.req.header('last-event-id') ?? c.req.query('from');
    const abort = new AbortController();
    return streamSSE(c, async (stream) => {
      // Each write is one whole message or comment, queued in order on the stream: they never interleave.
      const stopHeartbeat =
        deps.heartbeatMs > 0
          ? deps.clock.every(deps.heartbeatMs, () => void stream.write(KEEP_ALIVE))
          : () => undefined;
      stream.onAbort(() => {
        stopHeartbeat();
        abort.abort();
      });
      try {
        for await (const { position, event } of deps.engine.watch(id, {
          ...(from === undefined || from === '' ? {} : { from }),
          signal: abort.signal,
        }))
          await stream.writeSSE({ id: position, event: event.type, data: JSON.stringify(shown(event)) });
        if (!abort.signal.aborted) await stream.writeSSE({ event: 'end', data: '{}' });
      } finally {
        stopHeartbeat();
      }
    });
  });
}

async function authorizeStream(c: Context, deps: StreamRouteDeps, executionId: string): Promise<void> {
  const token = c.req.query('token');
  if (token === undefined) return guard(deps.authorize, c, { kind: 'view', page: 'execution' });
  if (deps.readTokenSecret === undefined) throw new ReadTokenRefusedError('not_accepted', REFUSALS.not_accepted);
  const verdict = verifyReadToken(token, { secret: deps.readTokenSecret, executionId });
  if (verdict === 'valid') return;
  throw new ReadTokenRefusedError(verdict, REFUSALS[verdict]);
}

const REFUSALS: Readonly<Record<ReadTokenRefusal, string>> = {
  not_accepted: 'read tokens are not accepted here (no readTokenSecret)',
  expired: 'the read token expired',
  invalid: 'the read token is invalid',
  foreign: 'the read token is for another execution',
};

/**
 * Throws what the first step of a watch would (`WatchUnavailableError`, `ExecutionNotFoundError`)
 * before the response starts, so it is answered with its status: a watch whose signal is already
 * aborted checks the stream and the record, then ends without reading.
 */
async function probeWatch(engine: Engine, executionId: string): Promise<void> {
  const aborted = new AbortController();
  aborted.abort();
  await engine.watch(executionId, { signal: aborted.signal })[Symbol.asyncIterator]().next();
}

/** The event as the stream sends it: `run.started` without its input. */
function shown(event: ReactorEvent): object {
  if (event.type !== 'run.started') return event;
  const { input: _input, ...rest } = event;
  return rest;
}
