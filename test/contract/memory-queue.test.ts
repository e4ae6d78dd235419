/**
 * The queue contract on the embedded queue, on a manual clock: delays and backoffs move only when
 * the suite lets time pass, and waiting on a condition lets queued work run without moving the
 * clock, so nothing here sleeps.
 */
import { createMemoryQueue } from '../../src/queue/memory.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeQueueContract, type ContractTime } from './queue-contract.js';

/** Lets every microtask and callback queued so far run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Rounds of {@link settle} a condition gets before `until` gives up (no clock moves meanwhile). */
const SETTLE_ROUNDS = 1_000;

function manualTime(clock: ManualClock): ContractTime {
  return {
    now: () => clock.now(),
    async elapse(ms) {
      // What already ran registers its timers before the clock moves.
      for (let i = 0; i < 3; i += 1) await settle();
      clock.advance(ms);
      for (let i = 0; i < 3; i += 1) await settle();
    },
    async until(probe, what) {
      for (let round = 0; round < SETTLE_ROUNDS; round += 1) {
        if (await probe()) return;
        await settle();
      }
      throw new Error(`${what}: not so after ${SETTLE_ROUNDS} rounds of queued work, the clock standing still`);
    },
  };
}

describeQueueContract(
  'memory',
  { discarded: 'remembered', foreignProducers: 'none', stalls: 'in-process', stopping: 'takes-nothing' },
  async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const memory = createMemoryQueue({ clock });
    return {
      queue: memory.queue,
      consumer: () => memory.consumer,
      time: manualTime(clock),
      stallMs: 24 * 60 * 60 * 1000,
      async close() {
        await memory.consumer.stop();
        await memory.queue.close();
      },
    };
  },
);
