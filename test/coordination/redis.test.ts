import { describe } from 'vitest';
import { redisBackend } from './harness.js';
import { describeReactorCoordination } from './reactor-suite.js';

describe('reactor-level coordination on Redis', () => describeReactorCoordination(redisBackend));
