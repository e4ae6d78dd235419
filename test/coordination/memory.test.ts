import { describe } from 'vitest';
import { memoryBackend } from './harness.js';
import { describeReactorCoordination } from './reactor-suite.js';

describe('reactor-level coordination on the memory backend', () => describeReactorCoordination(memoryBackend));
