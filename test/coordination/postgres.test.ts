import { describe } from 'vitest';
import { postgresBackend } from './harness.js';
import { describeReactorCoordination } from './reactor-suite.js';

describe('reactor-level coordination on PostgreSQL', () => describeReactorCoordination(postgresBackend));
