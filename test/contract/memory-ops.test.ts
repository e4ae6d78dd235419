import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { MemoryStore } from '../../src/storage/memory/store.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeOpsContract } from './ops-contract.js';

describeOpsContract('memory (manual clock)', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const coordinator = new MemoryCoordinator({ clock });
  return {
    coordinator,
    store: new MemoryStore({ clock }),
    advance: async (ms) => void clock.advance(ms),
    close: () => coordinator.close(),
  };
});
