/**
 * A migration, once shipped, is never edited: a schema migrated by an older release must be the
 * schema this release expects. The SQL each migration produces is pinned here by its SHA-256,
 * for the default schema and a custom one, so a refactor of the TypeScript that builds it (a
 * shared fragment, a helper) must produce the same text to the byte. A new migration adds its
 * line; a shipped one's line never changes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/storage/postgres/migrations/index.js';
import { PostgresNames } from '../../src/storage/postgres/names.js';

/** SHA-256 of each migration's SQL, by schema and version. */
const SHIPPED: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  default: {
    1: '33d579e718dce252442481e810f39124df5aaf3be4ff351cc537a7c46d3e736c',
    2: '198759b0f9150e8800182ad84e1386b5561a204efcffa25038e441925bdbde3e',
    3: '9371543c4d647125186e253551a111993871cb7f4a71163f48443b9c4da1b236',
    4: '28f2ba56b60ec48e0d92ae192cd46a7c8dcbbf3b1c04fb601b0f55b0a2789d0e',
    5: '880a53acc063eb26d910c3fe595c71984fcf81f2212ad7cdc37ed6880b19674a',
    6: 'fb7175b2d3e28f819e00c114b66c8dd211715d64795fa857e478bd1a95f34d03',
    7: 'fe9177f839cd5dfd62ef42327e83d915f44507fa8a0b0e79b9e6984696550576',
    8: '50cedc5e8dea1ccbece1a03e76fa4b38da810caece50bb8309d4248fea2cd7ba',
    9: 'ebaa548ef4d4a86b379e349495bf36b14dc4a7e898950d8b5a5e2b5561a6f292',
    10: 'ff3d3005887fde4d0dec370ee4551acc302586a826248e760b2acc1afe8a31f3',
    11: '68c7e600d14f060ed414bfcf6f83315d82832c3f5bd1bddead6f56119feb3870',
  },
  my_app_1: {
    1: '9da02f49e70ac90722cd8d3dfde507696a405d441e55853867a8db5a6eaa0a78',
    2: '0c7122511d4708578f879f7352f9f4ccabacfdadf2c976bd9348f5f1697b0f8e',
    3: 'a9eab3b213d921d71543b4df648b61b56fe2316afe69f429a5df7d7b9436c574',
    4: '14b5eba5493461f26cccffbae912cd23ec84478fe72dca9accb03829414afbf7',
    5: 'd865ff9b21591fd9a117ca3157a908d14792850c81c3fdcdb4d6e3973acc9121',
    6: '8754f1a59e6e39ebb88f9d8a069e87d7fb67f92978b28cc6c4536a0ca5f2b401',
    7: '22ac91dc5babe3444ad9203ca47a46c410b0557f7411cdc2146e76c4587d5a83',
    8: '0c6549aaa0b13187e60253d07c531526c33c1c0b78f772a441fcf58bce272d02',
    9: '51a7f9b050f21a5f3f4276e78f9505e14d3c3978b77e63b29a45a52435982657',
    10: '3587922a3b2d34e72ddee8c4aac11b8c971483c98d26217df9b55062397aab7b',
    11: '145106701eb2ed5541a9b032e109bb9dc04efe346cb0af78e95603ff7897ad18',
  },
};

describe('shipped migrations', () => {
  for (const [schema, pinned] of Object.entries(SHIPPED)) {
    const names = new PostgresNames(schema === 'default' ? undefined : schema, 'shipped-migrations');
    for (const migration of MIGRATIONS) {
      const expected = pinned[migration.version];
      it(`migration ${migration.version} (${migration.name}) builds the SQL it shipped with, schema ${schema}`, () => {
        const sha = createHash('sha256').update(migration.sql(names)).digest('hex');
        expect(expected, `a new migration: pin its SHA-256 ${sha} in SHIPPED`).toBeDefined();
        expect(sha, 'a shipped migration changed: add a new migration instead').toBe(expected);
      });
    }
  }
});
