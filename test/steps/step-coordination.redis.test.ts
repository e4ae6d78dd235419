import { describe } from 'vitest';
import { redisBackend } from '../coordination/harness.js';
import { describeStepCoordination } from './step-suite.js';

describe('step-scoped coordination, Redis', () => describeStepCoordination(redisBackend));
