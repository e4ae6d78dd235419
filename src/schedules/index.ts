/**
 * Schedules: start a reactor on a cron expression or at a fixed interval (docs/time.md, "Schedules").
 *
 * @module
 */
export { Schedules, tickKey, type SchedulesDeps } from './service.js';
export { MemorySchedules, memoryScheduleBackend } from './memory.js';
export type { ScheduleBackend, TickHandler } from '../ports/schedules.js';
export {
  scheduleObservers,
  type RuntimeMiddleware,
  type ScheduleEvent,
  type ScheduleListener,
  type ScheduleObserver,
} from './events.js';
export { ON_TIME_MS } from './plan.js';
export { MIN_INTERVAL_MS } from './validate.js';
export type {
  CronSpec,
  MissedPolicy,
  ScheduleDefinition,
  ScheduleInfo,
  ScheduleInputFn,
  ScheduleOptions,
} from './types.js';
