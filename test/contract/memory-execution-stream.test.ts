/**
 * The memory execution stream keeps the streams of the most recently appended-to executions
 * (`maxExecutions`): the least recently appended to is dropped first, however many events in a
 * row went to the newest one.
 */
import { expect, test } from 'vitest';
import { MemoryExecutionStream } from '../../src/storage/memory/execution-stream.js';
import type { ReactorEvent } from '../../src/index.js';

function event(executionId: string): ReactorEvent {
  return {
    type: 'run.resumed',
    executionId,
    rootExecutionId: executionId,
    reactor: 'r',
    at: 0,
  } as unknown as ReactorEvent;
}

async function kept(stream: MemoryExecutionStream, ids: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of ids) if ((await stream.read(id, undefined, { blockMs: 0, limit: 10 })).length > 0) found.push(id);
  return found;
}

test('the least recently appended-to execution is dropped first', async () => {
  const stream = new MemoryExecutionStream({ maxExecutions: 2 });
  for (const id of ['e1', 'e2', 'e1', 'e3']) stream.appendNow(id, event(id));
  expect(await kept(stream, ['e1', 'e2', 'e3'])).toEqual(['e1', 'e3']);
});

test('events in a row to one execution keep it the newest; the next new one drops the oldest', async () => {
  const stream = new MemoryExecutionStream({ maxExecutions: 2 });
  for (const id of ['e1', 'e2', 'e2', 'e2', 'e1', 'e1', 'e3']) stream.appendNow(id, event(id));
  expect(await kept(stream, ['e1', 'e2', 'e3'])).toEqual(['e1', 'e3']);
  for (const id of ['e3', 'e4']) stream.appendNow(id, event(id));
  expect(await kept(stream, ['e1', 'e2', 'e3', 'e4'])).toEqual(['e3', 'e4']);
});
