/**
 * The computed schedule inputs a `--module` gives, for `ts-reactor schedules add`: the
 * `scheduleInputs` of its `defineWorker(…)` default export, else its named `scheduleInputs`
 * export (`export const scheduleInputs = { name: fn }`), as `ts-reactor worker` reads them.
 *
 * @module
 */
import type { ScheduleInputFn } from '../schedules/types.js';
import { importModule } from './worker-load.js';
import { isWorkerDefinition } from './worker-module.js';

/** The module's computed schedule inputs (every value a function), or `{}` when it has none. @throws TypeError when they are not that; ModuleLoadError when the module does not load. */
export async function loadScheduleInputs(path: string): Promise<Record<string, ScheduleInputFn>> {
  const exports = await importModule(path);
  const defined = isWorkerDefinition(exports['default']) ? exports['default'].scheduleInputs : undefined;
  const inputs: unknown = defined ?? exports['scheduleInputs'];
  if (inputs === undefined) return {};
  if (inputs === null || typeof inputs !== 'object')
    throw new TypeError(`--module: ${path} exports a scheduleInputs that is not an object of functions`);
  for (const [name, fn] of Object.entries(inputs))
    if (typeof fn !== 'function') throw new TypeError(`--module: scheduleInputs.${name} in ${path} is not a function`);
  return inputs as Record<string, ScheduleInputFn>;
}
