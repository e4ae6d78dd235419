export * from './engine.js';
export * from './model/events.js';
export type { EventNotice, EventNoticeListener } from './model/event-notices.js';
export {
  DEFAULT_EVENT_LIST_LIMIT,
  MAX_EVENT_ID_LENGTH,
  MAX_EVENT_LIST_LIMIT,
  MAX_EVENT_PAYLOAD_BYTES,
} from './api/events.js';
export { silentLogger, childLogger } from './model/logger.js';
export * from '../ports/index.js';
export * from './model/results.js';
export {
  eventLogger,
  logFields,
  logMessage,
  EVENT_LOG_LEVELS,
  type EventLoggerOptions,
  type LogLevel,
} from './model/event-logger.js';
export { type WorkEnd, type WorkHandle, type WorkScope } from './model/instrument.js';
export type { ResumeOptions, ResumeTarget } from './api/interrupt/resume.js';
export type { SweepReport } from './jobs/sweep.js';
export { DEFAULT_MAX_TRACE_ENTRIES, MIN_TRACE_ENTRIES, type TraceSummary } from './model/trace-bound.js';
export type { RetryStepOptions, SkipStepOptions } from './api/steer.js';
export type { ForkOptions } from './api/fork.js';
