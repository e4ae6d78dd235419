import { MemoryEventWaits } from '../../src/storage/memory/event-waits.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeEventWaitsContract } from './event-waits-contract.js';

describeEventWaitsContract('memory', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const waits = new MemoryEventWaits({ clock });
  return {
    waits,
    second: async () => waits, // one process: the same index
    pass: async (ms) => void clock.advance(ms),
    close: async () => undefined,
  };
});
