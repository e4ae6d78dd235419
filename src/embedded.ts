import { createEngine, type Engine, type EngineOptions } from './engine/engine.js';
import { MemoryCoordinator } from './storage/memory/coordinator.js';
import { MemoryStore } from './storage/memory/store.js';

/** Options of {@link createEmbeddedEngine}: an engine's options, with the store optional. */
export type EmbeddedEngineOptions = Omit<EngineOptions, 'store'> & Partial<Pick<EngineOptions, 'store'>>;

/**
 * An engine on the embedded default: everything in this process, on the memory backend (store
 * and coordinator). No Redis needed.
 *
 * @example
 * ```ts
 * const engine = createEmbeddedEngine();
 * const result = await engine.run(checkout, { orderId: 'o-1' });
 * ```
 */
export function createEmbeddedEngine(options: EmbeddedEngineOptions = {}): Engine {
  return createEngine({ ...options, store: options.store ?? new MemoryStore(), coordinator: options.coordinator ?? new MemoryCoordinator(options.clock ? { clock: options.clock } : {}) });
}
