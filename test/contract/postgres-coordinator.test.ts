import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { describeCoordinatorContract, realPause } from './coordinator-contract.js';

const url = process.env.PGC_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres';
const schema = `ctr_${crypto.randomUUID().slice(0, 8)}`;
let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: url, max: 8 });
  const sql = readFileSync(
    new URL('../../src/storage/postgres/coordinator/0002_coordination.sql', import.meta.url),
    'utf8',
  )
    .replaceAll('__SCHEMA__', `"${schema}"`)
    .replaceAll('__CHANNEL__', `'${schema}_coord'`);
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(sql);
});
afterAll(async () => {
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
});

describeCoordinatorContract('postgres (database clock)', async () => {
  const coordinator = new PostgresCoordinator({ pool, schema });
  await coordinator.listening();
  return {
    coordinator,
    advance: (ms) => realPause(ms + 25),
    close: () => coordinator.close(),
  };
});
