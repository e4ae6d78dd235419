// Rollback under a step's own keys (rollback-suite.ts) on every backend of the matrix.
import { describeOnBackends } from '../support/backend-matrix.js';
import { describeStepRollback } from './rollback-suite.js';

describeOnBackends('step rollback under the step keys', (backend) => describeStepRollback(() => backend.rig()));
