import { MemoryFanOutLedger } from '../../src/storage/memory/fanout.js';
import { describeFanOutLedgerContract } from './fanout-ledger-contract.js';

describeFanOutLedgerContract('memory', async () => ({
  ledger: new MemoryFanOutLedger(),
  close: async () => undefined,
}));
