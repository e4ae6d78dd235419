/**
 * The computed schedule inputs a `--module` exports (`export const scheduleInputs = { name: fn }`),
 * for `ts-reactor worker` and `ts-reactor schedules add`.
 *
 * @module
 */
import { pathToFileURL } from 'node:url';
import type { ScheduleInputFn } from '../schedules/types.js';

/** The `scheduleInputs` export of the module at `path` (every value a function), or `{}` when it has none. @throws TypeError when it is not that. */
export async function loadScheduleInputs(path: string): Promise<Record<string, ScheduleInputFn>> {
  const exports = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const inputs = exports['scheduleInputs'];
  if (inputs === undefined) return {};
  if (inputs === null || typeof inputs !== 'object')
    throw new TypeError(`--module: ${path} exports a scheduleInputs that is not an object of functions`);
  for (const [name, fn] of Object.entries(inputs))
    if (typeof fn !== 'function') throw new TypeError(`--module: scheduleInputs.${name} in ${path} is not a function`);
  return inputs as Record<string, ScheduleInputFn>;
}
