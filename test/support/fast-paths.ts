import type { Coordinator, CoordinatorFastPaths } from '../../src/ports/coordinator.js';

/**
 * The fast path `part` a coordinator offers (`Coordinator.fastPaths`), for a test that exercises
 * it directly; throws when the backend does not offer it.
 */
export function offered<K extends keyof CoordinatorFastPaths>(
  coordinator: Coordinator,
  part: K,
): NonNullable<CoordinatorFastPaths[K]> {
  const found = coordinator.fastPaths?.[part];
  if (found === undefined) throw new Error(`the coordinator offers no '${part}' fast path`);
  return found;
}
