import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { migrate } from '../../src/storage/postgres/migrate.js';
import { PostgresNames } from '../../src/storage/postgres/names.js';
import { describeCoordinatorContract, realPause } from './coordinator-contract.js';

const server = usePostgresServer();
const schema = `ctr_${crypto.randomUUID().slice(0, 8)}`;
let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: server.url, max: 8 });
  await migrate(pool, new PostgresNames(schema));
});
afterAll(async () => {
  await pool.end();
});

describeCoordinatorContract('postgres (database clock)', async () => {
  const coordinator = new PostgresCoordinator({ connection: pool, schema });
  // Listening before the first test's wait, so a release right after it is heard.
  await coordinator.listening();
  return {
    coordinator,
    // Real time: sleep a little longer than asked so a deadline is surely behind us (a timer may
    // fire up to a millisecond early), but no longer: each extra ms narrows the scenarios' margins.
    advance: (ms) => realPause(ms + 5),
    // Listening, and the locks waited for marked wanted (a release notifies only a wanted lock).
    listening: () => coordinator.listening(),
    close: () => coordinator.close(),
  };
});
