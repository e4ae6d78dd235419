import { describe } from 'vitest';
import { memoryBackend } from '../coordination/harness.js';
import { describeStepRollback } from './rollback-suite.js';

describe('step rollback under the step keys, memory backend', () => describeStepRollback(memoryBackend));
