import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { ManualClock } from '../../src/testing/clock.js';
import { requiredOnly } from '../support/required-only.js';
import { describeCoordinatorContract } from './coordinator-contract.js';

// A backend that offers no fast path passes the contract too: the fast-path sections are skipped.
describeCoordinatorContract('memory, required transitions only (manual clock)', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const memory = new MemoryCoordinator({ clock });
  return {
    coordinator: requiredOnly(memory),
    advance: async (ms) => {
      clock.advance(ms);
      await Promise.resolve();
    },
    close: () => memory.close(),
  };
});
