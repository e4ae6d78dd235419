export * from './engine.js';
export * from './events.js';
export { silentLogger, childLogger } from './logger.js';
export * from './ports/index.js';
export * from './results.js';
export {
  eventLogger,
  logFields,
  logMessage,
  EVENT_LOG_LEVELS,
  type EventLoggerOptions,
  type LogLevel,
} from './event-logger.js';
export { type WorkEnd, type WorkHandle, type WorkScope } from './instrument.js';
export type { ResumeOptions, ResumeTarget } from './interrupt/resume.js';
export type { SweepReport } from './sweep.js';
