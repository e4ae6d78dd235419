import { MemoryEventLog } from '../../src/storage/memory/event-log.js';
import { ManualClock } from '../../src/testing/clock.js';
import { describeEventLogContract } from './event-log-contract.js';

describeEventLogContract('memory', async ({ ttlMs }) => {
  const clock = new ManualClock({ autoAdvance: false });
  const log = new MemoryEventLog({ clock, ...(ttlMs === undefined ? {} : { ttlMs }) });
  return {
    log,
    second: async () => log, // one process: the same log
    pass: async (ms) => void clock.advance(ms),
    close: async () => undefined,
  };
});
