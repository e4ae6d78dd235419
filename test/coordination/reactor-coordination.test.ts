// Reactor-level coordination (reactor-suite.ts) on every backend of the matrix.
import { describeOnBackends } from '../support/backend-matrix.js';
import { describeReactorCoordination } from './reactor-suite.js';

describeOnBackends('reactor-level coordination', (backend) => describeReactorCoordination(() => backend.rig()));
