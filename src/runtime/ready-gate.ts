/**
 * The gates a runtime puts in front of a backend's start-up check (`Backend.ready`): an engine
 * whose calls that start or continue executions wait for it and reject with its error, and a
 * consumer that takes no job until it resolves.
 *
 * @module
 */
import type { Logger } from '../dsl/context.js';
import type { Engine } from '../engine/engine.js';
import type { JobConsumer } from '../ports/queue.js';

/** `engine` whose calls that start or continue executions wait for `ready`, and reject with its error. */
export function engineAfter(engine: Engine, ready: Promise<unknown>): Engine {
  const gate = <F extends (...args: never[]) => Promise<unknown>>(call: F): F =>
    (async (...args: Parameters<F>) => {
      await ready;
      return call(...args);
    }) as unknown as F;
  return {
    ...engine,
    run: gate(engine.run),
    start: gate(engine.start),
    startMany: gate(engine.startMany),
    retry: gate(engine.retry),
    resume: gate(engine.resume),
    retryStep: gate(engine.retryStep),
    skipStep: gate(engine.skipStep),
    fork: gate(engine.fork),
    send: gate(engine.send),
    sendMany: gate(engine.sendMany),
  };
}

/** `consumer` that starts taking jobs only once `ready` resolves; when it rejects, never (the reason is logged). */
export function consumerAfter(consumer: JobConsumer, ready: Promise<unknown>, logger: Logger): JobConsumer {
  let stopped = false;
  return {
    ...consumer,
    start: (processor, startOptions) => {
      ready
        .then(() => {
          if (!stopped) consumer.start(processor, startOptions);
        })
        .catch((error: unknown) =>
          logger.error(
            { err: error },
            `this worker takes no jobs: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
    },
    stop: (...args: Parameters<JobConsumer['stop']>) => {
      stopped = true;
      return consumer.stop(...args);
    },
  };
}
