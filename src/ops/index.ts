/**
 * The operators' read model, shared by `ts-reactor/web` and the `ts-reactor` CLI.
 *
 * @module
 */
export { createReadModel, type ReadModel, type ReadModelOptions } from './read-model.js';
export type { CoordinationQuery } from './coordination.js';
export type * from './types.js';
