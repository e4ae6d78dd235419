import { MemoryStore } from '../../src/storage/memory/store.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeStoreContract } from './store-contract.js';

const maxRecordBytes = 4096;

describeStoreContract('memory', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  return {
    store: new MemoryStore({ clock, maxRecordBytes }),
    maxRecordBytes,
    pass: async (ms) => void clock.advance(ms),
    close: async () => undefined,
  };
});
