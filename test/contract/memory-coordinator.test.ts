import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeCoordinatorContract } from './coordinator-contract.js';

describeCoordinatorContract('memory (manual clock)', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const coordinator = new MemoryCoordinator({ clock });
  return {
    coordinator,
    advance: async (ms) => {
      clock.advance(ms);
      await Promise.resolve();
    },
    close: () => coordinator.close(),
  };
});
