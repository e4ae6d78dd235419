/**
 * ts-reactor: a TypeScript saga orchestrator. Declare reactors (workflows) as graphs of steps;
 * the engine runs them in dependency order, compensates and undoes on failure, and coordinates
 * keyed work.
 *
 * @packageDocumentation
 */
export * from './dsl/index.js';
export * from './engine/index.js';
export * from './errors.js';
export { ScriptError } from './storage/redis/script-error.js';
export { PostgresLoginError, PostgresPermissionError, PostgresSchemaError } from './storage/postgres/errors.js';
export { MemoryStore, type MemoryStoreOptions } from './storage/memory/store.js';
export { MemoryCoordinator } from './storage/memory/coordinator.js';
export { MemoryFanOutLedger } from './storage/memory/fanout.js';
export { MemoryEventLog, type MemoryEventLogOptions } from './storage/memory/event-log.js';
export { MemoryEventWaits, type MemoryEventWaitsOptions } from './storage/memory/event-waits.js';
export { MemoryExecutionStream, type MemoryExecutionStreamOptions } from './storage/memory/execution-stream.js';
export { createEmbeddedEngine, type EmbeddedEngine, type EmbeddedEngineOptions } from './embedded.js';
export { createMemoryBackend, type MemoryBackend, type MemoryBackendOptions } from './storage/memory/backend.js';
export {
  createRuntime,
  type BackendPart,
  type Runtime,
  type RuntimeOptions,
  type StartWorkerOptions,
} from './runtime/create-runtime.js';
export * from './schedules/index.js';
export type { WorkerCloseOptions, WorkerCloseReport } from './queue/worker.js';
