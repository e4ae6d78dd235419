import { MemoryStore } from '../../src/storage/memory/store.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeStoreContract } from './store-contract.js';

const maxRecordBytes = 4096;

describeStoreContract('memory', async () => ({
  store: new MemoryStore({ clock: new ManualClock({ autoAdvance: false }), maxRecordBytes }),
  maxRecordBytes,
  close: async () => undefined,
}));
