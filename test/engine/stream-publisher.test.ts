/**
 * The engine's stream publisher (docs/decisions/138, 153): events gathered for one turn are
 * appended on the next turn, or at once when a checkpoint is about to be written
 * (`beforeWrite`); an `ordered` stream's appends are sent without waiting for the one before, an
 * unordered stream's one after another; `flushed` resolves once every append is answered.
 */
import { describe, expect, test } from 'vitest';
import { StreamPublisher } from '../../src/engine/model/stream-publisher.js';
import { silentLogger } from '../../src/engine/model/logger.js';
import type { ExecutionStream, StreamBatch } from '../../src/ports/execution-stream.js';
import type { ReactorEvent } from '../../src/index.js';

/** A stream whose appends the test answers one by one. */
function heldStream(ordered: boolean): {
  stream: ExecutionStream;
  sent: (readonly StreamBatch[])[];
  answer: () => void;
} {
  const sent: (readonly StreamBatch[])[] = [];
  const waiting: (() => void)[] = [];
  const stream: ExecutionStream = {
    ordered,
    append: (batches) => {
      sent.push(batches);
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    read: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  };
  return { stream, sent, answer: () => waiting.shift()?.() };
}

function event(executionId: string, type: string): ReactorEvent {
  return { type, executionId, rootExecutionId: executionId, reactor: 'r', at: 0 } as unknown as ReactorEvent;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StreamPublisher', () => {
  test('events of one turn are appended together on the next turn', async () => {
    const { stream, sent, answer } = heldStream(false);
    const publisher = new StreamPublisher(stream, silentLogger);
    publisher.publish(event('e1', 'run.resumed'));
    publisher.publish(event('e1', 'step.started'));
    publisher.publish(event('e2', 'run.resumed'));
    expect(sent).toHaveLength(0);
    await turn();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.map((b) => [b.executionId, b.events.map((e) => e.type)])).toEqual([
      ['e1', ['run.resumed', 'step.started']],
      ['e2', ['run.resumed']],
    ]);
    answer();
    await publisher.flushed();
  });

  test('beforeWrite sends what is gathered at once, in the same turn', () => {
    const { stream, sent } = heldStream(true);
    const publisher = new StreamPublisher(stream, silentLogger);
    publisher.beforeWrite(); // nothing gathered: nothing sent
    expect(sent).toHaveLength(0);
    publisher.publish(event('e1', 'step.succeeded'));
    publisher.beforeWrite();
    expect(sent).toHaveLength(1);
  });

  test('an ordered stream: each append is sent without waiting for the one before; flushed waits for all', async () => {
    const { stream, sent, answer } = heldStream(true);
    const publisher = new StreamPublisher(stream, silentLogger);
    expect(publisher.ordered).toBe(true);
    publisher.publish(event('e1', 'step.started'));
    publisher.beforeWrite();
    publisher.publish(event('e1', 'step.succeeded'));
    publisher.beforeWrite();
    expect(sent).toHaveLength(2); // the first not answered yet
    let done = false;
    const flushed = publisher.flushed().then(() => (done = true));
    answer();
    await turn();
    expect(done).toBe(false);
    answer();
    await flushed;
    expect(done).toBe(true);
  });

  test('an unordered stream: an append waits for the one before to be answered', async () => {
    const { stream, sent, answer } = heldStream(false);
    const publisher = new StreamPublisher(stream, silentLogger);
    expect(publisher.ordered).toBe(false);
    publisher.publish(event('e1', 'step.started'));
    publisher.beforeWrite();
    await turn();
    publisher.publish(event('e1', 'step.succeeded'));
    publisher.beforeWrite();
    await turn();
    expect(sent).toHaveLength(1);
    answer();
    await turn();
    expect(sent).toHaveLength(2);
    answer();
    await publisher.flushed();
  });
});
