import { describe } from 'vitest';
import { redisBackend } from '../coordination/harness.js';
import { describeStepRollback } from './rollback-suite.js';

describe('step rollback under the step keys, Redis', () => describeStepRollback(redisBackend));
